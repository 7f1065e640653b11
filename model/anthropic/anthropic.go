// Package anthropic is a [model.Model] over the Anthropic Messages API,
// built on github.com/anthropics/anthropic-sdk-go.
//
// The [model] vocabulary follows the Messages API closely, so the mapping is
// direct: [model.Request.System] is the system prompt (system-role messages
// are appended to it, as the API has no such role in the conversation);
// text, tool_use, tool_result (with is_error) and image blocks keep their
// shape, with tool results moved to the front of their user message as the
// API requires (a failed result without text says so in words, as the API
// refuses an empty one); text that is empty or only whitespace, which the API
// refuses, is left out; tools carry their input_schema. stop_reason keeps
// its value (end_turn, tool_use, max_tokens, stop_sequence); anything else,
// such as refusal or pause_turn, is [model.StopOther]. Server-tool blocks are
// not part of the vocabulary and are dropped from answers, generated or
// streamed.
//
// Extended thinking is turned on with [WithRequestOptions] (for example
// option.WithJSONSet("thinking", ...)). Thinking and redacted_thinking
// blocks are kept in the answer in the order they came, as
// [model.BlockThinking] (thinking and signature) and
// [model.BlockRedactedThinking] (data), and sent back exactly as received, as
// the API requires for the turn whose tool results follow. A thinking block
// without a signature (an answer cut short) cannot be checked by the API and
// is left out of requests.
//
// Input tokens in [model.Usage] include cache reads and writes.
//
// Streaming uses the SDK's event stream (message_start, content_block_start,
// content_block_delta with text_delta, input_json_delta, thinking_delta and
// signature_delta, message_delta,
// message_stop) assembled with the shared [model.Accumulator]. An error event
// in the middle of a stream (such as overloaded_error) is reported as a
// [*model.Error] classified by its type.
//
// Retries are the SDK's: rate limits (429), server errors (5xx, 529
// overloaded), 408, 409 and connection failures are retried [WithMaxRetries]
// times with exponential backoff, honouring Retry-After headers.
//
// Credentials are the SDK's: [WithAPIKey], or else the SDK's default chain
// (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, profiles).
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/interludehq/interlude/internal/options"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/internal/genai"
	"github.com/interludehq/interlude/model/internal/sdkerr"
	"go.opentelemetry.io/otel/trace"
)

// DefaultModel is the model used unless [WithModel] says otherwise.
const DefaultModel = "claude-sonnet-4-5"

// DefaultMaxTokens caps answers when neither the request nor [WithMaxTokens]
// says otherwise; the API requires a cap.
const DefaultMaxTokens = 1024

// Provider is the provider name in errors.
const Provider = "anthropic"

// Option configures a [Model].
type Option func(*config)

type config struct {
	options.Problems
	model     string
	maxTokens int
	opts      []option.RequestOption
	client    *http.Client
	tp        trace.TracerProvider
}

// WithBaseURL sets the API's base URL. By default it is Anthropic's, or the
// ANTHROPIC_BASE_URL environment variable.
func WithBaseURL(url string) Option {
	return func(c *config) {
		if _, ok := options.HTTPURL(url); !ok {
			c.Refuse("anthropic.WithBaseURL", "%q is not a base URL; give an http or https URL such as https://api.anthropic.com", url)
			return
		}
		c.opts = append(c.opts, option.WithBaseURL(url))
	}
}

// WithAPIKey sets the API key. By default the SDK looks for credentials in
// the environment (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, profiles).
func WithAPIKey(key string) Option {
	return func(c *config) {
		if key == "" {
			c.Refuse("anthropic.WithAPIKey", "the key is empty; give a key, or leave the option out to take it from the environment")
			return
		}
		c.opts = append(c.opts, option.WithAPIKey(key))
	}
}

// WithModel sets the model name sent with every request. The default is
// [DefaultModel].
func WithModel(name string) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.model, name, name != "", "anthropic.WithModel", "the model name is empty; give one, or leave the option out for DefaultModel")
	}
}

