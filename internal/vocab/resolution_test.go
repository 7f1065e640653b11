package vocab

import (
	"encoding/json"
	"testing"
)

// TestAnAnswerIsStoredAsEncodingJSONEncodesIt checks that Resolve records the
// bytes json.Marshal writes, for plain answers and for the others alike.
func TestAnAnswerIsStoredAsEncodingJSONEncodesIt(t *testing.T) {
	type decision struct {
		Approved bool   `json:"approved"`
		Note     string `json:"note,omitempty"`
	}
	for _, v := range []any{
		map[string]any{"approved": true},
		map[string]any{"b": 1.5, "a": []any{"x<y", nil, 3}, "c": map[string]any{"z": false}},
		"<b>ok</b>", 42, 1e21, nil, []string{"a", "b"},
		decision{Approved: true, Note: "fine"},
		json.RawMessage(` { "a" : 1 } `),
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		r := Resolve(v)
		if r.Err() != nil || string(r.Response) != string(want) {
			t.Errorf("Resolve(%#v) = %s (%v), want %s", v, r.Response, r.Err(), want)
		}
	}
}
