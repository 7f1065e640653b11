// Package openai is a [model.Model] over the OpenAI Chat Completions API,
// built on github.com/openai/openai-go. It works with any server that speaks
// that API, such as Ollama or vLLM: point [WithBaseURL] at it.
//
// Mapping between the two vocabularies:
//
//   - [model.Request.System] and system-role messages become system messages.
//   - Tool results, which [model] keeps as tool_result blocks in a user
//     message, become one "tool" message each (with tool_call_id), placed
//     before the rest of that user message. A failed result's content is
//     prefixed with "Error: " so the model knows the call failed; the API has
//     no error flag.
//   - Tool calls become the assistant message's tool_calls; tools become
//     function tools whose parameters are [model.ToolSpec.InputSchema].
//   - Images become image_url parts (base64 images as data: URLs).
//   - Thinking and redacted_thinking blocks, which the API has no place for,
//     are left out of requests.
//   - [model.Request.MaxTokens] is sent as max_completion_tokens, or as the
//     older max_tokens with [WithLegacyMaxTokens].
//   - finish_reason maps to [model.StopReason]: stop is end_turn (tool_use if
//     the answer calls tools, as some compatible servers report "stop" for
//     tool calls; other if the model refused, as the Messages API's refusal
//     is), tool_calls is tool_use, length is max_tokens, anything else is
//     other. A refusal's text becomes the answer's text.
//   - Tool calls without an id (some compatible servers omit it) get
//     "call_<position>".
//
// Streaming uses server-sent events with stream_options.include_usage, and
// assembles tool call arguments by index with the shared [model.Accumulator].
//
// Retries are the SDK's: rate limits (429), server errors (5xx), 408, 409 and
// connection failures are retried [WithMaxRetries] times with exponential
// backoff, honouring Retry-After headers. A 429 saying the account's quota
// is used up (insufficient_quota) is not retried, and its error is not
// Retryable. Errors are [*model.Error] values.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/interludehq/interlude/internal/options"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/internal/genai"
	"github.com/interludehq/interlude/model/internal/sdkerr"
	"go.opentelemetry.io/otel/trace"
)

// DefaultModel is the model used unless [WithModel] says otherwise.
const DefaultModel = "gpt-4o-mini"

// Provider is the provider name in errors.
const Provider = "openai"

// Option configures a [Model].
type Option func(*config)

type config struct {
	options.Problems
	model  string
	legacy bool
	opts   []option.RequestOption
	client *http.Client
	tp     trace.TracerProvider
}

// WithBaseURL sets the API's base URL, such as "http://localhost:11434/v1"
// for Ollama. By default it is OpenAI's, or the OPENAI_BASE_URL environment
// variable.
func WithBaseURL(url string) Option {
	return func(c *config) {
		if _, ok := options.HTTPURL(url); !ok {
			c.Refuse("openai.WithBaseURL", "%q is not a base URL; give an http or https URL such as http://localhost:11434/v1", url)
			return
		}
		c.opts = append(c.opts, option.WithBaseURL(url))
	}
}

// WithAPIKey sets the API key, sent as a bearer token. By default it is the
// OPENAI_API_KEY environment variable.
func WithAPIKey(key string) Option {
	return func(c *config) {
		if key == "" {
			c.Refuse("openai.WithAPIKey", "the key is empty; give a key, or leave the option out to take it from the environment")
			return
		}
		c.opts = append(c.opts, option.WithAPIKey(key))
	}
}

// WithModel sets the model name sent with every request. The default is
// [DefaultModel].
func WithModel(name string) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.model, name, name != "", "openai.WithModel", "the model name is empty; give one, or leave the option out for DefaultModel")
	}
}

// WithHTTPClient sets the HTTP client requests go through (default
// http.DefaultClient).
func WithHTTPClient(client *http.Client) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.client, client, client != nil, "openai.WithHTTPClient", "the HTTP client is nil; leave the option out for http.DefaultClient")
	}
}