// WithMaxTokens sets the answer cap used when a request has no MaxTokens.
// The default is [DefaultMaxTokens]; n must be positive.
func WithMaxTokens(n int) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.maxTokens, n, n > 0, "anthropic.WithMaxTokens", "%d tokens is not a cap; give a positive number", n)
	}
}

// WithHTTPClient sets the HTTP client requests go through (default
// http.DefaultClient).
func WithHTTPClient(client *http.Client) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.client, client, client != nil, "anthropic.WithHTTPClient", "the HTTP client is nil; leave the option out for http.DefaultClient")
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
			c.Refuse("anthropic.WithMaxRetries", "%d retries is negative; give 0 for none", n)
			return
		}
		c.opts = append(c.opts, option.WithMaxRetries(n))
	}
}

// WithRequestOptions adds SDK request options to every request, for settings
// this package does not cover (headers, beta features, timeouts, ...).
func WithRequestOptions(opts ...option.RequestOption) Option {
	return func(c *config) { c.opts = append(c.opts, opts...) }
}

// Model is a [model.Model] backed by the Messages API. It is safe for
// concurrent use.
type Model struct {
	client    sdk.Client
	model     string
	maxTokens int
	trace     *genai.Tracer
}

var _ model.Model = (*Model)(nil)

// New returns a model configured by opts. It refuses a bad option value with
// an interlude.ErrInvalidRequest error that names the option.
func New(opts ...Option) (*Model, error) {
	c := config{model: DefaultModel, maxTokens: DefaultMaxTokens}
	for _, o := range opts {
		o(&c)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	sdkOpts := append([]option.RequestOption{option.WithHTTPClient(genai.Client(c.client, c.tp))}, c.opts...)
	return &Model{client: sdk.NewClient(sdkOpts...), model: c.model, maxTokens: c.maxTokens, trace: genai.New(c.tp, Provider)}, nil
}

// ModelName returns the model name sent with every request.
func (m *Model) ModelName() string { return m.model }

// Generate sends req and returns the complete answer.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return m.trace.Generate(ctx, m.model, req, m.generate)
}

func (m *Model) generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	p, opts, err := m.params(req)
	if err != nil {
		return nil, err
	}
	var raw *http.Response
	msg, err := m.client.Messages.New(ctx, p, append(opts, option.WithResponseInto(&raw))...)
	if err != nil {
		return nil, mapError(ctx, err, raw)
	}
	if msg.Type != "" && msg.Type != "message" || msg.Role != "assistant" {
		return nil, model.BadResponse(Provider, fmt.Sprintf("expected an assistant message, got type %q role %q", msg.Type, msg.Role), nil)
	}
	var acc model.Accumulator
	calls, thoughts := 0, 0
	for _, b := range msg.Content {
		var chunks []model.Chunk
		switch b.Type {
		case "text":
			chunks = []model.Chunk{model.TextDelta(b.Text)}
		case "tool_use":
			chunks = []model.Chunk{model.ToolCallStart(calls, b.ID, b.Name), model.ToolCallDelta(calls, string(b.Input))}
			calls++
		case "thinking":
			chunks = []model.Chunk{model.ThinkingDelta(thoughts, b.Thinking), model.SignatureDelta(thoughts, b.Signature)}
			thoughts++
		case "redacted_thinking":
			chunks = []model.Chunk{model.RedactedThinking(b.Data)}
		}
		for _, c := range chunks {
			if err := acc.Add(c); err != nil {
				return nil, model.BadResponse(Provider, err.Error(), err)
			}
		}
	}
	genai.FinishReason(ctx, string(msg.StopReason))
	return acc.Finish(Provider, stopReason(string(msg.StopReason)), usage(msg.Usage), string(msg.Model))
}

// usage counts the input tokens, cache reads and writes included, and the
// output tokens.
func usage(u sdk.Usage) model.Usage {
	return model.Usage{
		InputTokens:  int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
		OutputTokens: int(u.OutputTokens),
	}
}

// Stream sends req with streaming on and yields the answer as it arrives.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return m.trace.Stream(ctx, m.model, req, m.stream)
}

