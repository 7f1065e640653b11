// Package jsonappend appends JSON values to byte slices exactly as
// encoding/json writes them, for the encoders written field by field on hot
// paths (step records, messages, interrupts): their output stays
// byte-identical to encoding/json's.
package jsonappend

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
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
		// Eight plain ASCII bytes at a time, the common case, by word.
		if i+8 <= len(s) {
			if i = plainWords(s, i); i == len(s) {
				break
			}
		}
		if c := s[i]; c < utf8.RuneSelf {
			if plain[c] {
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

// plainWords returns the end of the run of whole eight-byte words of s from
// i that String writes as they are (see plain), looking at each as one word:
// no byte is a control character, a quote, a backslash, <, > or &, or a byte
// of a multi-byte character.
func plainWords(s string, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		_ = w[7]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		// A byte of x below 0x20 has its high bit set in x-0x20 and clear in
		// x; a byte equal to c is zero in y = x^c, so likewise in y-1 and y.
		// A byte borrows from the next only if it is such a byte itself, so
		// every other byte's bit is exact.
		quote, backslash := x^('"'*ones), x^('\\'*ones)
		lt, gt, amp := x^('<'*ones), x^('>'*ones), x^('&'*ones)
		m := x | (x-0x20*ones)&^x |
			(quote-ones)&^quote | (backslash-ones)&^backslash |
			(lt-ones)&^lt | (gt-ones)&^gt | (amp-ones)&^amp
		if m&highs != 0 {
			break
		}
	}
	return i
}

// plain marks the ASCII bytes String writes as they are: all but control
// characters, quotes, backslashes and the HTML characters <, > and &.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

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
// escapes (<, >, & and U+2028, U+2029). It reports false otherwise. It reads
// the value once, where json.Valid and a scan for those characters would read
// it twice, the first time through encoding/json's general scanner.
func Raw(b []byte, v json.RawMessage) ([]byte, bool) {
	if v == nil {
		return append(b, "null"...), true
	}
	if end, ok := plainValue(v, 0, 0); !ok || end != len(v) {
		return b, false
	}
	return append(b, v...), true
}

// Plain reports whether Raw appends v as it is: v is valid, compact JSON
// with nothing encoding/json escapes.
func Plain(v json.RawMessage) bool {
	end, ok := plainValue(v, 0, 0)
	return ok && end == len(v)
}

// PlainEnd returns where the JSON value at v[i:] ends, if Raw would append it
// as it is (see Plain), for a decoder that reads values out of a larger one.
func PlainEnd(v []byte, i int) (int, bool) { return plainValue(v, i, 0) }

// maxDepth is encoding/json's limit on nesting; deeper values are left to it.
const maxDepth = 10000

// plainValue returns where the JSON value at v[i:] ends, if it is one Raw
// appends as it is: no whitespace outside strings, and in strings no control
// character, no invalid escape and nothing encoding/json escapes.
func plainValue(v []byte, i, depth int) (int, bool) {
	if i >= len(v) {
		return i, false
	}
	switch c := v[i]; {
	case c == '{':
		if depth >= maxDepth {
			return i, false
		}
		i++
		if i < len(v) && v[i] == '}' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = plainString(v, i); !ok || i >= len(v) || v[i] != ':' {
				return i, false
			}
			if i, ok = plainValue(v, i+1, depth+1); !ok || i >= len(v) {
				return i, false
			}
			switch v[i] {
			case ',':
				i++
			case '}':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '[':
		if depth >= maxDepth {
			return i, false
		}
		i++
		if i < len(v) && v[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = plainValue(v, i, depth+1); !ok || i >= len(v) {
				return i, false
			}
			switch v[i] {
			case ',':
				i++
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '"':
		return plainString(v, i)
	case c == 't':
		return literal(v, i, "true")
	case c == 'f':
		return literal(v, i, "false")
	case c == 'n':
		return literal(v, i, "null")
	}
	return NumberEnd(v, i)
}

func literal(v []byte, i int, lit string) (int, bool) {
	if len(v)-i >= len(lit) && string(v[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// plainString returns where the JSON string at v[i:] ends, if Raw may append
// it as it is.
func plainString(v []byte, i int) (int, bool) {
	if i >= len(v) || v[i] != '"' {
		return i, false
	}
	for i++; i < len(v); i++ {
		switch c := v[i]; c {
		case '"':
			return i + 1, true
		case '\\':
			i++
			if i >= len(v) {
				return i, false
			}
			switch v[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(v)-i < 5 || !isHex(v[i+1]) || !isHex(v[i+2]) || !isHex(v[i+3]) || !isHex(v[i+4]) {
					return i, false
				}
				i += 4
			default:
				return i, false
			}
		case '<', '>', '&':
			return i, false
		case 0xE2: // U+2028 and U+2029 are E2 80 A8 and E2 80 A9
			if i+2 < len(v) && v[i+1] == 0x80 && v[i+2]&^1 == 0xA8 {
				return i, false
			}
		default:
			if c < 0x20 {
				return i, false
			}
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// NumberEnd returns where the JSON number at v[i:] ends, and false if none
// starts there.
func NumberEnd(v []byte, i int) (int, bool) {
	j := i
	if j < len(v) && v[j] == '-' {
		j++
	}
	switch {
	case j < len(v) && v[j] == '0':
		j++
	case j < len(v) && v[j] >= '1' && v[j] <= '9':
		j = digits(v, j)
	default:
		return i, false
	}
	if j < len(v) && v[j] == '.' {
		k := digits(v, j+1)
		if k == j+1 {
			return i, false
		}
		j = k
	}
	if j < len(v) && (v[j] == 'e' || v[j] == 'E') {
		j++
		if j < len(v) && (v[j] == '+' || v[j] == '-') {
			j++
		}
		k := digits(v, j)
		if k == j {
			return i, false
		}
		j = k
	}
	return j, true
}

func digits(v []byte, i int) int {
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	return i
}

// Value appends v as json.Marshal writes it, for the values a tool's result
// is usually made of: nil, strings, booleans, numbers of the built-in types,
// and maps with string keys (keys sorted) and slices of those. It reports
// false for anything else (a struct, a named type, a number that is not
// finite), with dst in any state past its original length: the caller then
// uses json.Marshal.
func Value(dst []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		return String(dst, x), true
	case bool:
		return strconv.AppendBool(dst, x), true
	case int:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int64:
		return strconv.AppendInt(dst, x, 10), true
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), true
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint64:
		return strconv.AppendUint(dst, x, 10), true
	case float64:
		return Float(dst, x, 64)
	case float32:
		return Float(dst, float64(x), 32)
	case map[string]any:
		if x == nil {
			return append(dst, "null"...), true
		}
		var buf [16]string
		keys := buf[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = String(dst, k)
			dst = append(dst, ':')
			var ok bool
			if dst, ok = Value(dst, x[k]); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	case []any:
		if x == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = Value(dst, e); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	case []string:
		if x == nil {
			return append(dst, "null"...), true
		}
		return Strings(dst, x), true
	}
	return dst, false
}

// Float appends f, of the given bit size (32 or 64), as encoding/json writes
// it: like ES6's number to string conversion. It reports false for an
// infinity or NaN, which encoding/json refuses.
func Float(dst []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// e-09 is written e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}
