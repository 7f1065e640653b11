package model

import (
	"bytes"
	"encoding/json"

	"github.com/interludehq/interlude/internal/jsonappend"
)

// Messages and blocks are encoded by hand, as encoding/json would encode them
// field by field: a transcript is encoded on every step, and nested
// MarshalJSON calls would each encode, and have encoding/json scan again,
// everything below them.

// appendMessage appends m's JSON to dst.
func appendMessage(dst []byte, m Message) ([]byte, error) {
	dst = append(dst, `{"role":`...)
	dst = jsonappend.String(dst, string(m.Role))
	dst = append(dst, `,"content":`...)
	dst, err := appendBlocks(dst, m.Content)
	if err != nil {
		return nil, err
	}
	if m.Imported {
		dst = append(dst, `,"imported":true`...)
	}
	return append(dst, '}'), nil
}

// appendBlocks appends a JSON array of the blocks ([] for none).
func appendBlocks(dst []byte, bs []Block) ([]byte, error) {
	dst = append(dst, '[')
	for i, b := range bs {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendBlock(dst, b); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// appendBlock appends b's JSON to dst: text, tool calls and tool results by
// hand, other blocks with encoding/json.
func appendBlock(dst []byte, b Block) ([]byte, error) {
	var err error
	switch b.Type {
	case BlockText:
		dst = append(dst, `{"type":`...)
		dst = jsonappend.String(dst, string(b.Type))
		dst = append(dst, `,"text":`...)
		dst = jsonappend.String(dst, b.Text)
	case BlockToolUse:
		input := b.Input
		if len(bytes.TrimSpace(input)) == 0 {
			input = json.RawMessage(`{}`)
		}
		dst = append(dst, `{"type":`...)
		dst = jsonappend.String(dst, string(b.Type))
		dst = append(dst, `,"id":`...)
		dst = jsonappend.String(dst, b.ID)
		dst = append(dst, `,"name":`...)
		dst = jsonappend.String(dst, b.Name)
		dst = append(dst, `,"input":`...)
		if dst, err = appendRaw(dst, input); err != nil {
			return nil, err
		}
	case BlockToolResult:
		dst = append(dst, `{"type":`...)
		dst = jsonappend.String(dst, string(b.Type))
		dst = append(dst, `,"tool_use_id":`...)
		dst = jsonappend.String(dst, b.ToolUseID)
		dst = append(dst, `,"content":`...)
		if dst, err = appendBlocks(dst, b.Content); err != nil {
			return nil, err
		}
		if b.IsError {
			dst = append(dst, `,"is_error":true`...)
		}
		if len(b.Interrupts) > 0 {
			dst = append(dst, `,"interrupts":`...)
			if dst, err = appendRaw(dst, b.Interrupts); err != nil {
				return nil, err
			}
		}
	default:
		data, err := marshalBlock(b)
		if err != nil {
			return nil, err
		}
		return append(dst, data...), nil
	}
	return append(dst, '}'), nil
}

// appendRaw appends raw JSON as encoding/json encodes a json.RawMessage:
// checked, compacted, with HTML characters and U+2028 and U+2029 escaped.
func appendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if b, ok := jsonappend.Raw(dst, raw); ok {
		return b, nil // already as encoding/json writes it
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	return append(dst, data...), nil
}
