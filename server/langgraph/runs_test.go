package langgraph_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

func (s *lgServer) startGate(id string, extra map[string]any) map[string]any {
	s.t.Helper()
	body := map[string]any{"input": map[string]any{}, "assistant_id": "gate", "stream_resumable": true, "stream_mode": []string{"values", "updates"}}
	for k, v := range extra {
		body[k] = v
	}
	var run map[string]any
	s.must(200, "POST", "/threads/"+id+"/runs", body, &run)
	<-s.in // the node runs
	return run
}

// get streams a GET in the background and hands over its body.
func (s *lgServer) get(path string, header ...string) <-chan string {
	ch := make(chan string, 1)
	req, _ := http.NewRequest("GET", s.url+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		ch <- string(data)
	}()
	return ch
}

func TestABusyThreadRefusesASecondRunAndItsRunCanBeJoined(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	run := s.startGate(id, nil)
	rid := run["run_id"].(string)
	var th threadObj
	s.must(200, "GET", "/threads/"+id, nil, &th)
	if th.Status != "busy" {
		t.Fatalf("a thread whose run is going reads %s, want busy", th.Status)
	}
	r := s.call("POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{}, "assistant_id": "gate"})
	if r.status != 409 || !strings.Contains(string(r.body), "thread_busy") {
		t.Fatalf("a second run answered %d %s, want 409 thread_busy", r.status, r.body)
	}
	joined := s.get("/threads/"+id+"/runs/"+rid+"/stream", "Last-Event-ID", "-1")
	output := s.get("/threads/" + id + "/runs/" + rid + "/join")
	close(s.gate)
	evs := events(t, []byte(<-joined))
	if len(evs) < 3 || evs[0].name != "metadata" || evs[0].id != "0" || len(named(evs, "updates")) != 1 {
		t.Fatalf("joining the stream from the start gave %v", evs)
	}
	if out := <-output; !strings.Contains(out, `"n":1`) {
		t.Fatalf("join answered %q, want the final values", out)
	}
	var got map[string]any
	s.must(200, "GET", "/threads/"+id+"/runs/"+rid, nil, &got)
	if got["status"] != "success" {
		t.Fatalf("the finished run reads %v", got)
	}
	// Reconnecting after event 0 replays the rest.
	replay := events(t, []byte(<-s.get("/threads/"+id+"/runs/"+rid+"/stream", "Last-Event-ID", "0")))
	if len(replay) != len(evs)-1 || replay[0].id != "1" {
		t.Fatalf("the replay after event 0 is %v, want events 1 on of %v", replay, evs)
	}
	var runs []map[string]any
	s.must(200, "GET", "/threads/"+id+"/runs", nil, &runs)
	if len(runs) != 1 || runs[0]["run_id"] != rid {
		t.Fatalf("the thread's runs are %v", runs)
	}
}

func TestACancelledRunLeavesItsThreadFreeAndInterruptTakesOver(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	first := s.startGate(id, nil)
	s.must(204, "POST", "/threads/"+id+"/runs/"+first["run_id"].(string)+"/cancel?wait=1", nil, nil)
	var got map[string]any
	s.must(200, "GET", "/threads/"+id+"/runs/"+first["run_id"].(string), nil, &got)
	if got["status"] != "interrupted" {
		t.Fatalf("the cancelled run reads %v, want interrupted", got["status"])
	}
	second := s.startGate(id, nil)
	third := s.startGate(id, map[string]any{"multitask_strategy": "interrupt"})
	s.must(200, "GET", "/threads/"+id+"/runs/"+second["run_id"].(string), nil, &got)
	if got["status"] != "interrupted" {
		t.Fatalf("the run taken over reads %v, want interrupted", got["status"])
	}
	close(s.gate)
	var out map[string]any
	s.must(200, "GET", "/threads/"+id+"/runs/"+third["run_id"].(string)+"/join", nil, &out)
	if out["n"] != 1.0 {
		t.Fatalf("the run that took over ended with %v", out)
	}
}

// replicas serves the refund graph twice over one store, as two replicas
// would.
func replicas(t *testing.T, st store.Store) (a, b *lgServer) {
	t.Helper()
	serve := func() *lgServer {
		refund, err := graphs.Refund(graph.WithStore(st))
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(server.WithGraph(refund.Erase()), server.WithLogger(slog.New(slog.DiscardHandler)), server.WithLangGraphAPI())
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		t.Cleanup(func() {
			hs.Close()
			srv.Close()
		})
		return &lgServer{t: t, url: hs.URL}
	}
	return serve(), serve()
}

// heldRuns is a store whose writes of a LangGraph run's record wait, once
// armed, until the test lets them through.
type heldRuns struct {
	*memory.Store
	armed   atomic.Bool
	writing chan struct{} // receives when a held write starts
	release chan struct{} // closed to let it through
}

func (h *heldRuns) PutDocument(ctx context.Context, d store.Document) error {
	if d.Kind == "langgraph.run" && h.armed.CompareAndSwap(true, false) {
		h.writing <- struct{}{}
		<-h.release
	}
	return h.Store.PutDocument(ctx, d)
}

func TestAWaitedRunsEndIsRecordedBeforeItsAnswer(t *testing.T) {
	st := &heldRuns{Store: memory.New(), writing: make(chan struct{}), release: make(chan struct{})}
	a, b := replicas(t, st)
	id := a.newThread()
	st.armed.Store(true)
	answered := make(chan reply, 1)
	go func() {
		answered <- a.call("POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"amount": 150}, "assistant_id": "refund"})
	}()
	select {
	case <-st.writing:
	case r := <-answered:
		t.Fatalf("the run answered %d before its end was recorded", r.status)
	}
	// While the record waits, the answer must too.
	select {
	case r := <-answered:
		t.Fatalf("the run answered %d while its end was still being recorded", r.status)
	case <-time.After(100 * time.Millisecond):
	}
	close(st.release)
	paused := <-answered
	if paused.status != 200 {
		t.Fatalf("the run answered %d: %s", paused.status, paused.body)
	}
	rid := strings.TrimSuffix(strings.TrimPrefix(paused.header.Get("Location"), "/threads/"+id+"/runs/"), "/join")
	// Answered, the run's end is recorded: another replica reads it at once.
	var got map[string]any
	b.must(200, "GET", "/threads/"+id+"/runs/"+rid, nil, &got)
	if got["status"] != "success" {
		t.Fatalf("another replica reads the answered run as %v, want success", got["status"])
	}
	var out map[string]any
	b.must(200, "GET", "/threads/"+id+"/runs/"+rid+"/join", nil, &out)
	if out["__interrupt__"] == nil {
		t.Fatalf("joining the answered run on another replica answered %v, want its output, paused", out)
	}
	b.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"command": map[string]any{"resume": map[string]any{"approved": true}}, "assistant_id": "refund"}, nil)
	var runs []map[string]any
	a.must(200, "GET", "/threads/"+id+"/runs", nil, &runs)
	if len(runs) != 2 || runs[0]["status"] != "success" || runs[1]["run_id"] != rid {
		t.Fatalf("the replica that ran the first run lists %v, want both, the resumed one first and ended", runs)
	}
}
