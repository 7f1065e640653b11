// Package scripted provides a deterministic [model.Model] for tests and
// demos: it answers with turns written in advance, or with a function of the
// transcript.
//
// The turn answered is chosen from the transcript, not from a counter: turn k
// (counted from 0) answers a request whose messages hold k assistant
// messages. A process that restarts in the middle of a conversation, or a
// step that is re-run, therefore gets the same answer again; this is what
// durable agents need from a test model.
//
// Tool calls get deterministic ids, "call_<turn>_<position>", so a re-run
// produces the same ids too.
//
// Like a provider, a scripted model refuses a request that has no messages,
// or that fails [model.Request.Validate], with a [*model.Error] of kind
// [model.ErrInvalidRequest]; the answering function is not called.
//
// Usage numbers are word counts: the words of the system prompt and of every
// text and tool result in the request, and the words of the answer's text
// plus one per tool call.
package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/interludehq/interlude/model"
)

// Name is the model name scripted responses report.
const Name = "scripted"

// ErrScriptEnded is returned when a request asks for a turn past the end of
// the script.
var ErrScriptEnded = errors.New("scripted: the script has no turn left")

// ToolCall is one tool call of a scripted turn.
type ToolCall struct {
	// Name is the tool called.
	Name string
	// Input is the call's arguments, a JSON object.
	Input json.RawMessage
}

// Call returns a tool call of the named tool. input is the call's arguments:
// a json.RawMessage, []byte or string is taken as JSON text; anything else
// (a map, a struct) is encoded with encoding/json; nil means {}. Call panics
// if input is not, or does not encode to, a JSON object: scripts are written
// by programmers, and a broken one should fail loudly where it is written.
func Call(name string, input any) ToolCall {
	var raw []byte
	switch v := input.(type) {
	case nil:
		raw = []byte(`{}`)
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	case string:
		raw = []byte(v)
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			panic(fmt.Sprintf("scripted.Call(%q): cannot encode input: %v", name, err))
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		panic(fmt.Sprintf("scripted.Call(%q): input must be a JSON object, got %s", name, raw))
	}
	return ToolCall{Name: name, Input: append(json.RawMessage(nil), raw...)}
}

// Turn is one scripted answer.
type Turn struct {
	text  string
	calls []ToolCall
	err   error
}

// Text returns a turn that answers with text and ends the model's turn.
func Text(text string) Turn { return Turn{text: text} }

// Calls returns a turn that calls the given tools, in parallel.
func Calls(calls ...ToolCall) Turn { return Turn{calls: calls} }

// TextAndCalls returns a turn that says text, then calls the given tools.
func TextAndCalls(text string, calls ...ToolCall) Turn { return Turn{text: text, calls: calls} }

// Fail returns a turn that fails with err. The transcript does not grow on a
// failure, so every request that reaches this turn fails the same way.
func Fail(err error) Turn { return Turn{err: err} }

// Model is a scripted model. It is safe for concurrent use.
type Model struct {
	answer func(ctx context.Context, req *model.Request, turn int) (model.Message, error)
	// reads: answer reads the request, so it gets a copy it may keep or
	// change (a script only counts the request's assistant turns)
	reads bool

	mu       sync.Mutex
	requests []*model.Request
}

var _ model.Model = (*Model)(nil)

// New returns a model that answers request k (the one whose transcript holds
// k assistant messages) with turns[k], and fails with ErrScriptEnded past the
// end.
func New(turns ...Turn) *Model {
	turns = append([]Turn(nil), turns...)
	return &Model{answer: func(_ context.Context, req *model.Request, turn int) (model.Message, error) {
		if turn >= len(turns) {
			return model.Message{}, fmt.Errorf("%w: the request's transcript holds %d assistant messages, so it asks for turn %d, but the script has %d turns; add turns to scripted.New",
				ErrScriptEnded, turn, turn+1, len(turns))
		}
		t := turns[turn]
		if t.err != nil {
			return model.Message{}, t.err
		}
		msg := model.Message{Role: model.RoleAssistant}
		if t.text != "" {
			msg.Content = append(msg.Content, model.TextBlock(t.text))
		}
		for _, c := range t.calls {
			msg.Content = append(msg.Content, model.ToolUse("", c.Name, c.Input))
		}
		return msg, nil
	}}
}

// Func returns a model that answers with f, a function of the request. The
// answer's role is set to assistant, and tool calls without an id get the
// deterministic id "call_<turn>_<position>". The answer may hold only text
// and tool_use blocks.
func Func(f func(ctx context.Context, req *model.Request) (model.Message, error)) *Model {
	return &Model{reads: true, answer: func(ctx context.Context, req *model.Request, _ int) (model.Message, error) {
		return f(ctx, req)
	}}
}

// TurnIndex returns the turn a request asks for: the number of assistant
// messages in its transcript.
func TurnIndex(req *model.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == model.RoleAssistant {
			n++
		}
	}
	return n
}

// Calls returns how many times Generate and Stream have been called.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// Requests returns copies of the requests received, in order.
func (m *Model) Requests() []*model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*model.Request, len(m.requests))
	for i, r := range m.requests {
		out[i] = r.Clone()
	}
	return out
}

