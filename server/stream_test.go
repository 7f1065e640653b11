package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
)

func decode(raw json.RawMessage, v any) error { return json.Unmarshal(raw, v) }

// streamBlocking streams a run of the blocking graph and checks that its events
// arrive while the node is still blocked.
func streamBlocking(t *testing.T, sse bool) {
	entered, release := make(chan struct{}), make(chan struct{})
	e := newEnv(t, setup{graphs: []builder{blockingGraph(entered, release)}})
	c := e.client()
	req := client.InvokeRequest{Graph: "blocking", ThreadID: "b", Input: map[string]any{"n": 1}}
	seq := c.Stream(context.Background(), req)
	if sse {
		seq = c.StreamSSE(context.Background(), req)
	}
	var got []client.Event
	released := false
	for ev, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
		if ev.Event == "messages" && !released {
			// The node emitted this and is now blocked until released: the event
			// arrived before the run ended.
			<-entered
			released = true
			close(release)
		}
	}
	if !released {
		t.Fatalf("no messages event arrived: %+v", got)
	}
	var names []string
	for _, ev := range got {
		names = append(names, ev.Event)
	}
	if strings.Join(names, ",") != "metadata,messages,updates,end" {
		t.Fatalf("events %v", names)
	}
	var meta map[string]any
	decode(got[0].Data, &meta)
	if meta["thread_id"] != "b" || meta["graph"] != "blocking" || !strings.HasPrefix(meta["run_id"].(string), "run_") {
		t.Fatalf("metadata %s", got[0].Data)
	}
	sameJSON(t, "messages", got[1].Data, `{"text":"working"}`)
	sameJSON(t, "updates", got[2].Data, `{"wait":{"done":true}}`)
	res, err := got[3].Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "completed" {
		t.Fatalf("end %s", got[3].Data)
	}
	sameJSON(t, "end values", res.Values, `{"n":1,"done":true}`)
	if sse {
		for i, ev := range got {
			if ev.ID == "" || (i > 0 && ev.ID <= got[i-1].ID) {
				t.Fatalf("SSE ids are not increasing: %+v", got)
			}
		}
	}
}

func TestNDJSONStreamEventsArriveBeforeTheRunEnds(t *testing.T) { streamBlocking(t, false) }

func TestSSEStreamEventsArriveBeforeTheRunEnds(t *testing.T) { streamBlocking(t, true) }

func TestStreamPauseEventHasTheSeedsShape(t *testing.T) {
	e := newEnv(t, setup{})
	a := e.post("/v1/graph/stream", `{"graph":"refund","input":{"amount":150},"config":{"thread_id":"s"}}`)
	expect(t, a, 200, "")
	if ct := a.header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("Content-Type %q", ct)
	}
	var lines []map[string]json.RawMessage
	sc := bufio.NewScanner(strings.NewReader(string(a.body)))
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if len(m) != 2 || m["event"] == nil || m["data"] == nil {
			t.Fatalf("line %q is not {event, data}", sc.Text())
		}
		lines = append(lines, m)
	}
	if len(lines) != 3 || string(lines[0]["event"]) != `"metadata"` || string(lines[1]["event"]) != `"updates"` || string(lines[2]["event"]) != `"end"` {
		t.Fatalf("lines %s", a.body)
	}
	var pause map[string]any
	json.Unmarshal(lines[1]["data"], &pause)
	q := pause["interrupt"].(map[string]any)
	if pause["status"] != "interrupted" || pause["node"] != "refund" || len(pause) != 3 {
		t.Fatalf("pause %s", lines[1]["data"])
	}
	for _, k := range []string{"id", "name", "node", "tool_call_id", "message", "reason", "value", "response_schema", "created_at", "expires_at"} {
		if _, ok := q[k]; !ok {
			t.Errorf("the pause's interrupt lacks %q", k)
		}
	}
	if _, ok := q["state"]; ok {
		t.Errorf("the pause shows private state")
	}
	if q["message"] != "Approve a refund of $150?" || q["reason"] != "tool_approval" || q["tool_call_id"] != nil {
		t.Fatalf("interrupt %v", q)
	}
	var end map[string]any
	json.Unmarshal(lines[2]["data"], &end)
	if end["status"] != "interrupted" || end["thread_id"] != "s" {
		t.Fatalf("end %v", end)
	}
	sameJSON(t, "end.interrupts[0]", end["interrupts"].([]any)[0], q)
	sameJSON(t, "end.values", end["values"], `{"amount":150,"attempts":1}`)

	// Resuming over SSE: raw frames are event/data/id blocks.
	s := e.do(http.MethodPost, "/v1/graph/stream", `{"resume":{"approved":true},"config":{"thread_id":"s"},"response_granularity":"full"}`, "", "Accept", "text/event-stream")
	expect(t, s, 200, "")
	if ct := s.header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	blocks := strings.Split(strings.TrimSpace(string(s.body)), "\n\n")
	if len(blocks) != 3 || !strings.HasPrefix(blocks[0], "event: metadata\ndata: {") || !strings.HasSuffix(blocks[0], "\nid: 1") ||
		!strings.HasPrefix(blocks[1], "event: updates\ndata: {\"refund\":") || !strings.HasPrefix(blocks[2], "event: end\ndata: ") {
		t.Fatalf("SSE body:\n%s", s.body)
	}
	if !strings.Contains(blocks[2], `"outcome":"refunded"`) || !strings.Contains(blocks[2], `"execution_meta":{"status":"completed"}`) {
		t.Fatalf("end block %s", blocks[2])
	}
}

