package agent

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/interludehq/interlude"
)

func TestInterruptHistoriesEncodeAsEncodingJSONDoes(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 30, 0, 123456789, time.UTC)
	expires := at.Add(time.Hour)
	q := interlude.Interruption{ID: "int_1", Name: "approval", Node: "tools", Path: []string{"tools", "call_1"}, ToolCallID: "call_1",
		Message: `Allow <refund> "1"?`, Reason: interlude.ReasonToolApproval, Value: json.RawMessage(`{"a":1}`),
		Schema: json.RawMessage(`{"type":"object"}`), CreatedAt: at, ExpiresAt: &expires}
	spaced := q
	spaced.Value = json.RawMessage(`{ "a": "<b>" }`)
	for name, xs := range map[string][]interlude.Exchange{
		"none":       {},
		"pending":    {{Interrupt: q}},
		"resolved":   {{Interrupt: q, Resolution: &interlude.Resolution{Status: interlude.Resolved, Response: json.RawMessage(`{"action":"approve"}`), At: at}}},
		"rejected":   {{Interrupt: q, Resolution: &interlude.Resolution{InterruptID: "int_1", Status: interlude.Rejected, Error: &interlude.Rejection{Name: "Denied", Message: "no & never"}, By: "ann"}}},
		"cancelled":  {{Interrupt: q, Resolution: &interlude.Resolution{Status: interlude.Cancelled}}, {Interrupt: spaced}},
		"raw answer": {{Interrupt: q, Resolution: &interlude.Resolution{Status: interlude.Resolved, Response: json.RawMessage(` "<x>" `)}}},
	} {
		want, err := json.Marshal(xs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeExchanges(xs)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: encoded as %s (%v), encoding/json gives %s", name, got, err, want)
		}
	}
}

func TestApprovalValuesEncodeAsTheirMapDoes(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}}}`)
	for name, tc := range map[string]struct {
		args   string
		schema json.RawMessage
		vs     []interlude.Violation
	}{
		"valid":      {`{"order_id":"1"}`, schema, nil},
		"spaced":     {`{ "order_id": "1" }`, schema, nil},
		"html":       {`{"order_id":"<1>"}`, schema, nil},
		"not json":   {`{"order_id":`, schema, nil},
		"empty":      {``, schema, nil},
		"no schema":  {`{}`, nil, nil},
		"violations": {`{"order_id":1}`, schema, []interlude.Violation{{Path: "/order_id", Message: "want string"}}},
	} {
		c := &Call{ID: "call_<1>", Tool: "lookup", Arguments: json.RawMessage(tc.args)}
		want, err := json.Marshal(approvalValueMap(c, tc.schema, tc.vs))
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		v := approvalValue(c, tc.schema, tc.vs)
		if raw, ok := v.(json.RawMessage); ok {
			got = raw // stored as it is (interlude.Request.Value)
		} else {
			got, err = json.Marshal(v)
		}
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: encoded as %s (%v), the map gives %s", name, got, err, want)
		}
	}
}