func (m *Model) record(req *model.Request) {
	c := req.Clone()
	if c == nil {
		c = &model.Request{}
	}
	m.mu.Lock()
	m.requests = append(m.requests, c)
	m.mu.Unlock()
}

// Generate answers req with the turn its transcript asks for.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	m.record(req)
	msg, stop, usage, err := m.reply(ctx, req)
	if err != nil {
		return nil, err
	}
	return &model.Response{Message: msg, Usage: usage, StopReason: stop, Model: Name}, nil
}

// Stream answers like Generate, as chunks: the text word by word, each tool
// call as a start and a few pieces of arguments, then the final chunk.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	m.record(req)
	return func(yield func(model.Chunk, error) bool) {
		msg, stop, usage, err := m.reply(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		var acc model.Accumulator
		emit := func(c model.Chunk) bool {
			if err := ctx.Err(); err != nil {
				yield(model.Chunk{}, err)
				return false
			}
			if err := acc.Add(c); err != nil {
				yield(model.Chunk{}, err)
				return false
			}
			return yield(c, nil)
		}
		call := 0
		for _, b := range msg.Content {
			switch b.Type {
			case model.BlockText:
				for _, w := range words(b.Text) {
					if !emit(model.TextDelta(w)) {
						return
					}
				}
			case model.BlockToolUse:
				if !emit(model.ToolCallStart(call, b.ID, b.Name)) {
					return
				}
				for _, p := range pieces(string(b.Input), 3) {
					if !emit(model.ToolCallDelta(call, p)) {
						return
					}
				}
				call++
			}
		}
		resp, err := acc.Finish(Name, stop, usage, Name)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if err := ctx.Err(); err != nil {
			yield(model.Chunk{}, err)
			return
		}
		yield(model.Done(resp), nil)
	}
}

// reply computes the answer to req, with ids, stop reason and usage.
func (m *Model) reply(ctx context.Context, req *model.Request) (model.Message, model.StopReason, model.Usage, error) {
	if err := ctx.Err(); err != nil {
		return model.Message{}, "", model.Usage{}, err
	}
	if err := check(req); err != nil {
		return model.Message{}, "", model.Usage{}, err
	}
	turn := TurnIndex(req)
	in := req
	if m.reads {
		in = req.Clone()
	}
	msg, err := m.answer(ctx, in, turn)
	if err != nil {
		return model.Message{}, "", model.Usage{}, err
	}
	msg = msg.Clone()
	msg.Role = model.RoleAssistant
	usage := model.Usage{InputTokens: countWords(req.System)}
	for _, rm := range req.Messages {
		for _, b := range rm.Content {
			switch b.Type {
			case model.BlockText:
				usage.InputTokens += countWords(b.Text)
			case model.BlockToolResult:
				usage.InputTokens += countWords(b.ContentText())
			}
		}
	}
	calls := 0
	for i := range msg.Content {
		b := &msg.Content[i]
		switch b.Type {
		case model.BlockText:
			usage.OutputTokens += countWords(b.Text)
		case model.BlockToolUse:
			if b.ID == "" {
				b.ID = fmt.Sprintf("call_%d_%d", turn, calls)
			}
			*b = model.ToolUse(b.ID, b.Name, b.Input)
			if err := (model.Message{Role: model.RoleAssistant, Content: []model.Block{*b}}).Validate(); err != nil {
				return model.Message{}, "", model.Usage{}, fmt.Errorf("scripted: turn %d: %w", turn, err)
			}
			calls++
			usage.OutputTokens++
		default:
			return model.Message{}, "", model.Usage{}, fmt.Errorf("scripted: turn %d: an answer may hold text and tool_use blocks, not %q", turn, b.Type)
		}
	}
	stop := model.StopEndTurn
	if calls > 0 {
		stop = model.StopToolUse
	}
	return msg, stop, usage, nil
}

// check refuses what a provider would: a request without messages, or one that
// fails Validate.
func check(req *model.Request) error {
	if req == nil || len(req.Messages) == 0 {
		return &model.Error{Provider: Name, Kind: model.ErrInvalidRequest,
			Message: "the request has no messages; a model answers a conversation, so send at least one"}
	}
	if err := req.Validate(); err != nil {
		return &model.Error{Provider: Name, Kind: model.ErrInvalidRequest, Message: err.Error(), Err: err}
	}
	return nil
}

// countWords counts the words of s as strings.Fields splits them.
func countWords(s string) int {
	n, inSpace := 0, true
	for _, r := range s {
		space := unicode.IsSpace(r)
		if !space && inSpace {
			n++
		}
		inSpace = space
	}
	return n
}

// words splits s into pieces that each start with the whitespace before a
// word; they concatenate back to s.
func words(s string) []string {
	var out []string
	start := 0
	inSpace := true
	for i, r := range s {
		space := unicode.IsSpace(r)
		if space && !inSpace && i > start {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// pieces splits s into at most n pieces of about equal size, on rune
// boundaries.
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	size := (len(s) + n - 1) / n
	var out []string
	for len(s) > 0 {
		end := min(size, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