func (m *Model) stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		p, opts, err := m.params(req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		var raw *http.Response
		stream := m.client.Messages.NewStreaming(ctx, p, append(opts, option.WithResponseInto(&raw))...)
		defer stream.Close()

		var (
			acc       model.Accumulator
			u         sdk.Usage
			modelName string
			stop      string
			stopped   bool
			calls     = map[int64]int{}    // content block index -> tool call index
			thoughts  = map[int64]int{}    // content block index -> thinking block index
			startArgs = map[int64]string{} // input given at content_block_start, until a delta comes
			dropped   = map[int64]bool{}   // content blocks outside the vocabulary (server tools)
		)
		emit := func(c model.Chunk) bool {
			if err := acc.Add(c); err != nil {
				yield(model.Chunk{}, model.BadResponse(Provider, err.Error(), err))
				return false
			}
			return yield(c, nil)
		}
		for stream.Next() {
			ev := stream.Current()
			switch ev.Type {
			case "message_start":
				modelName = string(ev.Message.Model)
				u = ev.Message.Usage
			case "content_block_start":
				cb := ev.ContentBlock
				switch cb.Type {
				case "text":
					if cb.Text != "" && !emit(model.TextDelta(cb.Text)) {
						return
					}
				case "tool_use":
					n := len(calls)
					calls[ev.Index] = n
					if !emit(model.ToolCallStart(n, cb.ID, cb.Name)) {
						return
					}
					// The API starts a tool call with an empty input and streams
					// it in deltas; a server that sends it whole at the start
					// is honoured at content_block_stop.
					if b, err := json.Marshal(cb.Input); err == nil && cb.Input != nil {
						startArgs[ev.Index] = string(b)
					}
				case "thinking":
					n := len(thoughts)
					thoughts[ev.Index] = n
					if !emit(model.ThinkingDelta(n, cb.Thinking)) {
						return
					}
					if cb.Signature != "" && !emit(model.SignatureDelta(n, cb.Signature)) {
						return
					}
				case "redacted_thinking":
					if !emit(model.RedactedThinking(cb.Data)) {
						return
					}
				default:
					dropped[ev.Index] = true
				}
			case "content_block_delta":
				switch ev.Delta.Type {
				case "text_delta":
					if ev.Delta.Text != "" && !emit(model.TextDelta(ev.Delta.Text)) {
						return
					}
				case "input_json_delta":
					n, ok := calls[ev.Index]
					if !ok && dropped[ev.Index] {
						continue // a server tool's input, dropped like its block
					}
					if !ok {
						yield(model.Chunk{}, model.BadResponse(Provider, fmt.Sprintf("input_json_delta for content block %d, which is not a tool call", ev.Index), nil))
						return
					}
					delete(startArgs, ev.Index)
					if ev.Delta.PartialJSON != "" && !emit(model.ToolCallDelta(n, ev.Delta.PartialJSON)) {
						return
					}
				case "thinking_delta", "signature_delta":
					n, ok := thoughts[ev.Index]
					if !ok {
						yield(model.Chunk{}, model.BadResponse(Provider, fmt.Sprintf("%s for content block %d, which is not a thinking block", ev.Delta.Type, ev.Index), nil))
						return
					}
					c := model.ThinkingDelta(n, ev.Delta.Thinking)
					if ev.Delta.Type == "signature_delta" {
						c = model.SignatureDelta(n, ev.Delta.Signature)
					}
					if (c.Text != "" || c.Signature != "") && !emit(c) {
						return
					}
				}
			case "content_block_stop":
				if args, ok := startArgs[ev.Index]; ok {
					delete(startArgs, ev.Index)
					if args != "{}" && !emit(model.ToolCallDelta(calls[ev.Index], args)) {
						return
					}
				}
			case "message_delta":
				if ev.Delta.StopReason != "" {
					stop = string(ev.Delta.StopReason)
				}
				// Its counts are totals for the whole message; one it leaves
				// out (or sends as null) keeps message_start's value.
				du := ev.Usage
				if du.JSON.OutputTokens.Valid() {
					u.OutputTokens = du.OutputTokens
				}
				if du.JSON.InputTokens.Valid() {
					u.InputTokens = du.InputTokens
				}
				if du.JSON.CacheCreationInputTokens.Valid() {
					u.CacheCreationInputTokens = du.CacheCreationInputTokens
				}
				if du.JSON.CacheReadInputTokens.Valid() {
					u.CacheReadInputTokens = du.CacheReadInputTokens
				}
			case "message_stop":
				stopped = true
			}
		}
		if err := stream.Err(); err != nil {
			yield(model.Chunk{}, mapError(ctx, err, raw))
			return
		}
		if !stopped {
			yield(model.Chunk{}, model.BadResponse(Provider, "the stream ended before message_stop", nil))
			return
		}
		genai.FinishReason(ctx, stop)
		resp, err := acc.Finish(Provider, stopReason(stop), usage(u), modelName)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		yield(model.Done(resp), nil)
	}
}

