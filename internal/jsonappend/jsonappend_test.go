package jsonappend

import (
	"encoding/json"
	"testing"
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