func TestStreamRefusalsAreHTTPErrorsBeforeAnyEvent(t *testing.T) {
	e := newEnv(t, setup{})
	e.start("parallel", "p", `{}`)
	c := e.client()
	e.unchanged("p", func() {
		n := 0
		for ev, err := range c.Stream(context.Background(), client.InvokeRequest{ThreadID: "p", Resume: true}) {
			n++
			if !errors.Is(err, interlude.ErrAmbiguousResume) {
				t.Fatalf("event %+v err %v", ev, err)
			}
		}
		if n != 1 {
			t.Fatalf("%d items", n)
		}
	})
}

func TestStreamOfAFailingRunSendsErrorThenEnd(t *testing.T) {
	e := newEnv(t, setup{})
	var names []string
	var last client.Event
	for ev, err := range e.client().Stream(context.Background(), client.InvokeRequest{Graph: "flaky", ThreadID: "f", Input: map[string]any{"fail": true}}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ev.Event)
		if ev.Event == "error" {
			var eo map[string]any
			decode(ev.Data, &eo)
			if eo["code"] != "run_failed" || !strings.Contains(eo["message"].(string), "boom") {
				t.Fatalf("error event %s", ev.Data)
			}
		}
		last = ev
	}
	if strings.Join(names, ",") != "metadata,error,end" {
		t.Fatalf("events %v", names)
	}
	res, _ := last.Result()
	if res.Status != "failed" || !strings.Contains(res.Error, "boom") {
		t.Fatalf("end %s", last.Data)
	}
}

func TestStreamOfAnIdenticalReplayAnswersMetadataAndEnd(t *testing.T) {
	e := newEnv(t, setup{})
	res := e.start("refund", "r", `{"amount":3}`)
	id := res["interrupts"].([]any)[0].(map[string]any)["id"].(string)
	body := `{"responses":[{"interrupt_id":"` + id + `","status":"resolved","response":{"approved":true}}],"config":{"thread_id":"r"}}`
	expect(t, e.post("/v1/graph/invoke", body), 200, "")
	a := e.post("/v1/graph/stream", body)
	expect(t, a, 200, "")
	lines := strings.Split(strings.TrimSpace(string(a.body)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"event":"metadata"`) || !strings.HasPrefix(lines[1], `{"event":"end"`) ||
		!strings.Contains(lines[1], `"outcome":"refunded"`) {
		t.Fatalf("replay stream:\n%s", a.body)
	}
}

func TestMessagesInputBecomesTheMessagesFieldAndIsAnswered(t *testing.T) {
	e := newEnv(t, setup{})
	a := e.post("/v1/graph/invoke", `{"graph":"chat","messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}],"config":{"thread_id":"c"}}`)
	expect(t, a, 200, "")
	m := a.json(t)
	want := `[{"role":"user","content":[{"type":"text","text":"hello"}]},{"role":"assistant","content":[{"type":"text","text":"hi"}]}]`
	sameJSON(t, "messages", m["messages"], want)
	sameJSON(t, "values.messages", m["values"].(map[string]any)["messages"], want)
	th := e.do(http.MethodGet, "/v1/threads/c", "", "").json(t)
	sameJSON(t, "thread messages", th["messages"], want)
	// A thread id is made when none is given.
	a = e.post("/v1/graph/invoke", `{"graph":"chat","messages":[]}`)
	expect(t, a, 200, "")
	if id := a.json(t)["thread_id"].(string); !strings.HasPrefix(id, "thr_") || len(id) < 20 {
		t.Fatalf("thread id %q", id)
	}
}

func TestStreamEndReportsItsOwnCheckpointEvenIfTheThreadMovedOn(t *testing.T) {
	var f *faulty
	e := newEnv(t, setup{wrap: func(s store.Store) store.Store { f = newFaulty(s); return f }})
	// Right after the stream's run ends, and before the server reads the thread
	// back, another request continues the thread to its next breakpoint.
	f.onLoad <- func() {
		expect(t, e.post("/v1/graph/invoke", `{"config":{"thread_id":"g"}}`), 200, "")
	}
	var end client.Event
	for ev, err := range e.client().Stream(context.Background(), client.InvokeRequest{Graph: "gated", ThreadID: "g", Input: map[string]any{"topic": "x"}, Granularity: client.Full}) {
		if err != nil {
			t.Fatal(err)
		}
		end = ev
	}
	res, err := end.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Breakpoint == nil || *res.Breakpoint != (graph.Breakpoint{Node: "draft", When: "after"}) || res.State.ExecutionMeta.Status != "interrupted_after" {
		t.Fatalf("end %s", end.Data)
	}
	sameJSON(t, "end values", res.Values, `{"topic":"x","draft":"A short note about x."}`)
	th, _ := e.client().Thread(context.Background(), "g")
	if th.Breakpoint == nil || th.Breakpoint.Node != "publish" {
		t.Fatalf("the thread did not move on: %+v", th)
	}
}
