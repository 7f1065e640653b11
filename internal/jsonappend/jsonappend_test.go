package jsonappend

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// stringEncodesAsEncodingJSONDoes fails t unless appendString escapes s as
// encoding/json does.
func stringEncodesAsEncodingJSONDoes(t *testing.T, s string) {
	t.Helper()
	want, _ := json.Marshal(s)
	if got := String([]byte("x"), s); string(got) != "x"+string(want) {
		t.Fatalf("%q encodes as %s, encoding/json gives %s", s, got[1:], want)
	}
}

func TestStringsEncodeAsEncodingJSONDoes(t *testing.T) {
	for c := range 256 {
		stringEncodesAsEncodingJSONDoes(t, string([]byte{byte(c)}))
		stringEncodesAsEncodingJSONDoes(t, "a"+string([]byte{byte(c)})+"é")
	}
	for _, s := range []string{"", `{"order_id":"1","total":150}`, "\u2028\u2029\u2027\u202a", "\xe2\x80", "日本\xff語", "\U0001F600<&>", "\xed\xa0\x80"} {
		stringEncodesAsEncodingJSONDoes(t, s)
	}
}

func FuzzStringsEncodeAsEncodingJSONDoes(f *testing.F) {
	for _, s := range []string{"", "plain", `quo"te \ back`, "<b>&</b>", "tab\tnew\nline\x01", "é \u2028", "bad \xff utf8"} {
		f.Add(s)
	}
	f.Fuzz(stringEncodesAsEncodingJSONDoes)
}

func TestStringListsEncodeAsEncodingJSONDoes(t *testing.T) {
	for _, ss := range [][]string{{}, {"a"}, {"a", "<b>", "é\u2028"}} {
		want, _ := json.Marshal(ss)
		if got := Strings(nil, ss); string(got) != string(want) {
			t.Errorf("%q encodes as %s, encoding/json gives %s", ss, got, want)
		}
	}
}

func TestValuesEncodeAsEncodingJSONDoes(t *testing.T) {
	type named string
	for _, v := range []any{
		nil, "", "a<b>\u2028", true, false, 0, -7, int64(1) << 60, int32(-3), uint(9), uint64(1) << 63,
		0.0, -0.0, 1.5, 150.0, 1e20, 1e21, 123456789e15, 1e-6, 1e-7, -2.5e-9, float32(0.1), float32(1e21), float32(3e-7),
		map[string]any{}, map[string]any(nil), []any(nil), []any{}, []string(nil), []string{"x", "<"},
		map[string]any{"total": 150, "order_id": "1", "b": []any{1.25, nil, "s", map[string]any{"z": false, "a": true}}},
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := Value([]byte("x"), v)
		if !ok || string(got) != "x"+string(want) {
			t.Errorf("%#v encodes as %s (%v), encoding/json gives %s", v, got, ok, want)
		}
	}
	for _, v := range []any{math.Inf(1), math.NaN(), named("x"), struct{}{}, map[string]any{"a": []int{1}}, []any{float32(math.Inf(-1))}} {
		if _, ok := Value(nil, v); ok {
			t.Errorf("%#v is encoded; want it left to encoding/json", v)
		}
	}
}

func FuzzFloatsEncodeAsEncodingJSONDoes(f *testing.F) {
	for _, x := range []float64{0, 1, -1.5, 1e21, 1e-7, 123.456e-10, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		for _, v := range []any{x, float32(x)} {
			want, err := json.Marshal(v)
			got, ok := Value(nil, v)
			if (err == nil) != ok || ok && string(got) != string(want) {
				t.Fatalf("%v (%T) encodes as %s (%v), encoding/json gives %s (%v)", v, v, got, ok, want, err)
			}
		}
	})
}

