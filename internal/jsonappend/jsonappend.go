// Package jsonappend appends JSON values to byte slices exactly as
// encoding/json writes them, for the encoders written field by field on hot
// paths (step records, messages, interrupts): their output stays
// byte-identical to encoding/json's.
package jsonappend

import (
	"encoding/json"
	"unicode/utf8"
)

// String appends s as a JSON string, escaped as encoding/json escapes
// it: quotes, backslashes and control characters, the HTML characters <, > and
// &, U+2028 and U+2029, and each byte of invalid UTF-8 as U+FFFD.
func String(dst []byte, s string) []byte {
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

// Strings appends ss as a JSON array of strings, each as String writes it.
func Strings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = String(dst, s)
	}
	return append(dst, ']')
}

// Raw appends a raw JSON value (null if nil) as encoding/json writes it,
// if that is the value as it is: valid, compact, and with nothing encoding/json
// escapes (<, >, & and U+2028, U+2029, which start with the byte 0xE2). It
// reports false otherwise.
func Raw(b []byte, v json.RawMessage) ([]byte, bool) {
	if v == nil {
		return append(b, "null"...), true
	}
	if !json.Valid(v) {
		return b, false
	}
	inString := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '<' || c == '>' || c == '&' || c == 0xE2:
			return b, false
		case inString && c == '\\':
			i++ // the escaped byte, which ends no string
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return b, false
		}
	}
	return append(b, v...), true
}