// WithTracerProvider makes the model trace its calls through tp (by default
// the global provider, otel.GetTracerProvider): a span per call following
// OpenTelemetry's GenAI conventions (operation, provider, request and response
// model, token usage, finish reasons), and a span per HTTP request, which
// carries the trace context to the provider (with the global propagator). A
// nil tp is the global provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMaxRetries sets how many times a failed request is retried (the SDK's
// default is 2). 0 disables retries; n must not be negative.
func WithMaxRetries(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.Refuse("openai.WithMaxRetries", "%d retries is negative; give 0 for none", n)
			return
		}
		c.opts = append(c.opts, option.WithMaxRetries(n))
	}
}

// WithLegacyMaxTokens sends [model.Request.MaxTokens] as max_tokens instead
// of max_completion_tokens, for older OpenAI-compatible servers.
func WithLegacyMaxTokens() Option {
	return func(c *config) { c.legacy = true }
}

// WithRequestOptions adds SDK request options to every request, for settings
// this package does not cover (headers, organization, retry delays, ...).
func WithRequestOptions(opts ...option.RequestOption) Option {
	return func(c *config) { c.opts = append(c.opts, opts...) }
}

// Model is a [model.Model] backed by the Chat Completions API. It is safe for
// concurrent use.
type Model struct {
	client oai.Client
	model  string
	legacy bool
	trace  *genai.Tracer
}

var _ model.Model = (*Model)(nil)

// New returns a model configured by opts. It refuses a bad option value with
// an interlude.ErrInvalidRequest error that names the option.
func New(opts ...Option) (*Model, error) {
	c := config{model: DefaultModel}
	for _, o := range opts {
		o(&c)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	sdkOpts := append([]option.RequestOption{option.WithMiddleware(quotaIsFinal), option.WithHTTPClient(genai.Client(c.client, c.tp))}, c.opts...)
	return &Model{client: oai.NewClient(sdkOpts...), model: c.model, legacy: c.legacy, trace: genai.New(c.tp, Provider)}, nil
}

// quotaCode is the error code of a 429 that says the account's quota or
// credit is used up: unlike a rate limit, it does not pass with time.
const quotaCode = "insufficient_quota"

// quotaIsFinal tells the SDK not to retry a 429 whose error is quotaCode.
func quotaIsFinal(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res.StatusCode != http.StatusTooManyRequests || res.Body == nil {
		return res, err
	}
	body, readErr := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	if readErr == nil && parseErrorBody(body).code() == quotaCode {
		res.Header.Set("X-Should-Retry", "false")
	}
	return res, nil
}

// errorBody is the API's error document.
type errorBody struct {
	Error struct {
		Code    any    `json:"code"` // a string, a number or null
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func parseErrorBody(data []byte) errorBody {
	var b errorBody
	_ = json.Unmarshal(data, &b)
	return b
}

// code returns the error's code, or its type when it has no code.
func (b errorBody) code() string {
	if b.Error.Code != nil {
		if code := fmt.Sprint(b.Error.Code); code != "" {
			return code
		}
	}
	return b.Error.Type
}

// ModelName returns the model name sent with every request.
func (m *Model) ModelName() string { return m.model }

// Generate sends req and returns the complete answer.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return m.trace.Generate(ctx, m.model, req, m.generate)
}

func (m *Model) generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	p, err := m.params(req)
	if err != nil {
		return nil, err
	}
	var raw *http.Response
	c, err := m.client.Chat.Completions.New(ctx, p, option.WithResponseInto(&raw))
	if err != nil {
		return nil, mapError(ctx, err, raw)
	}
	if len(c.Choices) == 0 {
		return nil, model.BadResponse(Provider, "the response has no choices", nil)
	}
	ch := c.Choices[0]
	var acc model.Accumulator
	text := ch.Message.Content
	if text == "" {
		text = ch.Message.Refusal
	}
	if err := acc.Add(model.TextDelta(text)); err != nil {
		return nil, model.BadResponse(Provider, err.Error(), err)
	}
	calls := 0
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", calls)
		}
		for _, chunk := range []model.Chunk{
			model.ToolCallStart(calls, id, tc.Function.Name),
			model.ToolCallDelta(calls, tc.Function.Arguments),
		} {
			if err := acc.Add(chunk); err != nil {
				return nil, model.BadResponse(Provider, err.Error(), err)
			}
		}
		calls++
	}
	genai.FinishReason(ctx, ch.FinishReason)
	return acc.Finish(Provider, stopReason(ch.FinishReason, calls > 0, ch.Message.Refusal != ""), usage(c.Usage), c.Model)
}

