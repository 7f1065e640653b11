package vocab

import (
	"encoding/json"
	"testing"
	"time"
)

func TestAnInterruptionIsEncodedByHandExactlyAsEncodingJSONEncodesIt(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)
	later := at.Add(time.Hour).In(time.FixedZone("x", 2*3600))
	odd := time.Date(1850, 1, 1, 0, 0, 0, 0, time.FixedZone("lmt", 17*60+30))
	cases := []Interruption{
		{},
		{ID: "q1", Node: "ask", Message: "ok?", Reason: "approval", CreatedAt: at},
		{ID: "q2", Name: "refund", Node: "n", Path: []string{"sub", "n", "call_1"}, ToolCallID: "call_1", Message: "Approve $250?",
			Reason: "approval", Value: json.RawMessage(`{"amount":250}`), Schema: json.RawMessage(`{"type":"boolean"}`),
			State: json.RawMessage(`[1,"two",null]`), CreatedAt: at, ExpiresAt: &later, Trace: "00-abc-def-01",
			Assignees: []string{"alice", "group:finance"}, Escalations: 2},
		{ID: "q3", Message: "a <b> & \"c\"\n", Reason: "é", CreatedAt: at},
		{ID: "q4", Value: json.RawMessage(`{ "spaced": true }`), Schema: json.RawMessage(`{"pattern":"<x>"}`), CreatedAt: at},
		{ID: "q5", Value: json.RawMessage(`"\u2028"`), State: json.RawMessage(`"line\u2029"`), CreatedAt: at},
		{ID: "q6", Value: json.RawMessage(`"` + "\u2028" + `"`), CreatedAt: odd},
		{ID: "q7", CreatedAt: time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "q8", Path: []string{}, Assignees: []string{"\x01"}, Value: json.RawMessage(`null`), CreatedAt: at.In(time.FixedZone("y", -5*3600))},
	}
	for i, q := range cases {
		want, werr := q.marshalPlain()
		got, gerr := json.Marshal(q)
		if (werr == nil) != (gerr == nil) || string(got) != string(want) {
			t.Errorf("case %d: encoded\n %s (%v)\nwant\n %s (%v)", i, got, gerr, want, werr)
		}
	}
}
