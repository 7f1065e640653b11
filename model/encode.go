package model

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Messages and blocks are encoded by hand, as encoding/json would encode them
// field by field: a transcript is encoded on every step, and nested
// MarshalJSON calls would each encode, and have encoding/json scan again,
// everything below them.

// appendMessage appends m's JSON to dst.
func appendMessage(dst []byte, m Message) ([]byte, error) {
	dst = append(dst, `{"role":`...)
	dst = appendString(dst, string(m.Role))
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
		dst = appendString(dst, string(b.Type))
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, b.Text)
	case BlockToolUse:
		input := b.Input
		if len(bytes.TrimSpace(input)) == 0 {
			input = json.RawMessage(`{}`)
		}
		dst = append(dst, `{"type":`...)
		dst = appendString(dst, string(b.Type))
		dst = append(dst, `,"id":`...)
		dst = appendString(dst, b.ID)
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, b.Name)
		dst = append(dst, `,"input":`...)
		if dst, err = appendRaw(dst, input); err != nil {
			return nil, err
		}
	case BlockToolResult:
		dst = append(dst, `{"type":`...)
		dst = appendString(dst, string(b.Type))
		dst = append(dst, `,"tool_use_id":`...)
		dst = appendString(dst, b.ToolUseID)
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

// appendString appends s as a JSON string, escaped as encoding/json escapes
// it: quotes, backslashes and control characters, the HTML characters <, > and
// &, U+2028 and U+2029, and each byte of invalid UTF-8 as U+FFFD.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendRaw appends raw JSON as encoding/json encodes a json.RawMessage:
// checked, compacted, with HTML characters and U+2028 and U+2029 escaped.
func appendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	return append(dst, data...), nil
}
