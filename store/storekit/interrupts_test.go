package storekit

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/interludehq/interlude"
)

// TestPendingInterruptsEncodeAsEncodingJSONEncodesThem checks that the
// listing column holds the bytes json.Marshal writes for the questions, which
// every release has stored, and that they decode to the same questions.
func TestPendingInterruptsEncodeAsEncodingJSONEncodesThem(t *testing.T) {
	at := time.Date(2026, 12, 1, 23, 50, 1, 123456789, time.UTC)
	later := at.Add(time.Hour).In(time.FixedZone("CET", 3600))
	plain := interlude.Interruption{ID: "q1", Node: "refund", Message: "Approve a refund of $150?", Reason: "tool_approval",
		Value: json.RawMessage(`{"amount":150}`), Schema: json.RawMessage(`{"type":"object"}`), CreatedAt: at}
	full := interlude.Interruption{ID: "q2", Name: "approve", Node: "n", Path: []string{"outer", "inner"}, ToolCallID: "call_1",
		Message: "line\nbreak <b>&amp;</b> \u2028 \xff 日本", Reason: "r", Value: json.RawMessage(`[1,2.5e3,true,null]`),
		Schema: json.RawMessage(`{}`), State: json.RawMessage(`{"s":1}`), CreatedAt: at, ExpiresAt: &later,
		Trace: "00-abc-def-01", Assignees: []string{"alice", "ops"}, Escalations: 2}
	// Raw values encoding/json compacts and escapes.
	loose := interlude.Interruption{ID: "q3", Value: json.RawMessage(" { \"a\" : [ 1 , \"<\" ] }\n"), Schema: json.RawMessage("{\n\t\"type\": \"string\"\n}"), CreatedAt: at}
	for name, qs := range map[string][]interlude.Interruption{
		"one":            {plain},
		"several":        {plain, full, {ID: "q0"}},
		"loose raw":      {loose},
		"loose among":    {plain, loose, full},
		"unicode values": {{ID: "q4", Value: json.RawMessage(`"caf\u00e9 <x> & \u2029"`), CreatedAt: at}},
	} {
		got, err := EncodeInterrupts(qs)
		want, werr := json.Marshal(qs)
		if err != nil || werr != nil {
			t.Fatalf("%s: errors %v and %v", name, err, werr)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
		back, err := DecodeInterrupts("test", "t", got)
		if err != nil || len(back) != len(qs) || back[0].ID != qs[0].ID {
			t.Errorf("%s: decoded %v, %v", name, back, err)
		}
	}
	if b, err := EncodeInterrupts(nil); b != nil || err != nil {
		t.Errorf("no questions: %q, %v", b, err)
	}
}

// TestAQuestionThatCannotBeEncodedIsRefused checks that a question whose raw
// value is not JSON is refused as an invalid request, naming encoding/json's
// complaint.
func TestAQuestionThatCannotBeEncodedIsRefused(t *testing.T) {
	qs := []interlude.Interruption{{ID: "q1"}, {ID: "q2", Value: json.RawMessage(`{"a":`)}}
	_, err := EncodeInterrupts(qs)
	_, werr := json.Marshal(qs)
	ie, ok := err.(*interlude.Error)
	if !ok || ie.Code != interlude.CodeInvalidRequest || ie.Message != "the pending interrupts cannot be encoded as JSON: "+werr.Error() {
		t.Fatalf("error %v, want an invalid request naming %v", err, werr)
	}
}
