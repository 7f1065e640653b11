// Package termtext makes text that came from a thread safe to print on a
// terminal: control characters, which a terminal would act on (an escape
// sequence can set the window title, clear the screen or rewrite what was
// printed), and Unicode bidirectional overrides, which reorder what is shown,
// are replaced by visible escapes, so hostile text stays text.
//
// C0 controls, DEL and bytes that are not UTF-8 are shown as \xHH (\x1b for
// ESC); C1 controls and bidirectional embeddings, overrides and isolates
// (U+202A to U+202E, U+2066 to U+2069) as \uHHHH (\u009b, \u202e). Everything
// else, backslashes included, is kept as it is.
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Line returns s made safe as one line of output: every control character,
// newline and tab included, is escaped.
func Line(s string) string { return clean(s, false) }

// Block returns s made safe as a block of text: newlines and tabs are kept,
// every other control character (carriage return included) is escaped.
func Block(s string) string { return clean(s, true) }

func clean(s string, block bool) string {
	i := firstUnsafe(s, block)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeHex(&b, `\x`, uint32(s[i]), 2)
		case !unsafeRune(r, block):
			b.WriteString(s[i : i+n])
		case r < 0x80:
			writeHex(&b, `\x`, uint32(r), 2)
		default:
			writeHex(&b, `\u`, uint32(r), 4)
		}
		i += n
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte of s that needs escaping, or
// -1 when s is safe as it is.
func firstUnsafe(s string, block bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeRune(rune(c), block) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r, block) {
			return i
		}
		i += n
	}
	return -1
}

// unsafeRune reports whether r must be escaped.
func unsafeRune(r rune, block bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !block
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

func writeHex(b *strings.Builder, prefix string, v uint32, width int) {
	b.WriteString(prefix)
	for shift := (width - 1) * 4; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(v>>uint(shift))&0xf])
	}
}