// Stream sends req with streaming on and yields the answer as it arrives.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return m.trace.Stream(ctx, m.model, req, m.stream)
}

func (m *Model) stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		p, err := m.params(req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		p.StreamOptions.IncludeUsage = param.NewOpt(true)
		var raw *http.Response
		stream := m.client.Chat.Completions.NewStreaming(ctx, p, option.WithResponseInto(&raw))
		defer stream.Close()

		var (
			acc       model.Accumulator
			u         model.Usage
			modelName string
			finish    string
			refused   bool
			calls     = map[int64]*call{}
			nextCall  int
		)
		emit := func(c model.Chunk) bool {
			if err := acc.Add(c); err != nil {
				yield(model.Chunk{}, model.BadResponse(Provider, err.Error(), err))
				return false
			}
			return yield(c, nil)
		}
		for stream.Next() {
			chunk := stream.Current()
			if chunk.Model != "" {
				modelName = chunk.Model
			}
			if chunk.Usage.PromptTokens != 0 || chunk.Usage.CompletionTokens != 0 {
				u = usage(chunk.Usage)
			}
			for _, ch := range chunk.Choices {
				if ch.Index != 0 {
					continue
				}
				refused = refused || ch.Delta.Refusal != ""
				if text := ch.Delta.Content + ch.Delta.Refusal; text != "" {
					if !emit(model.TextDelta(text)) {
						return
					}
				}
				for _, tc := range ch.Delta.ToolCalls {
					c, ok := calls[tc.Index]
					if !ok || (tc.ID != "" && c.id != "" && tc.ID != c.id) {
						c = &call{index: nextCall, id: tc.ID}
						nextCall++
						calls[tc.Index] = c
						id := tc.ID
						if id == "" {
							id = fmt.Sprintf("call_%d", c.index)
						}
						if !emit(model.ToolCallStart(c.index, id, tc.Function.Name)) {
							return
						}
					}
					if tc.Function.Arguments != "" {
						if !emit(model.ToolCallDelta(c.index, tc.Function.Arguments)) {
							return
						}
					}
				}
				if ch.FinishReason != "" {
					finish = ch.FinishReason
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(model.Chunk{}, mapError(ctx, err, raw))
			return
		}
		if finish == "" {
			yield(model.Chunk{}, model.BadResponse(Provider, "the stream ended before the model finished (no finish_reason)", nil))
			return
		}
		genai.FinishReason(ctx, finish)
		resp, err := acc.Finish(Provider, stopReason(finish, nextCall > 0, refused), u, modelName)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		yield(model.Done(resp), nil)
	}
}

type call struct {
	index int
	id    string
}

func usage(u oai.CompletionUsage) model.Usage {
	return model.Usage{InputTokens: int(u.PromptTokens), OutputTokens: int(u.CompletionTokens)}
}

func stopReason(finish string, hasCalls, refused bool) model.StopReason {
	switch finish {
	case "stop":
		switch {
		case hasCalls:
			return model.StopToolUse
		case refused:
			return model.StopOther
		}
		return model.StopEndTurn
	case "tool_calls", "function_call":
		return model.StopToolUse
	case "length":
		return model.StopMaxTokens
	case "":
		return ""
	}
	return model.StopOther
}

// params translates req into the SDK's request parameters.
func (m *Model) params(req *model.Request) (oai.ChatCompletionNewParams, error) {
	p := oai.ChatCompletionNewParams{Model: shared.ChatModel(m.model)}
	if err := req.Validate(); err != nil {
		return p, &model.Error{Provider: Provider, Message: err.Error(), Kind: model.ErrInvalidRequest, Err: err}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, oai.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case model.RoleSystem:
			if text := msg.Text(); text != "" {
				p.Messages = append(p.Messages, oai.SystemMessage(text))
			}
		case model.RoleUser:
			var parts []oai.ChatCompletionContentPartUnionParam
			for _, b := range msg.Content {
				switch b.Type {
				case model.BlockToolResult:
					text := b.ContentText()
					if b.IsError {
						text = "Error: " + text
					}
					p.Messages = append(p.Messages, oai.ToolMessage(text, b.ToolUseID))
				case model.BlockText:
					if b.Text != "" {
						parts = append(parts, oai.TextContentPart(b.Text))
					}
				case model.BlockImage:
					url, err := imageURL(b)
					if err != nil {
						return p, fmt.Errorf("openai: message %d: %w", i, err)
					}
					parts = append(parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: url}))
				}
			}
			switch {
			case len(parts) == 1 && parts[0].OfText != nil:
				p.Messages = append(p.Messages, oai.UserMessage(parts[0].OfText.Text))
			case len(parts) > 0:
				p.Messages = append(p.Messages, oai.UserMessage(parts))
			}
		case model.RoleAssistant:
			var a oai.ChatCompletionAssistantMessageParam
			if text := msg.Text(); text != "" {
				a.Content.OfString = param.NewOpt(text)
			}
			for _, b := range msg.ToolUses() {
				args := strings.TrimSpace(string(b.Input))
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
						ID:       b.ID,
						Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: args},
					},
				})
			}
			if param.IsOmitted(a.Content.OfString) && len(a.ToolCalls) == 0 {
				continue
			}
			p.Messages = append(p.Messages, oai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return p, fmt.Errorf("openai: message %d has unknown role %q", i, msg.Role)
		}
	}
	for _, t := range req.Tools {
		schema := map[string]any{"type": "object", "properties": map[string]any{}}
		if len(strings.TrimSpace(string(t.InputSchema))) > 0 {
			schema = nil
			if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema == nil {
				return p, fmt.Errorf("openai: tool %q: input schema is not a JSON object", t.Name)
			}
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, oai.ChatCompletionFunctionTool(def))
	}
	if req.MaxTokens > 0 {
		if m.legacy {
			p.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			p.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	return p, nil
}

func imageURL(b model.Block) (string, error) {
	switch s := b.Source; {
	case s == nil:
		return "", errors.New("image block without a source")
	case s.Type == model.ImageURL:
		return s.URL, nil
	case s.Type == model.ImageBase64:
		return "data:" + s.MediaType + ";base64," + s.Data, nil
	default:
		return "", fmt.Errorf("unknown image source type %q", s.Type)
	}
}

// mapError turns an SDK error into a *model.Error. Cancellation is returned
// as the context's error.
func mapError(ctx context.Context, err error, raw *http.Response) error {
	if cerr := sdkerr.Cancelled(ctx, err); cerr != nil {
		return cerr
	}
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		code := apiErr.Code
		if code == "" {
			code = apiErr.Type
		}
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		e := model.StatusError(Provider, apiErr.StatusCode, code, msg)
		e.Err = err
		if code == quotaCode {
			e.Retryable = false
		}
		return e
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		return eventError(streamErr)
	}
	return sdkerr.Other(Provider, err, raw)
}

// eventError classifies an error event received in the middle of a stream.
func eventError(se *ssestream.StreamError) *model.Error {
	body := parseErrorBody(se.Event.Data)
	code := body.code()
	msg := body.Error.Message
	if msg == "" {
		msg = strings.TrimSpace(string(se.Event.Data))
	}
	e := &model.Error{Provider: Provider, Code: code, Message: msg, Kind: model.ErrUnavailable, Retryable: true, Err: se}
	// The code is the more precise, but may say nothing of the class (such as
	// context_length_exceeded), which the type then does.
	switch c := strings.ToLower(code + " " + body.Error.Type); {
	case strings.Contains(c, "rate_limit"):
		e.Kind = model.ErrRateLimited
	case strings.Contains(c, "api_key") || strings.Contains(c, "auth"):
		e.Kind, e.Retryable = model.ErrAuth, false
	case strings.Contains(c, "invalid_request"):
		e.Kind, e.Retryable = model.ErrInvalidRequest, false
	}
	return e
}
