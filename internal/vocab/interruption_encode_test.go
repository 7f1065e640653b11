package vocab

import (
	"encoding/json"
	"testing"
	"time"
)

func TestAnInterruptEncodesAsEncodingJSONEncodesItsFields(t *testing.T) {
	at := time.Date(2026, 12, 1, 23, 50, 1, 123456789, time.UTC)
	later := at.Add(time.Hour).In(time.FixedZone("CET", 3600))
	cases := map[string]Interruption{
		"empty":   {},
		"nulls":   {ID: "q1", Node: "refund", Message: "Approve?", Reason: "tool_approval", CreatedAt: at},
		"compact": {ID: "q1", Node: "refund", Message: "Approve a refund of $150?", Reason: "tool_approval", Value: json.RawMessage(`{"amount":150,"note":"a b"}`), Schema: json.RawMessage(`{"type":"object","description":"say \"yes\" or no"}`), CreatedAt: at},
		"every field": {ID: "q2", Name: "approve", Node: "n", Path: []string{"outer", "inner"}, ToolCallID: "call_1", Message: "m", Reason: "r",
			Value: json.RawMessage(`[1,2.5e3,true,null]`), Schema: json.RawMessage(`{}`), State: json.RawMessage(`{"s":1}`), CreatedAt: at, ExpiresAt: &later,
			Trace: "00-abc-def-01", Assignees: []string{"alice", "ops"}, Escalations: 2},
		"unicode and escapes": {ID: "q\"3\\", Name: "naïve ✓", Node: "nœud", Message: "line\nbreak\ttab <b>&amp;</b> \u2028\u2029 \x01 \x7f é 日本 \xff", Reason: "😀",
			Value: json.RawMessage(`"caf\u00e9 日本 <x> & \u2028"`), Schema: json.RawMessage(`{"a":"\u2029","b":"<"}`), CreatedAt: at},
		"raw to compact":           {ID: "q4", Value: json.RawMessage(" { \"a\" : [ 1 , 2 ] }\n"), Schema: json.RawMessage("{\n\t\"type\": \"string\"\n}"), State: json.RawMessage(`  null `), CreatedAt: at},
		"raw nulls":                {ID: "q5", Value: json.RawMessage(`null`), Schema: json.RawMessage(`null`), State: json.RawMessage(`null`)},
		"empty path and assignees": {ID: "q6", Path: []string{}, Assignees: []string{}, Escalations: -1, CreatedAt: at.Local()},
	}
	for name, q := range cases {
		got, gerr := q.MarshalJSON()
		want, werr := q.marshalPlain()
		if gerr != nil || werr != nil {
			t.Errorf("%s: errors %v and %v", name, gerr, werr)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

func TestAnInterruptThatCannotBeEncodedFailsAsEncodingJSONDoes(t *testing.T) {
	bad := map[string]Interruption{
		"invalid value":     {ID: "q1", Value: json.RawMessage(`{"a":`)},
		"empty schema":      {ID: "q1", Schema: json.RawMessage{}},
		"year out of range": {ID: "q1", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for name, q := range bad {
		_, gerr := q.MarshalJSON()
		_, werr := q.marshalPlain()
		if gerr == nil || werr == nil || gerr.Error() != werr.Error() {
			t.Errorf("%s: error %v, want %v", name, gerr, werr)
		}
	}
}
