package schema

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// agreeWithTwoPassRead fails t unless the one-pass read of data either declines
// it or gives what the checked two-pass read gives: no violation before the
// schema, and the same decoded value.
func agreeWithTwoPassRead(t *testing.T, data []byte) (read bool) {
	t.Helper()
	doc, ok := parseClean(data)
	if !ok {
		return false
	}
	if vs, total, syntaxOK := scanKeys(data, MaxDepth, MaxViolations); !syntaxOK || total > 0 {
		t.Fatalf("%q was read in one pass, but the checks before the schema find %d violations (%v), syntax ok %v", data, total, vs, syntaxOK)
	}
	want, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%q was read in one pass, but the validator's decoder refuses it: %v", data, err)
	}
	if !reflect.DeepEqual(doc, want) {
		t.Fatalf("%q was read in one pass as %#v, the validator's decoder reads %#v", data, doc, want)
	}
	return true
}

var cleanDocs = []string{
	`{"order_id":"1"}`, ` {"order_id" : "1", "amount": 10.5e-3 } `, `[]`, `{}`, `"x"`, `-0`, `0.5`, `1E+2`, `true`, `false`, `null`,
	`{"a":[1,[2,[3,{}]]],"b":{"c":null,"d":[true,false]}}`, `{"text":"line\nbreak \"quoted\" \u00e9 \ud83d\ude00"}`,
	`{"k":1,"s":2,"kk":3,"a":4,"b":5,"c":6,"d":7,"e":8,"f":9,"g":10,"h":11}`, "{\"caf\u00e9\":\"\u65e5\u672c\"}",
	`{"three":3e400}`, "\"\xff\"", `"\ud800"`,
}

var declinedDocs = []string{
	``, ` `, `{`, `{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `1e`, `.5`, `tru`, `nulls`, `1 2`, `{"a":1}x`, `{"a" 1}`, `{a:1}`,
	`{"a":1,"a":2}`, `{"a":1,"A":2}`, "{\"kind\":1,\"\u212aind\":2}", `{"a":"` + "\x01" + `"}`,
	`{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"x":1,"X":2}`, `3e401`, `1` + strings.Repeat("0", 100),
	strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), "[" + strings.Repeat("1,", MaxValues) + "1]",
	"\ufeff{}",
}

func TestAValueReadInOnePassIsTheValueTheCheckedReadGives(t *testing.T) {
	for _, d := range cleanDocs {
		if !agreeWithTwoPassRead(t, []byte(d)) {
			t.Errorf("%q is clean, but the one-pass read declined it", d)
		}
	}
	for _, d := range declinedDocs {
		if agreeWithTwoPassRead(t, []byte(d)) {
			t.Errorf("%q needs the checked read, but the one-pass read took it", d)
		}
	}
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if !agreeWithTwoPassRead(t, []byte(deep)) {
		t.Errorf("a document nested exactly %d deep was declined", MaxDepth)
	}
}

// FuzzReadingOnceAgreesWithTheCheckedRead: whatever the bytes, the one-pass read
// declines them or agrees with the checked two-pass read.
func FuzzReadingOnceAgreesWithTheCheckedRead(f *testing.F) {
	for _, d := range append(cleanDocs, declinedDocs...) {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) { agreeWithTwoPassRead(t, data) })
}
