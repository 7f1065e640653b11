package model

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/interludehq/interlude/internal/jsonappend"
)

// maxFastDepth bounds the nesting of blocks decodeBlock reads; deeper content
// is left to encoding/json.
const maxFastDepth = 32

// decodeBlock reads the block whose JSON object starts at data[i], as
// Block.UnmarshalJSON does, without going through encoding/json: a tool
// result read back from a step's memo would otherwise be scanned once per
// level of nesting. It returns where the object ends, and false for anything
// it does not read exactly as encoding/json would (a key it does not know,
// in any case; an escaped or invalid string; a raw value with whitespace or
// HTML characters; an image source; null where encoding/json calls a
// decoder), which the caller leaves to encoding/json.
func decodeBlock(data []byte, i, depth int) (Block, int, bool) {
	var b Block
	if depth > maxFastDepth || i >= len(data) || data[i] != '{' {
		return b, i, false
	}
	i++
	if i < len(data) && data[i] == '}' {
		return b, i + 1, true
	}
	for {
		key, j, ok := plainString(data, i)
		if !ok || j >= len(data) || data[j] != ':' {
			return b, i, false
		}
		i = j + 1
		var s *string
		switch key {
		case "type":
			var t string
			if t, i, ok = stringValue(data, i, string(b.Type)); ok {
				b.Type = BlockType(t)
			}
		case "text":
			s = &b.Text
		case "id":
			s = &b.ID
		case "name":
			s = &b.Name
		case "tool_use_id":
			s = &b.ToolUseID
		case "thinking":
			s = &b.Thinking
		case "signature":
			s = &b.Signature
		case "data":
			s = &b.Data
		case "input":
			b.Input, i, ok = rawValue(data, i)
		case "interrupts":
			b.Interrupts, i, ok = rawValue(data, i)
		case "is_error":
			switch {
			case hasLiteral(data, i, "true"):
				b.IsError, i = true, i+4
			case hasLiteral(data, i, "false"):
				b.IsError, i = false, i+5
			case hasLiteral(data, i, "null"):
				i += 4
			default:
				ok = false
			}
		case "content":
			b.Content, i, ok = contentValue(data, i, depth)
		default:
			return b, i, false
		}
		if s != nil {
			*s, i, ok = stringValue(data, i, *s)
		}
		if !ok || i >= len(data) {
			return b, i, false
		}
		switch data[i] {
		case ',':
			i++
		case '}':
			return b, i + 1, true
		default:
			return b, i, false
		}
	}
}

// contentValue reads a block's content: null, a string (one text block) or
// an array of blocks.
func contentValue(data []byte, i, depth int) ([]Block, int, bool) {
	switch {
	case hasLiteral(data, i, "null"):
		return nil, i + 4, true
	case i < len(data) && data[i] == '"':
		s, j, ok := plainString(data, i)
		return []Block{TextBlock(s)}, j, ok
	case i >= len(data) || data[i] != '[':
		return nil, i, false
	}
	i++
	blocks := []Block{} // encoding/json makes [] an empty slice, not nil
	if i < len(data) && data[i] == ']' {
		return blocks, i + 1, true
	}
	for {
		b, j, ok := decodeBlock(data, i, depth+1)
		if !ok || j >= len(data) {
			return nil, j, false
		}
		blocks = append(blocks, b)
		switch data[j] {
		case ',':
			i = j + 1
		case ']':
			return blocks, j + 1, true
		default:
			return nil, j, false
		}
	}
}

// stringValue reads a string field's value: a string, or null, which
// leaves the field as it was (old).
func stringValue(data []byte, i int, old string) (string, int, bool) {
	if hasLiteral(data, i, "null") {
		return old, i + 4, true
	}
	return plainString(data, i)
}

// plainString reads the JSON string at data[i] if it is valid UTF-8 and its
// escapes are ones encoding/json reads one way only (any but a surrogate's).
func plainString(data []byte, i int) (string, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return "", i, false
	}
	start, escaped := i+1, false
	for j := start; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			v := data[start:j]
			if !utf8.Valid(v) {
				return "", i, false
			}
			if !escaped {
				return string(v), j + 1, true
			}
			s, ok := unescape(v)
			return s, j + 1, ok
		case c == '\\':
			escaped = true
			j++ // the escaped character, checked by unescape
		case c < 0x20:
			return "", i, false
		}
	}
	return "", i, false
}

// unescape returns the value of a JSON string's contents v (without its
// quotes), valid UTF-8 holding escapes; it declines surrogates, which
// encoding/json pairs or replaces.
func unescape(v []byte) (string, bool) {
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i++; i >= len(v) {
			return "", false
		}
		switch v[i] {
		case '"', '\\', '/':
			out = append(out, v[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if len(v)-i < 5 {
				return "", false
			}
			r := rune(0)
			for _, h := range v[i+1 : i+5] {
				switch {
				case '0' <= h && h <= '9':
					h -= '0'
				case 'a' <= h && h <= 'f':
					h -= 'a' - 10
				case 'A' <= h && h <= 'F':
					h -= 'A' - 10
				default:
					return "", false
				}
				r = r<<4 | rune(h)
			}
			if utf16.IsSurrogate(r) {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return "", false
		}
	}
	return string(out), true
}

// rawValue reads a raw value (a copy, as json.RawMessage keeps one); null
// is left to encoding/json, which hands it to the raw value's decoder.
func rawValue(data []byte, i int) ([]byte, int, bool) {
	if hasLiteral(data, i, "null") {
		return nil, i, false
	}
	j, ok := jsonappend.PlainEnd(data, i)
	if !ok {
		return nil, i, false
	}
	return append([]byte(nil), data[i:j]...), j, true
}

// hasLiteral reports whether data holds lit at i.
func hasLiteral(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}
