package schema

import (
	"strings"
	"testing"
)

func TestValidateRefusesKeysGoWouldDecodeAmbiguously(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"approved":{"type":"boolean"},"items":{"type":"array"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	runValidateCases(t, s, []validateCase{
		{"repeated key at top level", `{"approved":"x","approved":true}`,
			[]Violation{{"", `key "approved" appears twice; send it once`}}},
		{"keys differing only in case", `{"approved":false,"APPROVED":true}`,
			[]Violation{{"", `key "APPROVED" differs from key "approved" only in case; send one of them`}}},
		{"keys equal under Unicode folding", "{\"kind\":1,\"\u212aind\":2}",
			[]Violation{{"", "key \"\u212aind\" differs from key \"kind\" only in case; send one of them"}}},
		{"nested in an array of objects", `{"approved":true,"items":[{"a":1},{"b":[1,{}],"id":1,"Id":2}]}`,
			[]Violation{{"/items/1", `key "Id" differs from key "id" only in case; send one of them`}}},
		{"every repeat is reported", `{"items":[{"a/b":{"x":1,"x":2}}],"approved":true,"Approved":true}`,
			[]Violation{{"/items/0/a~1b", `key "x" appears twice; send it once`}, {"", `key "Approved" differs from key "approved" only in case; send one of them`}}},
		{"same key in two objects", `{"approved":true,"items":[{"id":1},{"id":2,"sub":{"id":3}}]}`, nil},
		{"key after a closed nested object", `{"items":[{"approved":1}],"approved":true}`, nil},
		{"string value containing repeated keys", `{"approved":true,"note":"{\"approved\":false,\"APPROVED\":true}"}`, nil},
		{"valid document", `{"approved":true,"items":[1,"two",{"three":3e400},[],null]}`, nil},
		{"scalar document", `true`, []Violation{{Path: ""}}}, // only the schema's own type violation
	})
}

func TestFoldKeyMatchesEqualFold(t *testing.T) {
	words := []string{"k", "K", "\u212a", "s", "S", "\u017f", "\u03c3", "\u03c2", "\u03a3", "\u00df", "\u1e9e", "\u00e9", "\u00c9", "e", "1", "_", "ab", "aB", "a"}
	for _, a := range words {
		for _, b := range words {
			if got, want := foldKey(a) == foldKey(b), strings.EqualFold(a, b); got != want {
				t.Errorf("foldKey(%q) == foldKey(%q) is %v, strings.EqualFold says %v", a, b, got, want)
			}
		}
	}
}

// ambiguityDocs are documents AmbiguousKeys must judge as the full scan does,
// whichever way it reads them.
var ambiguityDocs = []string{
	`{"approved":true}`, `{"approved":true,"Approved":false}`, `{"a":1,"a":2}`,
	`{"a":{"b":1,"B":2}}`, `[{"x":1},{"x":2},{"y":[{"z":1,"z":1}]}]`,
	"{\"kind\":1,\"\u212aind\":2}", `{"\u0041":1,"a":2}`, `{"a\"":1,"a\"":2}`,
	`{"note":"{\"a\":1,\"a\":2}","a":[1,2.5e-3,-0,true,false,null]}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"I":10}`,
	`{"a":1} {"a":1,"a":2}`, `{"a":1,"a":2`, `{"a":1,}`, `"plain"`, `12`, ``, ` `, `{}`, `[]`,
	strings.Repeat("[", 100) + `{"a":1,"A":1}` + strings.Repeat("]", 100),
	"{\"a\":\"\x01\",\"a\":2}",
}

// TestAmbiguousKeysAgreesWithTheFullScan checks the quick read of plain
// documents against the token scan it stands in for.
func TestAmbiguousKeysAgreesWithTheFullScan(t *testing.T) {
	for _, d := range ambiguityDocs {
		agreeWithKeyScan(t, []byte(d))
	}
}

// FuzzAmbiguousKeysAgreesWithTheFullScan: whatever the bytes, AmbiguousKeys
// reports what the token scan reports.
func FuzzAmbiguousKeysAgreesWithTheFullScan(f *testing.F) {
	for _, d := range ambiguityDocs {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) { agreeWithKeyScan(t, data) })
}

func agreeWithKeyScan(t *testing.T, data []byte) {
	t.Helper()
	vs, total := AmbiguousKeys(data)
	want, wantTotal, _ := scanKeys(data, 0, MaxViolations)
	if total != wantTotal || len(vs) != len(want) {
		t.Fatalf("AmbiguousKeys(%q) = %v (%d in all), the scan says %v (%d)", data, vs, total, want, wantTotal)
	}
	for i := range vs {
		if vs[i] != want[i] {
			t.Fatalf("AmbiguousKeys(%q) = %v, the scan says %v", data, vs, want)
		}
	}
}
