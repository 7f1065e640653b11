package server

import (
	"bytes"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// marshaled is what encoding/json answers v with.
func marshaled(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return append(data, '\n')
}

func answerOf(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := encodeAnswer(&buf, v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestARunAnswerReadsAsEncodingJSONWritesIt(t *testing.T) {
	created := time.Date(2026, 12, 2, 1, 2, 3, 456789, time.UTC)
	expires := created.Add(time.Hour)
	q := interlude.Interruption{ID: "int_1", Node: "approve", Path: []string{"approve", "call<1>"}, Message: "Refund $150 & more <b>?</b>",
		Reason: "approval", Value: json.RawMessage(`{"amount":150}`), Schema: json.RawMessage(`{"type":"object"}`), CreatedAt: created, ExpiresAt: &expires}
	cases := map[string]*graph.Result[json.RawMessage]{
		"paused, low":        {ThreadID: "load-1", Status: interlude.RunInterrupted, Interrupts: []interlude.Interruption{q}},
		"no interrupts":      {ThreadID: "t", Status: interlude.RunCompleted, Interrupts: []interlude.Interruption{}},
		"nil interrupts":     {ThreadID: "t", Status: interlude.RunCompleted},
		"partial":            {ThreadID: "t", Status: interlude.RunCompleted, Interrupts: []interlude.Interruption{}, Values: json.RawMessage(`{"amount":150,"outcome":"refunded"}`), Next: []string{"a", "b\u2028"}, Checkpoint: 7},
		"messages":           {ThreadID: "t", Status: interlude.RunInterrupted, Interrupts: []interlude.Interruption{q, q}, Values: json.RawMessage(`{"messages":[{"role":"user"}]}`), Messages: json.RawMessage(`[{"role":"user"}]`), Checkpoint: 3},
		"failed":             {ThreadID: "t\"\x01\xff", Status: interlude.RunFailed, Interrupts: []interlude.Interruption{}, Error: "boom <script>&\u2029"},
		"values with spaces": {ThreadID: "t", Status: interlude.RunCompleted, Interrupts: []interlude.Interruption{}, Values: json.RawMessage(`{ "a" : 1 }`)},
		"values with html":   {ThreadID: "t", Status: interlude.RunCompleted, Interrupts: []interlude.Interruption{}, Values: json.RawMessage(`{"a":"<&>"}`)},
		"replayed":           {ThreadID: "t", Status: interlude.RunCompleted, Interrupts: []interlude.Interruption{}, Replayed: true, Replays: []interlude.Resolution{interlude.Cancel()}},
		"breakpoint":         {ThreadID: "t", Status: interlude.RunInterrupted, Interrupts: []interlude.Interruption{}, Breakpoint: &graph.Breakpoint{Node: "n"}},
		"state":              {ThreadID: "t", Status: interlude.RunCompleted, Interrupts: []interlude.Interruption{}, State: &graph.RunState[json.RawMessage]{Values: json.RawMessage(`{}`)}},
		"interrupt state":    {ThreadID: "t", Status: interlude.RunInterrupted, Interrupts: []interlude.Interruption{{ID: "i", State: json.RawMessage(`{"x": 1}`), CreatedAt: created}}},
	}
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			for _, g := range []granularity{low, partial, full} {
				a := resultAt(r, g)
				if got, want := answerOf(t, a), marshaled(t, a); !bytes.Equal(got, want) {
					t.Fatalf("granularity %d:\n got %s\nwant %s", g, got, want)
				}
			}
		})
	}
	// The answers of a pause and of a run's end are written field by field.
	for _, name := range []string{"paused, low", "partial", "messages", "failed"} {
		if _, ok := appendResult(nil, resultAt(cases[name], partial)); !ok {
			t.Errorf("%s: left to encoding/json", name)
		}
	}
	if got, want := answerOf(t, map[string]string{"status": "ok"}), marshaled(t, map[string]string{"status": "ok"}); !bytes.Equal(got, want) {
		t.Fatalf("another answer:\n got %s\nwant %s", got, want)
	}
}

