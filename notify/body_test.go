package notify

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
)

// storedNotification is a notification as the dispatcher makes it from a
// notice whose payload the runtime stored as json.Marshal writes it.
func storedNotification(t testing.TB, typ string, d graph.NoticeData, inbox string) *Notification {
	t.Helper()
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	n := &Notification{Notice: store.Notice{ID: "evt_0123<&>", Type: typ, Data: raw, CreatedAt: time.Date(2026, 12, 2, 1, 2, 3, 456789, time.UTC)}, InboxURL: inbox}
	if err := json.Unmarshal(raw, &n.Data); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTheWebhookBodyIsWhatEncodingThePayloadWrites(t *testing.T) {
	at := time.Date(2026, 12, 1, 8, 0, 0, 123, time.UTC)
	expires := at.Add(time.Hour)
	q := &interlude.Interruption{ID: "q1", Node: "approve", Message: "Refund <b>€40</b> & more?", Reason: "approval",
		Value: json.RawMessage(`{"amount":40,"note":"\u003cok\u003e"}`), CreatedAt: at, ExpiresAt: &expires, Assignees: []string{"ops"}}
	cases := []struct {
		name, typ, inbox string
		data             graph.NoticeData
	}{
		{"raised", store.NoticeRaised, "", graph.NoticeData{ThreadID: "t1", Graph: "refund", Checkpoint: 2, Interrupt: q}},
		{"raised with an inbox link", store.NoticeRaised, "https://x.example/inbox/#/q/t1/q1", graph.NoticeData{ThreadID: "t1", Graph: "refund", Checkpoint: 2, Interrupt: q}},
		{"answered", store.NoticeAnswered, "https://x.example/inbox/#/q/t1/q1", graph.NoticeData{ThreadID: "t1", Graph: "refund", Checkpoint: 3, Interrupt: q,
			Resolution: &interlude.Resolution{Status: interlude.Resolved, Response: json.RawMessage(`true`), By: "ann <ann@x.example>", At: at}}},
		{"expired, so answered by nobody", store.NoticeExpired, "", graph.NoticeData{ThreadID: "t1", Graph: "refund", Checkpoint: 3, Interrupt: q,
			Resolution: &interlude.Resolution{Status: interlude.Expired, By: "system", At: at}}},
		{"a failed thread", store.NoticeFailed, "https://x.example/inbox/#/", graph.NoticeData{ThreadID: "t2", Graph: "refund", Checkpoint: 1, Error: "boom \"quoted\"\n"}},
		{"nothing", store.NoticeFailed, "", graph.NoticeData{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := storedNotification(t, c.typ, c.data, c.inbox)
			want, err := json.Marshal(PayloadOf(n))
			if err != nil {
				t.Fatal(err)
			}
			got, err := payloadBody(n)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("body\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestAWebhookBodyOfAPayloadStoredInAnotherFormReadsTheSame(t *testing.T) {
	for _, data := range []string{` { "thread_id" : "t1", "graph":"refund" , "checkpoint": 4 } `, `{}`, ` {  } `, `null`,
		`{"graph":"refund","thread_id":"t1"}`, `{"thread_id":"t1","extra":[1,2]}`} {
		n := &Notification{Notice: store.Notice{ID: "evt_1", Type: store.NoticeRaised, Data: json.RawMessage(data)}, InboxURL: "https://x.example/inbox/#/"}
		if err := json.Unmarshal(n.Notice.Data, &n.Data); err != nil {
			t.Fatal(err)
		}
		got, err := payloadBody(n)
		if err != nil {
			t.Fatal(err)
		}
		var p Payload
		if err := json.Unmarshal(got, &p); err != nil {
			t.Fatalf("%s: the body is not a payload: %v\n%s", data, err, got)
		}
		if want := PayloadOf(n); !reflect.DeepEqual(p, want) {
			t.Errorf("%s: body\n%s\nreads as %+v, want %+v", data, got, p, want)
		}
	}
}

func FuzzTheWebhookBodyIsWhatEncodingThePayloadWrites(f *testing.F) {
	f.Add("t1", "refund", "Approve?", "approval", `{"a":1}`, "ann", "https://x.example/", int64(3), true)
	f.Add("", "", "", "", `null`, "", "", int64(0), false)
	f.Add("t<>&", "g\u2028", "m\x00", "r\"", `[1,"\u003c"]`, "é", "u", int64(-1), true)
	f.Fuzz(func(t *testing.T, thread, graphName, message, reason, value, by, inbox string, checkpoint int64, answered bool) {
		if !json.Valid([]byte(value)) {
			value = "null"
		}
		d := graph.NoticeData{ThreadID: thread, Graph: graphName, Checkpoint: checkpoint,
			Interrupt: &interlude.Interruption{ID: "q", Message: message, Reason: reason, Value: json.RawMessage(value)}}
		typ := store.NoticeRaised
		if answered {
			typ, d.Resolution = store.NoticeAnswered, &interlude.Resolution{Status: interlude.Resolved, By: by}
		}
		n := storedNotification(t, typ, d, inbox)
		want, err := json.Marshal(PayloadOf(n))
		if err != nil {
			t.Skip(err)
		}
		got, err := payloadBody(n)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("body\n%s\nwant\n%s", got, want)
		}
	})
}

func TestANoticesPayloadReadsAsEncodingJSONReadsIt(t *testing.T) {
	at := time.Date(2026, 12, 1, 8, 0, 0, 123, time.UTC)
	stored := func(d graph.NoticeData) string {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	q := &interlude.Interruption{ID: "q1", Name: "refund", Node: "approve", Path: []string{"approve", "call_1"}, ToolCallID: "call_1",
		Message: "Refund <b>€40</b>?", Reason: "approval", Value: json.RawMessage(`{"amount":40}`), Schema: json.RawMessage(`{"type":"boolean"}`),
		CreatedAt: at, Trace: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Assignees: []string{"ops", "ann"}, Escalations: 2}
	for _, data := range []string{
		stored(graph.NoticeData{ThreadID: "t1", Graph: "refund", Checkpoint: 2, Interrupt: q}),
		stored(graph.NoticeData{ThreadID: "t1", Graph: "refund", Checkpoint: 3, Interrupt: q, Resolution: &interlude.Resolution{
			Status: interlude.Rejected, Error: &interlude.Rejection{Name: "Denied", Message: "no"}, By: "ann", At: at}}),
		stored(graph.NoticeData{ThreadID: "t1", Graph: "refund", Checkpoint: 4, Interrupt: q, Escalation: &graph.Escalation{
			InterruptID: "q1", Step: 1, Notify: []string{"ops"}, ReassignTo: []string{"bob"}, By: "policy"}}),
		stored(graph.NoticeData{ThreadID: "t2", Graph: "refund", Checkpoint: 1, Error: "boom"}),
		`{"thread_id":"t1","interrupt":{"id":"q1","value":null,"response_schema":null,"state":null,"expires_at":null,"name":null}}`,
		`{"thread_id":"t1","interrupt":null}`,
		`{"Thread_ID":"t1","GRAPH":"refund","interrupt":{"ID":"q1","Message":"m"}}`,
		`{"thread_id":"t1","thread_id":"t2","interrupt":{"id":"q1","id":"q2"}}`,
		"{\"thread_id\":\"t\xff1\",\"interrupt\":{\"id\":\"q1\",\"value\":\"\xfe\"}}",
		`{"thread_id":"t1","extra":[1,{"a":null}],"interrupt":{"id":"q1","more":true}}`,
		`null`, `{}`,
	} {
		var want, got graph.NoticeData
		werr := json.Unmarshal([]byte(data), &want)
		gerr := readNoticeData([]byte(data), &got)
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nread  %+v (%v)\nwant %+v (%v)", data, got, gerr, want, werr)
		}
	}
	for _, data := range []string{`{"thread_id":1}`, `{"interrupt":[]}`, `{`, ``} {
		var d graph.NoticeData
		if err := readNoticeData([]byte(data), &d); err == nil {
			t.Errorf("%s: read without an error", data)
		}
	}
}

func FuzzANoticesPayloadReadsAsEncodingJSONReadsIt(f *testing.F) {
	f.Add(`{"thread_id":"t1","graph":"refund","checkpoint":2,"interrupt":{"id":"q1","node":"approve","message":"m","reason":"r","created_at":"2026-12-02T16:31:32.519950795Z","expires_at":null,"name":null,"tool_call_id":null,"value":{"amount":40},"response_schema":null}}`)
	f.Add(`{"interrupt":{"Value":null,"assignees":["a"]},"resolution":{"status":"resolved","response":true,"at":"2026-12-02T16:31:32Z"}}`)
	f.Fuzz(func(t *testing.T, data string) {
		var want, got graph.NoticeData
		werr := json.Unmarshal([]byte(data), &want)
		gerr := readNoticeData([]byte(data), &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: error %v, encoding/json says %v", data, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\nread  %+v\nwant %+v", data, got, want)
		}
	})
}
