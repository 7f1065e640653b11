package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
)

// Model is a language model that answers a conversation, possibly with tool
// calls. Implementations are safe for concurrent use.
type Model interface {
	// Generate answers req with one complete response.
	Generate(ctx context.Context, req *Request) (*Response, error)
	// Stream answers req as a sequence of chunks. A successful stream ends
	// with a ChunkDone chunk carrying the complete response; a failed one
	// ends with a non-nil error. Stopping the iteration early releases the
	// underlying connection.
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// ToolSpec describes a tool the model may call.
type ToolSpec struct {
	// Name is how the model refers to the tool.
	Name string `json:"name"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the tool's input, an object schema.
	// Empty means the tool takes no arguments.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Request is what a [Model] is asked.
type Request struct {
	// System is the system prompt.
	System string `json:"system,omitempty"`
	// Messages is the conversation so far, oldest first.
	Messages []Message `json:"messages"`
	// Tools are the tools the model may call.
	Tools []ToolSpec `json:"tools,omitempty"`
	// MaxTokens caps the length of the answer; 0 leaves it to the provider's
	// default.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Temperature, when set, controls sampling randomness.
	Temperature *float64 `json:"temperature,omitempty"`
}

// Clone returns a deep copy of r.
func (r *Request) Clone() *Request {
	if r == nil {
		return nil
	}
	c := &Request{System: r.System, MaxTokens: r.MaxTokens}
	if r.Messages != nil {
		var s slab
		for _, m := range r.Messages {
			s.size(m.Content)
		}
		s.alloc()
		c.Messages = make([]Message, len(r.Messages))
		for i, m := range r.Messages {
			c.Messages[i] = Message{Role: m.Role, Content: s.blocks(m.Content)}
		}
	}
	if r.Tools != nil {
		c.Tools = make([]ToolSpec, len(r.Tools))
		for i, t := range r.Tools {
			t.InputSchema = cloneRaw(t.InputSchema)
			c.Tools[i] = t
		}
	}
	if r.Temperature != nil {
		t := *r.Temperature
		c.Temperature = &t
	}
	return c
}

// Validate reports the first problem that would make the request unusable:
// an invalid message (see [Message.Validate]), a tool without a name, or a
// tool whose input schema is not a JSON object. Providers call it before
// sending anything.
func (r *Request) Validate() error {
	if r == nil {
		return errors.New("model: nil request")
	}
	for i, m := range r.Messages {
		if err := m.check(); err != nil {
			return fmt.Errorf("model: message %d: %w", i, err)
		}
	}
	for i, t := range r.Tools {
		if t.Name == "" {
			return fmt.Errorf("model: tool %d has no name", i)
		}
		if len(bytes.TrimSpace(t.InputSchema)) > 0 {
			if !isObject(t.InputSchema) {
				return fmt.Errorf("model: tool %q: input schema must be a JSON object", t.Name)
			}
		}
	}
	return nil
}

// Usage counts the tokens a request consumed.
type Usage struct {
	// InputTokens is the size of the prompt, cached parts included.
	InputTokens int `json:"input_tokens"`
	// OutputTokens is the size of the answer.
	OutputTokens int `json:"output_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// StopReason says why the model stopped generating.
type StopReason string

// The reasons a model stops.
const (
	// StopEndTurn: the model finished its answer.
	StopEndTurn StopReason = "end_turn"
	// StopToolUse: the model called tools and waits for their results.
	StopToolUse StopReason = "tool_use"
	// StopMaxTokens: the answer reached the token limit and is cut short.
	StopMaxTokens StopReason = "max_tokens"
	// StopSequence: the model produced one of the stop sequences.
	StopSequence StopReason = "stop_sequence"
	// StopOther: any other reason, such as a content filter or a refusal.
	StopOther StopReason = "other"
)

// Response is a model's complete answer.
type Response struct {
	// Message is the answer, an assistant message.
	Message Message `json:"message"`
	// Usage is what the request cost.
	Usage Usage `json:"usage"`
	// StopReason says why the model stopped.
	StopReason StopReason `json:"stop_reason"`
	// Model is the name of the model that answered, as the provider reports it.
	Model string `json:"model,omitempty"`
}

// ChunkType names the kind of a streamed [Chunk].
type ChunkType string

// The kinds of chunk.
const (
	// ChunkText carries a piece of text in [Chunk.Text].
	ChunkText ChunkType = "text_delta"
	// ChunkToolStart opens tool call [Chunk.Index] with [Chunk.ID] and
	// [Chunk.Name].
	ChunkToolStart ChunkType = "tool_call_start"
	// ChunkToolDelta carries a piece of the JSON arguments of tool call
	// [Chunk.Index] in [Chunk.InputDelta].
	ChunkToolDelta ChunkType = "tool_call_delta"
	// ChunkThinking carries a piece of thinking block [Chunk.Index] in
	// [Chunk.Text]; the first piece of an index opens the block, even when
	// empty.
	ChunkThinking ChunkType = "thinking_delta"
	// ChunkSignature carries a piece of the signature of thinking block
	// [Chunk.Index] in [Chunk.Signature], opening the block if no piece of
	// its thinking came first.
	ChunkSignature ChunkType = "signature_delta"
	// ChunkRedactedThinking carries a whole redacted_thinking block, its
	// data in [Chunk.Data].
	ChunkRedactedThinking ChunkType = "redacted_thinking"
	// ChunkDone carries the complete [Chunk.Response]; it is always the last
	// chunk of a successful stream.
	ChunkDone ChunkType = "done"
)

// Chunk is one element of a streamed answer. Type says which fields are set.
type Chunk struct {
	// Type is the kind of chunk.
	Type ChunkType `json:"type"`
	// Text is the text piece of a ChunkText, or the thinking piece of a
	// ChunkThinking.
	Text string `json:"text,omitempty"`
	// Index is the position of the tool call among this answer's tool calls,
	// counted from 0, for ChunkToolStart and ChunkToolDelta; for
	// ChunkThinking and ChunkSignature, the position of the thinking block
	// among this answer's thinking blocks.
	Index int `json:"index,omitempty"`
	// ID is the tool call's id, for ChunkToolStart.
	ID string `json:"id,omitempty"`
	// Name is the called tool's name, for ChunkToolStart.
	Name string `json:"name,omitempty"`
	// InputDelta is the next piece of the tool call's JSON arguments, for
	// ChunkToolDelta. The pieces concatenate to a JSON object.
	InputDelta string `json:"input_delta,omitempty"`
	// Signature is the next piece of a thinking block's signature, for
	// ChunkSignature.
	Signature string `json:"signature,omitempty"`
	// Data is the encrypted reasoning of a ChunkRedactedThinking.
	Data string `json:"data,omitempty"`
	// Response is the complete answer, for ChunkDone.
	Response *Response `json:"response,omitempty"`
}

// TextDelta returns a chunk carrying a piece of text.
func TextDelta(text string) Chunk { return Chunk{Type: ChunkText, Text: text} }

// ToolCallStart returns a chunk opening tool call index.
func ToolCallStart(index int, id, name string) Chunk {
	return Chunk{Type: ChunkToolStart, Index: index, ID: id, Name: name}
}

// ToolCallDelta returns a chunk carrying a piece of tool call index's JSON
// arguments.
func ToolCallDelta(index int, partialJSON string) Chunk {
	return Chunk{Type: ChunkToolDelta, Index: index, InputDelta: partialJSON}
}

// ThinkingDelta returns a chunk carrying a piece of thinking block index.
func ThinkingDelta(index int, text string) Chunk {
	return Chunk{Type: ChunkThinking, Index: index, Text: text}
}

// SignatureDelta returns a chunk carrying a piece of thinking block index's
// signature.
func SignatureDelta(index int, signature string) Chunk {
	return Chunk{Type: ChunkSignature, Index: index, Signature: signature}
}

// RedactedThinking returns a chunk carrying a whole redacted_thinking block.
func RedactedThinking(data string) Chunk {
	return Chunk{Type: ChunkRedactedThinking, Data: data}
}

// Done returns the final chunk of a stream.
func Done(resp *Response) Chunk { return Chunk{Type: ChunkDone, Response: resp} }

// MarshalJSON writes the fields that belong to the chunk's type; the index of
// a tool call or a thinking block is written even when it is 0.
func (c Chunk) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case ChunkToolStart:
		return json.Marshal(struct {
			Type  ChunkType `json:"type"`
			Index int       `json:"index"`
			ID    string    `json:"id"`
			Name  string    `json:"name"`
		}{c.Type, c.Index, c.ID, c.Name})
	case ChunkToolDelta:
		return json.Marshal(struct {
			Type       ChunkType `json:"type"`
			Index      int       `json:"index"`
			InputDelta string    `json:"input_delta"`
		}{c.Type, c.Index, c.InputDelta})
	case ChunkThinking, ChunkSignature:
		return json.Marshal(struct {
			Type      ChunkType `json:"type"`
			Index     int       `json:"index"`
			Text      string    `json:"text,omitempty"`
			Signature string    `json:"signature,omitempty"`
		}{c.Type, c.Index, c.Text, c.Signature})
	default:
		type plain Chunk
		return json.Marshal(plain(c))
	}
}