func stopReason(s string) model.StopReason {
	switch s {
	case "end_turn":
		return model.StopEndTurn
	case "tool_use":
		return model.StopToolUse
	case "max_tokens":
		return model.StopMaxTokens
	case "stop_sequence":
		return model.StopSequence
	case "":
		return ""
	}
	return model.StopOther
}

// params translates req into the SDK's request parameters, plus request
// options for what the parameters do not cover.
func (m *Model) params(req *model.Request) (sdk.MessageNewParams, []option.RequestOption, error) {
	p := sdk.MessageNewParams{Model: sdk.Model(m.model), MaxTokens: int64(m.maxTokens)}
	if err := req.Validate(); err != nil {
		return p, nil, &model.Error{Provider: Provider, Message: err.Error(), Kind: model.ErrInvalidRequest, Err: err}
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		p.System = append(p.System, sdk.TextBlockParam{Text: req.System})
	}
	for i, msg := range req.Messages {
		var blocks []sdk.ContentBlockParamUnion
		for _, b := range msg.Content {
			if msg.Role == model.RoleUser && b.Type == model.BlockToolResult {
				blocks = append(blocks, toolResult(b))
			}
		}
		for _, b := range msg.Content {
			switch b.Type {
			case model.BlockText:
				if sendable(b.Text) {
					blocks = append(blocks, sdk.NewTextBlock(b.Text))
				}
			case model.BlockToolUse:
				if msg.Role == model.RoleAssistant {
					input := b.Input
					if len(strings.TrimSpace(string(input))) == 0 {
						input = json.RawMessage(`{}`)
					}
					blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{ID: b.ID, Name: b.Name, Input: input}})
				}
			case model.BlockThinking:
				if msg.Role == model.RoleAssistant && b.Signature != "" {
					blocks = append(blocks, sdk.NewThinkingBlock(b.Signature, b.Thinking))
				}
			case model.BlockRedactedThinking:
				if msg.Role == model.RoleAssistant {
					blocks = append(blocks, sdk.NewRedactedThinkingBlock(b.Data))
				}
			case model.BlockImage:
				img, err := image(b)
				if err != nil {
					return p, nil, fmt.Errorf("anthropic: message %d: %w", i, err)
				}
				blocks = append(blocks, sdk.ContentBlockParamUnion{OfImage: img})
			}
		}
		switch msg.Role {
		case model.RoleSystem:
			if text := msg.Text(); text != "" {
				p.System = append(p.System, sdk.TextBlockParam{Text: text})
			}
		case model.RoleUser:
			if len(blocks) > 0 {
				p.Messages = append(p.Messages, sdk.NewUserMessage(blocks...))
			}
		case model.RoleAssistant:
			if len(blocks) > 0 {
				p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
			}
		default:
			return p, nil, fmt.Errorf("anthropic: message %d has unknown role %q", i, msg.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t)
		if err != nil {
			return p, nil, err
		}
		tp := &sdk.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: tp})
	}
	var opts []option.RequestOption
	if req.Temperature != nil {
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	return p, opts, nil
}

