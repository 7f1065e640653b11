package interlude_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude"
)

func TestAnInterruptReadsBackAsWrittenWithNullsForWhatIsNotSet(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, q := range []interlude.Interruption{
		{ID: "int_1", Node: "refund", Path: []string{"refund"}, Message: "Approve?", Reason: interlude.ReasonToolApproval, CreatedAt: at},
		{ID: "int_2", Name: "amount", Node: "agent", ToolCallID: "call_1", Message: "How much?", Reason: interlude.ReasonInputRequired,
			Value: json.RawMessage(`{"max":5}`), Schema: json.RawMessage(`{"type":"integer"}`), State: json.RawMessage(`{"k":1}`), CreatedAt: at, ExpiresAt: &at},
	} {
		data, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"name", "tool_call_id", "value", "response_schema", "expires_at"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: %s is left out of %s; want it, null when not set", q.ID, k, data)
			}
		}
		if _, ok := m["state"]; ok != (q.State != nil) {
			t.Errorf("%s: state present = %v in %s", q.ID, ok, data)
		}
		var back interlude.Interruption
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, q) {
			t.Errorf("%s read back as %+v, want %+v", q.ID, back, q)
		}
	}
}

func TestAnAnswerSentNamesItsInterruptAndNothingItWasNotGiven(t *testing.T) {
	for _, c := range []struct {
		name string
		r    interlude.Resolution
		want string
	}{
		{"resolved", interlude.Resolve(true).For("int_1"), `{"interrupt_id":"int_1","status":"resolved","response":true}`},
		{"rejected", interlude.Reject(&interlude.RejectedError{Name: "Denied", Message: "no"}).For("int_2"), `{"interrupt_id":"int_2","status":"rejected","error":{"name":"Denied","message":"no"}}`},
		{"cancelled", interlude.Cancel().For("int_3"), `{"interrupt_id":"int_3","status":"cancelled"}`},
		{"the single pending one", interlude.Cancel(), `{"status":"cancelled"}`},
	} {
		data, err := json.Marshal(c.r)
		if err != nil || string(data) != c.want {
			t.Errorf("%s: %s (%v), want %s", c.name, data, err, c.want)
		}
	}
	if !interlude.Resolve(1).For("a").Same(interlude.Resolve(1).For("b")) {
		t.Error("two equal answers naming different interrupts are not the same answer")
	}
}

func TestEveryThreadStatusReportsOneRunStatusAndCompletedListsTheIdleThreads(t *testing.T) {
	for _, c := range []struct {
		text    string
		status  interlude.ThreadStatus
		outcome interlude.RunStatus
	}{
		{"idle", interlude.ThreadIdle, interlude.RunCompleted},
		{"completed", interlude.ThreadIdle, interlude.RunCompleted},
		{"running", interlude.ThreadRunning, interlude.RunCompleted},
		{"interrupted", interlude.ThreadInterrupted, interlude.RunInterrupted},
		{"failed", interlude.ThreadFailed, interlude.RunFailed},
	} {
		s, err := interlude.ParseThreadStatus(c.text)
		if err != nil || s != c.status || s.Outcome() != c.outcome {
			t.Errorf("%s reads as %q (%v) reporting %q; want %q reporting %q", c.text, s, err, s.Outcome(), c.status, c.outcome)
		}
	}
	_, err := interlude.ParseThreadStatus("done")
	if !errors.Is(err, interlude.ErrInvalidRequest) || !strings.Contains(err.Error(), "completed") {
		t.Errorf("an unknown status: %v; want invalid_request naming the statuses", err)
	}
}
