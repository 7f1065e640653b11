package langgraph_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/langgraph"
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
		srv := refundServer(t, st)
		hs := httptest.NewServer(srv)
		t.Cleanup(func() {
			hs.Close()
			srv.Close()
		})
		return &lgServer{t: t, url: hs.URL}
	}
	return serve(), serve()
}

// heldRuns is a store whose writes of a LangGraph run's record, alone or
// with a commit, wait, once armed, until the test lets them through.
type heldRuns struct {
	*memory.Store
	armed   atomic.Bool
	writing chan struct{} // receives when a held write starts
	release chan struct{} // closed to let it through
}

func (h *heldRuns) PutDocument(ctx context.Context, d store.Document) error {
	h.hold(d)
	return h.Store.PutDocument(ctx, d)
}

func (h *heldRuns) Append(ctx context.Context, a store.Append) error {
	for _, w := range a.Documents {
		if !w.Delete {
			h.hold(w.Document)
		}
	}
	return h.Store.Append(ctx, a)
}

func (h *heldRuns) hold(d store.Document) {
	if d.Kind == "langgraph.run" && h.armed.CompareAndSwap(true, false) {
		h.writing <- struct{}{}
		<-h.release
	}
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

// countedDocs is a store that counts the document writes made alone and
// those carried by commits.
type countedDocs struct {
	*memory.Store
	puts, deletes, carried atomic.Int64
}

func (c *countedDocs) PutDocument(ctx context.Context, d store.Document) error {
	c.puts.Add(1)
	return c.Store.PutDocument(ctx, d)
}

func (c *countedDocs) DeleteDocument(ctx context.Context, threadID, kind, key string) error {
	c.deletes.Add(1)
	return c.Store.DeleteDocument(ctx, threadID, kind, key)
}

func (c *countedDocs) Append(ctx context.Context, a store.Append) error {
	c.carried.Add(int64(len(a.Documents)))
	return c.Store.Append(ctx, a)
}

func TestARunsEndIsRecordedWithTheCommitThatEndsIt(t *testing.T) {
	st := &countedDocs{Store: memory.New()}
	a, b := replicas(t, st)
	plain := a.newThread()
	var tagged threadObj
	a.must(200, "POST", "/threads", map[string]any{"metadata": map[string]any{"team": "billing"}}, &tagged)
	for _, id := range []string{plain, tagged.ThreadID} {
		var runIDs []string
		for _, body := range []map[string]any{
			{"input": map[string]any{"amount": 150}, "assistant_id": "refund"},
			{"command": map[string]any{"resume": map[string]any{"approved": true}}, "assistant_id": "refund"},
		} {
			r := a.must(200, "POST", "/threads/"+id+"/runs/wait", body, nil)
			rid := strings.TrimSuffix(strings.TrimPrefix(r.header.Get("Location"), "/threads/"+id+"/runs/"), "/join")
			runIDs = append(runIDs, rid)
			// The replica that ran it reads the run from memory, the other
			// from the record the commit carried: the same object, times
			// included.
			here := a.must(200, "GET", "/threads/"+id+"/runs/"+rid, nil, nil)
			there := b.must(200, "GET", "/threads/"+id+"/runs/"+rid, nil, nil)
			if normalJSON(t, here.body) != normalJSON(t, there.body) {
				t.Fatalf("run %s reads\n%s\nwhere it ran, and\n%s\nfrom its record", rid, here.body, there.body)
			}
			if joined := b.must(200, "GET", "/threads/"+id+"/runs/"+rid+"/join", nil, nil); string(joined.body) != string(r.body) {
				t.Fatalf("run %s answered\n%s\nand joins on another replica as\n%s", rid, r.body, joined.body)
			}
		}
	}
	// Each thread's record was put once, when it was created, and is kept
	// (it holds the thread's created_at); the runs' records went with the
	// commits that ended them.
	if p, d, c := st.puts.Load(), st.deletes.Load(), st.carried.Load(); p != 2 || d != 0 || c != 4 {
		t.Errorf("two threads of two runs each made %d puts and %d deletes of documents alone and carried %d on commits; want 2, 0 and 4", p, d, c)
	}
	var th threadObj
	b.must(200, "GET", "/threads/"+tagged.ThreadID, nil, &th)
	if th.Metadata["team"] != "billing" {
		t.Errorf("the thread created with metadata reads %v after its runs, want team billing", th.Metadata)
	}
}

// normalJSON is data encoded again with its objects' keys sorted.
func normalJSON(t *testing.T, data []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// postOpen posts a JSON body and returns the response as soon as its status
// line arrives, with the body still open; a status line that has not come
// in ten seconds fails the test.
func (s *lgServer) postOpen(path string, body any) *http.Response {
	s.t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "POST", s.url+path, strings.NewReader(string(data)))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	limit := time.AfterFunc(10*time.Second, cancel)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("POST %s: no status line: %v", path, err)
	}
	limit.Stop()
	s.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// blankLineThenRest checks that a waited run's open answer starts with a
// blank line while the gate holds its graph, opens the gate and returns the
// rest of the answer.
func (s *lgServer) blankLineThenRest(resp *http.Response) []byte {
	s.t.Helper()
	b := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, b); err != nil {
		s.t.Fatalf("reading the answer: %v", err)
	}
	if b[0] != '\n' {
		s.t.Fatalf("a waited run kept alive sent %q first, want a blank line", b[0])
	}
	close(s.gate)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return rest
}

func TestAWaitedRunSendsBlankLinesWhileItsGraphRuns(t *testing.T) {
	s := newLGServer(t, server.WithLangGraphAPI(langgraph.WithHeartbeat(time.Millisecond)))
	id := s.newThread()
	// The status line arrives while the gate holds the graph: only a
	// keep-alive can have sent it.
	resp := s.postOpen("/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{}, "assistant_id": "gate"})
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Location"), "/threads/"+id+"/runs/") ||
		!strings.HasSuffix(resp.Header.Get("Location"), "/join") || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("a waited run kept alive answered %d with headers %v", resp.StatusCode, resp.Header)
	}
	rest := s.blankLineThenRest(resp)
	var out map[string]any
	if err := json.Unmarshal(rest, &out); err != nil || out["n"] != float64(1) {
		t.Fatalf("after its blank lines the waited run answered %q (%v), want its output {\"n\": 1}", rest, err)
	}
}

func TestARefusalAfterAKeepAliveIsAnsweredAsTheRunsError(t *testing.T) {
	s := newLGServer(t, server.WithLangGraphAPI(langgraph.WithHeartbeat(time.Millisecond)))
	id := s.newThread()
	s.startGate(id, nil)
	// Queued behind the gated run, a resume waits long enough for a
	// keep-alive, and finds nothing to resume once that run has ended.
	resp := s.postOpen("/threads/"+id+"/runs/wait", map[string]any{"command": map[string]any{"resume": true}, "assistant_id": "gate", "multitask_strategy": "enqueue"})
	if resp.StatusCode != 200 {
		t.Fatalf("a queued waited run answered %d, want 200 once kept alive", resp.StatusCode)
	}
	rest := s.blankLineThenRest(resp)
	var out struct {
		Error map[string]string `json:"__error__"`
	}
	if err := json.Unmarshal(rest, &out); err != nil || out.Error["error"] != "not_interrupted" || out.Error["message"] == "" {
		t.Fatalf("a refusal after a keep-alive answered %q (%v), want {\"__error__\": {\"error\": \"not_interrupted\", ...}}", rest, err)
	}
}
