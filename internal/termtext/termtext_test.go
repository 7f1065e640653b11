package termtext

import "testing"

func TestControlCharactersAreShownAsEscapes(t *testing.T) {
	tests := []struct {
		name, in, line, block string
	}{
		{"plain text is kept", "Approve a refund of $150?", "Approve a refund of $150?", "Approve a refund of $150?"},
		{"unicode text is kept", "Rückerstattung für Zoë — 150 €", "Rückerstattung für Zoë — 150 €", "Rückerstattung für Zoë — 150 €"},
		{"backslashes are kept", `C:\temp \x1b`, `C:\temp \x1b`, `C:\temp \x1b`},
		{"a title sequence", "\x1b]0;pwned\x07hi", `\x1b]0;pwned\x07hi`, `\x1b]0;pwned\x07hi`},
		{"a screen clear", "\x1b[2Jhi", `\x1b[2Jhi`, `\x1b[2Jhi`},
		{"newline and tab in a line", "a\nb\tc", `a\x0ab\x09c`, "a\nb\tc"},
		{"carriage return", "ok\rforged", `ok\x0dforged`, `ok\x0dforged`},
		{"NUL, backspace and DEL", "a\x00b\x08c\x7f", `a\x00b\x08c\x7f`, `a\x00b\x08c\x7f`},
		{"a C1 CSI", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
		{"a C1 NEL", "a\u0085b", `a\u0085b`, `a\u0085b`},
		{"bidi override", "evil\u202etxt.exe", `evil\u202etxt.exe`, `evil\u202etxt.exe`},
		{"bidi embeddings and isolates", "\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`, `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"bytes that are not UTF-8", "a\x9b2J\xffb", `a\x9b2J\xffb`, `a\x9b2J\xffb`},
		{"empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
			if got := Block(tt.in); got != tt.block {
				t.Errorf("Block(%q) = %q, want %q", tt.in, got, tt.block)
			}
		})
	}
}

func TestSafeTextIsNotCopied(t *testing.T) {
	s := "Approve a refund of $150?"
	if n := testing.AllocsPerRun(100, func() { _ = Line(s) }); n != 0 {
		t.Errorf("Line allocates %v times for safe text, want 0", n)
	}
}