// sendable reports whether a text block may be sent: the API refuses text
// blocks that are empty or hold only whitespace.
func sendable(text string) bool { return strings.TrimSpace(text) != "" }

// emptyFailure is the content sent for a failed tool result that has none,
// which the API refuses.
const emptyFailure = "The tool call failed without a message."

func toolResult(b model.Block) sdk.ContentBlockParamUnion {
	r := &sdk.ToolResultBlockParam{ToolUseID: b.ToolUseID}
	if b.IsError {
		r.IsError = param.NewOpt(true)
	}
	for _, c := range b.Content {
		switch c.Type {
		case model.BlockText:
			if sendable(c.Text) {
				r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: c.Text}})
			}
		case model.BlockImage:
			if img, err := image(c); err == nil {
				r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfImage: img})
			}
		}
	}
	if b.IsError && len(r.Content) == 0 {
		r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: emptyFailure}})
	}
	return sdk.ContentBlockParamUnion{OfToolResult: r}
}

func image(b model.Block) (*sdk.ImageBlockParam, error) {
	switch s := b.Source; {
	case s == nil:
		return nil, errors.New("image block without a source")
	case s.Type == model.ImageURL:
		return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfURL: &sdk.URLImageSourceParam{URL: s.URL}}}, nil
	case s.Type == model.ImageBase64:
		return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
			Data: s.Data, MediaType: sdk.Base64ImageSourceMediaType(s.MediaType),
		}}}, nil
	default:
		return nil, fmt.Errorf("unknown image source type %q", s.Type)
	}
}

// inputSchema splits a JSON Schema into the SDK's fields: properties and
// required get their own, everything else but "type" rides along as extra
// fields.
func inputSchema(t model.ToolSpec) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(strings.TrimSpace(string(t.InputSchema))) == 0 {
		s.Properties = map[string]any{}
		return s, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(t.InputSchema, &fields); err != nil || fields == nil {
		return s, fmt.Errorf("anthropic: tool %q: input schema is not a JSON object", t.Name)
	}
	for k, v := range fields {
		var err error
		switch k {
		case "type":
			var typ string
			if json.Unmarshal(v, &typ) != nil || typ != "object" {
				return s, fmt.Errorf("anthropic: tool %q: input schema must have type \"object\"", t.Name)
			}
		case "properties":
			var props any
			err = json.Unmarshal(v, &props)
			s.Properties = props
		case "required":
			err = json.Unmarshal(v, &s.Required)
		default:
			var x any
			err = json.Unmarshal(v, &x)
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = x
		}
		if err != nil {
			return s, fmt.Errorf("anthropic: tool %q: input schema field %q: %w", t.Name, k, err)
		}
	}
	return s, nil
}

// mapError turns an SDK error into a *model.Error. Cancellation is returned
// as the context's error.
func mapError(ctx context.Context, err error, raw *http.Response) error {
	if cerr := sdkerr.Cancelled(ctx, err); cerr != nil {
		return cerr
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		code := string(apiErr.Type())
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		var e *model.Error
		if apiErr.StatusCode >= 400 {
			e = model.StatusError(Provider, apiErr.StatusCode, code, msg)
		} else {
			// An error event inside a stream that started well.
			e = typeError(code, msg)
		}
		e.Err = err
		return e
	}
	return sdkerr.Other(Provider, err, raw)
}

// typeError classifies an error by the API's error type alone.
func typeError(typ, msg string) *model.Error {
	e := &model.Error{Provider: Provider, Code: typ, Message: msg}
	switch typ {
	case "rate_limit_error":
		e.Kind, e.Retryable = model.ErrRateLimited, true
	case "authentication_error", "permission_error":
		e.Kind = model.ErrAuth
	case "invalid_request_error", "not_found_error", "request_too_large":
		e.Kind = model.ErrInvalidRequest
	default: // overloaded_error, api_error, timeout_error, unknown
		e.Kind, e.Retryable = model.ErrUnavailable, true
	}
	return e
}