// FuzzARunAnswerReadsAsEncodingJSONWritesIt checks the run answer's encoder
// against encoding/json on arbitrary strings and raw values.
func FuzzARunAnswerReadsAsEncodingJSONWritesIt(f *testing.F) {
	f.Add("load-1", "interrupted", "", []byte(`{"amount":150}`), "approve", "Refund?", int64(3), false)
	f.Add("t<", "failed", "bad\x00\xff", []byte(`{"a": [1, 2]}`), "n\u2028", "m&", int64(0), true)
	f.Fuzz(func(t *testing.T, id, status, errText string, values []byte, node, message string, checkpoint int64, replayed bool) {
		if !json.Valid(values) {
			values = nil
		}
		r := &graph.Result[json.RawMessage]{ThreadID: id, Status: interlude.RunStatus(status), Error: errText, Values: values,
			Next: []string{node}, Checkpoint: checkpoint, Replayed: replayed,
			Interrupts: []interlude.Interruption{{ID: id, Node: node, Message: message, Reason: status, Value: values, CreatedAt: time.Unix(checkpoint%1e10, 0).UTC()}}}
		if got, want := answerOf(t, r), marshaled(t, r); !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

func TestALiveEventReadsAsEncodingJSONWritesIt(t *testing.T) {
	for _, id := range []string{"load-1", "t<&>\u2028\"\\", "\xff"} {
		for _, e := range []graph.Event{
			{Type: graph.EventMetadata, ThreadID: id, Checkpoint: 12},
			{Type: graph.EventEnd, ThreadID: id, Status: interlude.RunCompleted, Checkpoint: 13},
			{Type: graph.EventEnd, ThreadID: id, Status: interlude.RunStatus(id)},
			{Type: graph.EventUpdate, ThreadID: id, Node: id, Update: json.RawMessage(`{"a":1}`)},
			{Type: graph.EventUpdate, ThreadID: id, Node: "n"},
		} {
			name, data, ok := encodeLive(e)
			if !ok {
				t.Fatalf("%v: left out", e)
			}
			var want []byte
			var err error
			switch e.Type {
			case graph.EventMetadata:
				want, err = json.Marshal(metadataData{ThreadID: e.ThreadID, Checkpoint: e.Checkpoint})
			case graph.EventEnd:
				want, err = json.Marshal(liveEndData{ThreadID: e.ThreadID, Status: e.Status, Checkpoint: e.Checkpoint})
			default:
				upd := e.Update
				if len(upd) == 0 {
					upd = json.RawMessage("{}")
				}
				want, err = json.Marshal(map[string]json.RawMessage{e.Node: upd})
			}
			if err != nil {
				t.Fatal(err)
			}
			if name != string(e.Type) && !(e.Type == graph.EventUpdate && name == "updates") {
				t.Fatalf("%v: named %q", e, name)
			}
			if !bytes.Equal(data, want) {
				t.Fatalf("%v:\n got %s\nwant %s", e, data, want)
			}
		}
	}
}

func TestAPauseEventReadsAsEncodingJSONWritesIt(t *testing.T) {
	created := time.Date(2026, 12, 2, 1, 2, 3, 456789, time.UTC)
	expires := created.Add(time.Hour)
	for _, q := range []interlude.Interruption{
		{ID: "int_1", Node: "approve", Message: "Refund $150?", Reason: "approval", Value: json.RawMessage(`{"amount":150}`), CreatedAt: created},
		{ID: "i<&>", Node: "n\u2028\"\xff", Path: []string{"a", "b<1>"}, Message: "<b>&</b>", State: json.RawMessage(`{"x":1}`), Trace: "00-ab",
			Assignees: []string{"ops"}, Escalations: 2, Name: "tool", ToolCallID: "c1", Schema: json.RawMessage(`{"type":"object"}`), CreatedAt: created, ExpiresAt: &expires},
		{ID: "spaced", Node: "n", Value: json.RawMessage(`{ "a" : "<&>" }`), CreatedAt: created},
	} {
		name, data, ok := encodeLive(graph.Event{Type: graph.EventInterrupt, ThreadID: "t", Node: q.Node, Interrupt: &q})
		if !ok || name != "updates" {
			t.Fatalf("%s: named %q, %v", q.ID, name, ok)
		}
		s := shown(q)
		want, err := json.Marshal(pauseData{Status: "interrupted", Node: q.Node, Interrupt: &s})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, want) {
			t.Fatalf("%s:\n got %s\nwant %s", q.ID, data, want)
		}
	}
}

func TestALoopbackHostIsToldAsNetParseIPTellsIt(t *testing.T) {
	for _, h := range []string{"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1", "fe80::1%lo", "::1%lo",
		"10.0.0.1", "0127.0.0.1", "127.000.0.1", "1.2.3.4", "::", "example.com", "", "localhost", "127.0.0.1.", "[::1]"} {
		ip := net.ParseIP(h)
		if got, want := isLoopbackIP(h), ip != nil && ip.IsLoopback(); got != want {
			t.Errorf("isLoopbackIP(%q) = %v, net.ParseIP says %v", h, got, want)
		}
	}
}
