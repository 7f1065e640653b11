package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/interludehq/interlude/internal/jsonappend"
)

// Accumulator assembles streamed chunks into an assistant message and, at the
// end, a [Response]. Providers feed it every chunk they yield, so assembly is
// the same for all of them; callers can use one to watch an answer grow.
//
// Text pieces join the text block they continue; a tool call opens a new
// tool_use block; a thinking block's first piece (of thinking or of
// signature) opens it and later pieces of the same index join it; a redacted
// thinking chunk is a block of its own. Blocks keep the order in which they
// first appeared.
// The zero value is ready to use. An Accumulator is not safe for concurrent
// use.
type Accumulator struct {
	blocks []Block
	calls  map[int]int // tool call index -> position in blocks
	thinks map[int]int // thinking block index -> position in blocks
	done   *Response
	// text holds the last block's text while it is a text block that grew
	// from more than one piece: pieces are appended to it, not each to a new
	// string, and the block's Text is set from it when the message is read.
	text     []byte
	textOpen bool
}

// Add feeds one chunk. It fails if the chunk does not fit what came before:
// a tool call opened twice, arguments for a call never opened, or any chunk
// after the final one.
func (a *Accumulator) Add(c Chunk) error {
	if a.done != nil {
		return fmt.Errorf("model: %s chunk after the final chunk", c.Type)
	}
	switch c.Type {
	case ChunkText:
		if c.Text == "" {
			return nil
		}
		n := len(a.blocks)
		switch {
		case a.textOpen:
			a.text = append(a.text, c.Text...)
		case n > 0 && a.blocks[n-1].Type == BlockText:
			t := a.blocks[n-1].Text
			if size := len(t) + len(c.Text); cap(a.text) < size {
				a.text = make([]byte, 0, max(128, 2*size))
			}
			a.text = append(append(a.text[:0], t...), c.Text...)
			a.textOpen = true
		default:
			a.blocks = append(a.blocks, TextBlock(c.Text))
		}
	case ChunkToolStart:
		if a.calls == nil {
			a.calls = make(map[int]int)
		}
		if _, ok := a.calls[c.Index]; ok {
			return fmt.Errorf("model: tool call %d started twice", c.Index)
		}
		a.calls[c.Index] = len(a.blocks)
		a.push(Block{Type: BlockToolUse, ID: c.ID, Name: c.Name})
	case ChunkToolDelta:
		pos, ok := a.calls[c.Index]
		if !ok {
			return fmt.Errorf("model: arguments for tool call %d before its start", c.Index)
		}
		a.blocks[pos].Input = append(a.blocks[pos].Input, c.InputDelta...)
	case ChunkThinking:
		a.thinking(c.Index).Thinking += c.Text
	case ChunkSignature:
		a.thinking(c.Index).Signature += c.Signature
	case ChunkRedactedThinking:
		a.push(RedactedThinkingBlock(c.Data))
	case ChunkDone:
		if c.Response == nil {
			return fmt.Errorf("model: final chunk without a response")
		}
		a.done = c.Response
	default:
		return fmt.Errorf("model: unknown chunk type %q", c.Type)
	}
	return nil
}

// thinking returns thinking block index, opening it if it is new.
func (a *Accumulator) thinking(index int) *Block {
	pos, ok := a.thinks[index]
	if !ok {
		if a.thinks == nil {
			a.thinks = make(map[int]int)
		}
		pos = len(a.blocks)
		a.thinks[index] = pos
		a.push(Block{Type: BlockThinking})
	}
	return &a.blocks[pos]
}

// push appends a block, closing the text block before it.
func (a *Accumulator) push(b Block) {
	a.closeText()
	a.blocks = append(a.blocks, b)
}

// closeText sets the last block's text from the pieces it grew from, and
// keeps the buffer for the next text block.
func (a *Accumulator) closeText() {
	if a.textOpen {
		a.blocks[len(a.blocks)-1].Text = string(a.text)
		a.text, a.textOpen = a.text[:0], false
	}
}

// Message returns a copy of the message assembled so far. Until the stream
// ends, a tool call's Input may be an incomplete piece of JSON.
func (a *Accumulator) Message() Message {
	if a.textOpen {
		a.blocks[len(a.blocks)-1].Text = string(a.text) // the text so far; it may grow
	}
	return Message{Role: RoleAssistant, Content: a.blocks}.Clone()
}

// Final returns the response of the final chunk, or nil if it has not been
// added.
func (a *Accumulator) Final() *Response { return a.done }

// Finish completes the message and returns the response. Every tool call's
// arguments must form a JSON object (none at all counts as {}), which is
// stored compacted; otherwise Finish returns an ErrBadResponse error naming
// provider, not retryable when the stop reason is StopMaxTokens. An empty
// stop reason becomes StopToolUse when the message calls tools, else
// StopEndTurn. Providers yield the result in a final chunk ([Done]).
func (a *Accumulator) Finish(provider string, stop StopReason, usage Usage, modelName string) (*Response, error) {
	msg := a.Message()
	hasCalls := false
	for i := range msg.Content {
		b := &msg.Content[i]
		if b.Type != BlockToolUse {
			continue
		}
		hasCalls = true
		in := bytes.TrimSpace(b.Input)
		if len(in) == 0 {
			b.Input = json.RawMessage(`{}`)
			continue
		}
		if in[0] == '{' {
			if jsonappend.Plain(in) {
				b.Input = in // an object already compact: kept as it is
				continue
			}
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(in, &obj); err != nil || obj == nil {
			msg := fmt.Sprintf("arguments of tool call %q (%s) are not a JSON object: %.200q", b.ID, b.Name, in)
			if stop == StopMaxTokens {
				// Sent again, the request would be cut short again.
				e := BadResponse(provider, msg+" (the answer hit the token limit; raise MaxTokens)", err)
				e.Retryable = false
				return nil, e
			}
			return nil, BadResponse(provider, msg, err)
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, in) // in is valid JSON
		b.Input = compact.Bytes()
	}
	if stop == "" {
		stop = StopEndTurn
		if hasCalls {
			stop = StopToolUse
		}
	}
	return &Response{Message: msg, Usage: usage, StopReason: stop, Model: modelName}, nil
}

// Collect drains a stream and returns the response of its final chunk, or the
// stream's error. A stream that ends without a final chunk is an
// ErrBadResponse error.
func Collect(stream iter.Seq2[Chunk, error]) (*Response, error) {
	var final *Response
	for c, err := range stream {
		if err != nil {
			return nil, err
		}
		if c.Type == ChunkDone {
			final = c.Response
		}
	}
	if final == nil {
		return nil, BadResponse("", "the stream ended without a final response", nil)
	}
	return final, nil
}