// rawAppendsAsEncodingJSONDoes fails t if Raw appends v where encoding/json
// refuses it or writes it otherwise, and reports whether Raw appended it.
func rawAppendsAsEncodingJSONDoes(t *testing.T, v string) bool {
	t.Helper()
	want, err := json.Marshal(json.RawMessage(v))
	got, ok := Raw([]byte("x"), json.RawMessage(v))
	if !ok {
		return false
	}
	if err != nil || string(got) != "x"+string(want) {
		t.Fatalf("%q appends as %s, encoding/json gives %s (%v)", v, got[1:], want, err)
	}
	return true
}

func TestRawValuesAppendAsEncodingJSONDoes(t *testing.T) {
	for _, v := range []string{`{}`, `[]`, `""`, `0`, `-0.5e+3`, `true`, `false`, `null`, `{"a":[1,{"b":null}],"c":"d\"\\\/\b\f\n\r\t\u00e9"}`,
		`"é — €"`, "\"\xff\"", `[[[[]]]]`, `{"order_id":"1","amount":10}`} {
		if !rawAppendsAsEncodingJSONDoes(t, v) {
			t.Errorf("%q is left to encoding/json; want it appended as it is", v)
		}
	}
	for _, v := range []string{``, ` {}`, `{} `, `{"a": 1}`, `[1, 2]`, `{"a":1,}`, `[1,]`, `{"a"}`, `{a:1}`, `"<"`, `"&"`, "\"\u2028\"", "\"\u2029\"",
		`"\x"`, `"\u12g4"`, "\"\x01\"", `"abc`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `NaN`, `{}{}`, `[1]]`} {
		if rawAppendsAsEncodingJSONDoes(t, v) {
			t.Errorf("%q is appended as it is; want it left to encoding/json", v)
		}
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if rawAppendsAsEncodingJSONDoes(t, deep) {
		t.Error("a value nested deeper than encoding/json reads is appended")
	}
}

func FuzzRawValuesAppendAsEncodingJSONDoes(f *testing.F) {
	for _, v := range []string{`{"a":[1,{"b":null}],"c":"d\"\\"}`, `-0.5e+3`, `"é \u2028"`, `[true,false]`} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) { rawAppendsAsEncodingJSONDoes(t, v) })
}

// plainWord reports whether plainWords takes w, eight bytes, as plain.
func plainWord(w string) bool { return plainWords(w, 0) == 8 }

// wordIsPlain is plainWord's meaning, byte by byte.
func wordIsPlain(w string) bool {
	for i := range len(w) {
		if w[i] >= utf8.RuneSelf || !plain[w[i]] {
			return false
		}
	}
	return true
}

func BenchmarkString(b *testing.B) {
	s := "Approve a refund of $150 for order 1234? The customer says it arrived damaged."
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf = String(buf[:0], s)
	}
}

func TestAWordIsPlainExactlyWhenEachOfItsBytesIs(t *testing.T) {
	for _, base := range []string{"abcdefgh", "order_id", "        ", "~~~~~~~~", "!#$%'()*", "1234567.", "?@[]^`{}"} {
		if !plainWord(base) {
			t.Errorf("%q is plain, plainWord says not", base)
		}
		for at := range len(base) {
			for c := range 256 {
				w := base[:at] + string([]byte{byte(c)}) + base[at+1:]
				if got, want := plainWord(w), wordIsPlain(w); got != want {
					t.Fatalf("plainWord(%q) = %v, want %v", w, got, want)
				}
			}
		}
	}
}

func FuzzAWordIsPlainExactlyWhenEachOfItsBytesIs(f *testing.F) {
	for _, s := range []string{"abcdefgh", "a\"b\\c<d>", "\x00\x1f\x20\x7f\x80\xff&&", "é日本\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i := 0; i+8 <= len(s); i++ {
			if got, want := plainWord(s[i:i+8]), wordIsPlain(s[i:i+8]); got != want {
				t.Fatalf("plainWord(%q) = %v, want %v", s[i:i+8], got, want)
			}
		}
		stringEncodesAsEncodingJSONDoes(t, s)
	})
}
