package graph

import (
	"encoding/json"
	"testing"

	"github.com/interludehq/interlude"
)

// A step's record reads as encoding/json would write it, byte for byte.
func TestStepRecordsAreWhatEncodingJSONWrites(t *testing.T) {
	ws := []write{{Field: "messages", Value: json.RawMessage(`["a","\u003cb\u003e"]`)}, {Field: "turns", Value: json.RawMessage(`1`)}}
	for _, d := range []*delta{
		{V: 1},
		{V: 1, Nonce: "n1", Input: ws, Writes: ws, Status: interlude.ThreadRunning, Next: []string{"model", "tools"}, Step: 3},
		{V: 1, Writes: ws[:1], Mid: true, Base: 7, Step: 2, Error: "node \"x\": <failed> \u00e9\n"},
		{V: 1, Status: interlude.ThreadFailed, Next: []string{"ü"}, Error: "e"},
	} {
		got, err := encodeDelta(d)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(d)
		if string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}
