package langgraph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/langgraph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// Gate is the state of the test's gate graph, whose one node waits until the
// test opens the gate.
type Gate struct {
	N int `json:"n,omitempty" graph:"add"`
}

// lgServer is a server with the LangGraph API over the example graphs and a
// gate graph.
type lgServer struct {
	t    *testing.T
	url  string
	gate chan struct{}
	in   chan struct{} // receives when the gate node starts
}

// refundServer is a server hosting the refund graph over st, with the
// LangGraph API on; the caller closes it.
func refundServer(tb testing.TB, st store.Store) *server.Server {
	tb.Helper()
	refund, err := graphs.Refund(graph.WithStore(st))
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := server.New(server.WithGraph(refund.Erase()), server.WithLogger(slog.New(slog.DiscardHandler)), server.WithLangGraphAPI())
	if err != nil {
		tb.Fatal(err)
	}
	return srv
}

func newLGServer(t *testing.T, opts ...server.Option) *lgServer {
	t.Helper()
	return newLGServerWith(t, nil, opts...)
}

// newLGServerWith is newLGServer hosting the graphs more returns too, compiled
// with gopts (the server's store).
func newLGServerWith(t *testing.T, more func(gopts []graph.Option) []server.Option, opts ...server.Option) *lgServer {
	t.Helper()
	st := memory.New()
	gopts := []graph.Option{graph.WithStore(st)}
	if more != nil {
		opts = append(more(gopts), opts...)
	}
	refund, err := graphs.Refund(gopts...)
	if err != nil {
		t.Fatal(err)
	}
	parallel, err := graphs.Parallel(gopts...)
	if err != nil {
		t.Fatal(err)
	}
	gated, err := graphs.Gated(gopts...)
	if err != nil {
		t.Fatal(err)
	}
	support, err := graphs.SupportAgent(nil, gopts...)
	if err != nil {
		t.Fatal(err)
	}
	// The same agent under another name, showing approvals in agent-inbox's format.
	inbox, err := graphs.SupportAgent(nil, append(gopts, graph.WithName("inbox-agent"))...)
	if err != nil {
		t.Fatal(err)
	}
	s := &lgServer{t: t, gate: make(chan struct{}), in: make(chan struct{}, 10)}
	b := graph.New[Gate]()
	b.AddNode("wait", func(ctx context.Context, g Gate) (Gate, error) {
		s.in <- struct{}{}
		select {
		case <-s.gate:
		case <-ctx.Done():
			return Gate{}, ctx.Err()
		}
		return Gate{N: 1}, nil
	})
	b.AddEdge(graph.Start, "wait")
	gate, err := b.Compile(append(gopts, graph.WithName("gate"))...)
	if err != nil {
		t.Fatal(err)
	}
	// bumpgate adds one, commits, then waits at the same gate.
	bb := graph.New[Gate]()
	bb.AddNode("bump", func(ctx context.Context, g Gate) (Gate, error) { return Gate{N: 1}, nil })
	bb.AddNode("wait", func(ctx context.Context, g Gate) (Gate, error) {
		s.in <- struct{}{}
		select {
		case <-s.gate:
		case <-ctx.Done():
			return Gate{}, ctx.Err()
		}
		return Gate{N: 1}, nil
	})
	bb.AddEdge(graph.Start, "bump").AddEdge("bump", "wait")
	bumpgate, err := bb.Compile(append(gopts, graph.WithName("bumpgate"))...)
	if err != nil {
		t.Fatal(err)
	}
	all := append([]server.Option{server.WithGraph(refund.Erase()), server.WithGraph(parallel.Erase()), server.WithGraph(support.Erase()), server.WithGraph(gated.Erase()),
		server.WithGraph(inbox.Erase()), server.WithGraph(gate.Erase()), server.WithGraph(bumpgate.Erase()), server.WithLogger(slog.New(slog.DiscardHandler)),
		server.WithLangGraphAPI(langgraph.WithInterruptFormat("inbox-agent", langgraph.FormatAgentInbox))}, opts...)
	srv, err := server.New(all...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		select {
		case <-s.gate:
		default:
			close(s.gate)
		}
		hs.Close()
		srv.Close()
	})
	s.url = hs.URL
	return s
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("answer %d is not JSON (%v): %s", r.status, err, r.body)
	}
}

func (s *lgServer) call(method, path string, body any, header ...string) reply {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

// must calls and fails the test unless the answer has the status.
func (s *lgServer) must(status int, method, path string, body any, v any) reply {
	s.t.Helper()
	r := s.call(method, path, body)
	if r.status != status {
		s.t.Fatalf("%s %s answered %d, want %d: %s", method, path, r.status, status, r.body)
	}
	if v != nil {
		r.json(s.t, v)
	}
	return r
}

type sse struct {
	name string
	data json.RawMessage
	id   string
}

// events reads an SSE body, failing on a frame whose data is not JSON.
func events(t *testing.T, body []byte) []sse {
	t.Helper()
	var out []sse
	var cur sse
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				if !json.Valid(cur.data) {
					t.Fatalf("event %s has data that is not JSON: %s", cur.name, cur.data)
				}
				out = append(out, cur)
			}
			cur = sse{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event: "):
			cur.name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			cur.data = append(cur.data, line[len("data: "):]...)
		case strings.HasPrefix(line, "id: "):
			cur.id = line[len("id: "):]
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

func named(evs []sse, name string) []sse {
	var out []sse
	for _, e := range evs {
		if e.name == name {
			out = append(out, e)
		}
	}
	return out
}

type lgInterrupt struct {
	ID    string          `json:"id"`
	Value json.RawMessage `json:"value"`
}

type threadObj struct {
	ThreadID   string                   `json:"thread_id"`
	Status     string                   `json:"status"`
	Metadata   map[string]any           `json:"metadata"`
	Values     map[string]any           `json:"values"`
	Interrupts map[string][]lgInterrupt `json:"interrupts"`
}

type checkpointObj struct {
	CheckpointID *string `json:"checkpoint_id"`
}

type stateObj struct {
	Values json.RawMessage `json:"values"`
	Next   []string        `json:"next"`
	Tasks  []struct {
		ID         string        `json:"id"`
		Name       string        `json:"name"`
		Interrupts []lgInterrupt `json:"interrupts"`
	} `json:"tasks"`
	Checkpoint       checkpointObj  `json:"checkpoint"`
	ParentCheckpoint *checkpointObj `json:"parent_checkpoint"`
	CreatedAt        string         `json:"created_at"`
}

func (s *lgServer) newThread() string {
	var th threadObj
	s.must(200, "POST", "/threads", map[string]any{"metadata": map[string]any{}}, &th)
	if th.Status != "idle" || th.ThreadID == "" {
		s.t.Fatalf("a new thread reads %+v, want idle with an id", th)
	}
	return th.ThreadID
}

func (s *lgServer) state(id string) stateObj {
	var st stateObj
	s.must(200, "GET", "/threads/"+id+"/state", nil, &st)
	return st
}

func TestAnAssistantIsFoundByGraphNameAndByLangGraphsID(t *testing.T) {
	if got := langgraph.AssistantID("refund"); got != "7fdea710-6c69-5a3b-ade4-f5d108e5826e" {
		t.Fatalf("refund's assistant id is %s, want LangGraph's 7fdea710-6c69-5a3b-ade4-f5d108e5826e", got)
	}
	s := newLGServer(t)
	var byName, byID map[string]any
	s.must(200, "GET", "/assistants/refund", nil, &byName)
	s.must(200, "GET", "/assistants/7fdea710-6c69-5a3b-ade4-f5d108e5826e", nil, &byID)
	if byName["assistant_id"] != byID["assistant_id"] || byName["graph_id"] != "refund" {
		t.Fatalf("the assistant reads %v by name and %v by id", byName, byID)
	}
	var found []map[string]any
	r := s.must(200, "POST", "/assistants/search", map[string]any{"graph_id": "refund", "limit": 10, "offset": 0}, &found)
	if len(found) != 1 || r.header.Get("X-Pagination-Total") != "1" {
		t.Fatalf("search found %v (total %q), want refund's assistant", found, r.header.Get("X-Pagination-Total"))
	}
	s.must(404, "GET", "/assistants/nope", nil, nil)
	// A run naming the graph by its assistant id runs it.
	id := s.newThread()
	var out map[string]any
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"amount": 5}, "assistant_id": byID["assistant_id"]}, &out)
	if out["__interrupt__"] == nil {
		t.Fatalf("the run by assistant id answered %v, want its interrupt", out)
	}
}

// TestTheSDKRoundTripPausesAndResumes replays the SDK's plain round trip
// (reference §6.3): create, wait, read the interrupt from the state, resume it
// by id in a stream, read the thread, its history and the search.
func TestTheSDKRoundTripPausesAndResumes(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	var out map[string]json.RawMessage
	r := s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"amount": 11}, "assistant_id": "refund"}, &out)
	if !strings.HasPrefix(r.header.Get("Content-Location"), "/threads/"+id+"/runs/") {
		t.Fatalf("wait's Content-Location is %q", r.header.Get("Content-Location"))
	}
	var pending []lgInterrupt
	if err := json.Unmarshal(out["__interrupt__"], &pending); err != nil || len(pending) != 1 {
		t.Fatalf("wait answered %s, want one interrupt", r.body)
	}
	var q struct {
		Message string `json:"message"`
	}
	json.Unmarshal(pending[0].Value, &q)
	if q.Message != "Approve a refund of $11?" || len(pending[0].ID) != 32 {
		t.Fatalf("the interrupt is %s, want the question in value.message and a 32-hex id", pending[0].Value)
	}

	var th threadObj
	s.must(200, "GET", "/threads/"+id, nil, &th)
	if th.Status != "interrupted" || th.Metadata["graph_id"] != "refund" || th.Metadata["assistant_id"] != langgraph.AssistantID("refund") {
		t.Fatalf("the paused thread reads %+v", th)
	}
	for task, list := range th.Interrupts {
		if len(list) != 1 || list[0].ID != pending[0].ID || task == pending[0].ID {
			t.Fatalf("thread.interrupts is %v, want the interrupt under its task's id", th.Interrupts)
		}
	}
	st := s.state(id)
	if len(st.Tasks) != 1 || len(st.Tasks[0].Interrupts) != 1 || st.Tasks[0].Interrupts[0].ID != pending[0].ID || st.Checkpoint.CheckpointID == nil {
		t.Fatalf("the state is %+v, want the interrupt in tasks[0] and a checkpoint", st)
	}

	r = s.must(200, "POST", "/threads/"+id+"/runs/stream", map[string]any{
		"command":     map[string]any{"resume": map[string]any{pending[0].ID: map[string]any{"approved": true}}},
		"stream_mode": []string{"values", "updates"}, "assistant_id": "refund"}, nil)
	evs := events(t, r.body)
	if len(evs) == 0 || evs[0].name != "metadata" || evs[0].id != "0" {
		t.Fatalf("the stream opened with %v, want metadata with id 0", evs)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("the stream's content type is %q", ct)
	}
	ups := named(evs, "updates")
	vals := named(evs, "values")
	if len(ups) != 1 || !strings.Contains(string(ups[0].data), `"outcome":"refunded"`) || len(vals) == 0 ||
		!strings.Contains(string(vals[len(vals)-1].data), `"outcome":"refunded"`) {
		t.Fatalf("the resume streamed %v, want the node's update and the final values", evs)
	}
	th = threadObj{}
	s.must(200, "GET", "/threads/"+id, nil, &th)
	if th.Status != "idle" || len(th.Interrupts) != 0 || th.Values["outcome"] != "refunded" {
		t.Fatalf("the resumed thread reads %+v, want idle and refunded", th)
	}

	var hist []stateObj
	s.must(200, "POST", "/threads/"+id+"/history", map[string]any{"limit": 10}, &hist)
	if len(hist) < 2 {
		t.Fatalf("history has %d states, want the pause and what followed", len(hist))
	}
	for i := range hist {
		if i+1 < len(hist) {
			if hist[i].ParentCheckpoint == nil || *hist[i].ParentCheckpoint.CheckpointID != *hist[i+1].Checkpoint.CheckpointID {
				t.Fatalf("history[%d]'s parent is not history[%d]", i, i+1)
			}
			if *hist[i].Checkpoint.CheckpointID <= *hist[i+1].Checkpoint.CheckpointID {
				t.Fatalf("checkpoint ids %s and %s do not sort newest first", *hist[i].Checkpoint.CheckpointID, *hist[i+1].Checkpoint.CheckpointID)
			}
		}
	}
	if hist[len(hist)-1].ParentCheckpoint != nil {
		t.Fatal("the first state has a parent")
	}
	var one []stateObj
	s.must(200, "POST", "/threads/"+id+"/history", map[string]any{"limit": 1, "before": map[string]any{"checkpoint_id": *hist[0].Checkpoint.CheckpointID}}, &one)
	if len(one) != 1 || *one[0].Checkpoint.CheckpointID != *hist[1].Checkpoint.CheckpointID {
		t.Fatalf("the page before the head is %+v, want history[1]", one)
	}

	// A second thread, left paused, is the only interrupted one of the search.
	other := s.newThread()
	s.must(200, "POST", "/threads/"+other+"/runs/wait", map[string]any{"input": map[string]any{"amount": 3}, "assistant_id": "refund"}, nil)
	var found []threadObj
	r = s.must(200, "POST", "/threads/search", map[string]any{"metadata": map[string]any{"graph_id": "refund"}, "limit": 5, "offset": 0, "status": "interrupted"}, &found)
	if len(found) != 1 || found[0].ThreadID != other || r.header.Get("X-Pagination-Total") != "1" {
		t.Fatalf("the search found %+v (total %s), want the paused thread", found, r.header.Get("X-Pagination-Total"))
	}
	s.must(200, "POST", "/threads/search", map[string]any{"values": map[string]any{"outcome": "refunded"}, "limit": 5}, &found)
	if len(found) != 1 || found[0].ThreadID != id {
		t.Fatalf("the values search found %+v, want the refunded thread", found)
	}
	s.must(204, "DELETE", "/threads/"+id, nil, nil)
	s.must(404, "GET", "/threads/"+id, nil, nil)
}

// TestRefusalsLeaveTheThreadAsItWas checks that Interlude's refusals reach
// LangGraph's clients as 4xx errors and change nothing.
func TestRefusalsLeaveTheThreadAsItWas(t *testing.T) {
	s := newLGServer(t)
	refund := s.newThread()
	s.must(200, "POST", "/threads/"+refund+"/runs/wait", map[string]any{"input": map[string]any{"amount": 9}, "assistant_id": "refund"}, nil)
	par := s.newThread()
	s.must(200, "POST", "/threads/"+par+"/runs/wait", map[string]any{"input": map[string]any{}, "assistant_id": "parallel"}, nil)
	for _, c := range []struct {
		name, thread string
		body         map[string]any
		status       int
		code         string
	}{
		{"an answer failing the schema", refund, map[string]any{"command": map[string]any{"resume": map[string]any{"approved": "yes"}}}, 422, "invalid_response"},
		{"a stale interrupt id", refund, map[string]any{"command": map[string]any{"resume": map[string]any{"0123456789abcdef0123456789abcdef": map[string]any{"approved": true}}}}, 409, "unknown_interrupt"},
		{"input to an interrupted thread", refund, map[string]any{"input": map[string]any{"amount": 1}}, 409, "thread_interrupted"},
		{"a bare resume with several pending", par, map[string]any{"command": map[string]any{"resume": true}}, 409, "ambiguous_resume"},
		{"a state update passing a question by", refund, map[string]any{"command": map[string]any{"update": map[string]any{"amount": 1}}}, 409, "thread_interrupted"},
		{"an update with a resume", refund, map[string]any{"command": map[string]any{"update": [][]any{{"amount", 1}}, "resume": map[string]any{"approved": true}}}, 409, "thread_interrupted"},
		{"a goto passing a question by", refund, map[string]any{"command": map[string]any{"goto": "refund"}}, 409, "thread_interrupted"},
		{"a goto with input (a Send)", refund, map[string]any{"command": map[string]any{"goto": map[string]any{"node": "refund", "input": map[string]any{"amount": 1}}}}, 422, "not_supported"},
		{"a malformed update", refund, map[string]any{"command": map[string]any{"update": 3}}, 400, "invalid_request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := s.state(c.thread)
			c.body["assistant_id"] = map[string]string{refund: "refund", par: "parallel"}[c.thread]
			for _, route := range []string{"/runs/wait", "/runs/stream", "/runs"} {
				r := s.call("POST", "/threads/"+c.thread+route, c.body)
				var e struct {
					Detail string `json:"detail"`
					Code   string `json:"code"`
				}
				r.json(t, &e)
				if r.status != c.status || e.Code != c.code || e.Detail == "" {
					t.Fatalf("%s answered %d %s, want %d %s", route, r.status, r.body, c.status, c.code)
				}
			}
			after := s.state(c.thread)
			if *after.Checkpoint.CheckpointID != *before.Checkpoint.CheckpointID || string(after.Values) != string(before.Values) {
				t.Fatalf("the refused request changed the thread from %+v to %+v", before, after)
			}
		})
	}
	// Both of parallel's questions answered by id resume it.
	st := s.state(par)
	answers := map[string]any{}
	for _, task := range st.Tasks {
		for _, in := range task.Interrupts {
			answers[in.ID] = true
		}
	}
	if len(answers) != 2 {
		t.Fatalf("parallel's state has %d interrupts, want 2", len(answers))
	}
	var out map[string]any
	s.must(200, "POST", "/threads/"+par+"/runs/wait", map[string]any{"command": map[string]any{"resume": answers}, "assistant_id": "parallel"}, &out)
	if out["__interrupt__"] != nil {
		t.Fatalf("answering both by id left %v", out)
	}
	// A stateless run answers on a thread of its own, which it then drops.
	r := s.must(200, "POST", "/runs/wait", map[string]any{"input": map[string]any{"amount": 2}, "assistant_id": "refund"}, &out)
	if out["__interrupt__"] == nil || !strings.HasPrefix(r.header.Get("Content-Location"), "/runs/") {
		t.Fatalf("a stateless run answered %v with Content-Location %q", out, r.header.Get("Content-Location"))
	}
	// A resume without a thread is refused, as LangGraph's server does.
	s.must(400, "POST", "/runs/wait", map[string]any{"command": map[string]any{"resume": true}, "assistant_id": "refund"}, nil)
	s.must(404, "POST", "/threads/nope/runs/wait", map[string]any{"input": map[string]any{"amount": 1}, "assistant_id": "refund"}, nil)
	var created map[string]any
	s.must(200, "POST", "/threads/fresh-1/runs/wait", map[string]any{"input": map[string]any{"amount": 1}, "assistant_id": "refund", "if_not_exists": "create"}, &created)
	if created["__interrupt__"] == nil {
		t.Fatalf("if_not_exists create answered %v", created)
	}
}

func TestARunWithoutInputPassesABreakpoint(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	var out map[string]any
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"topic": "tea"}, "assistant_id": "gated"}, &out)
	var th threadObj
	s.must(200, "GET", "/threads/"+id, nil, &th)
	st := s.state(id)
	if th.Status != "interrupted" || len(th.Interrupts) != 0 || len(st.Next) != 1 || st.Next[0] != "review" {
		t.Fatalf("at the breakpoint the thread reads %s %v, next %v", th.Status, th.Interrupts, st.Next)
	}
	for range 2 { // past draft, then before publish
		s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": nil, "assistant_id": "gated"}, &out)
	}
	if out["published"] != true {
		t.Fatalf("after passing both breakpoints the output is %v", out)
	}
}

// TestAResumeAtABreakpointSaysToContinueWithoutInput checks that a thread
// paused at a breakpoint refuses command.resume, saying to continue it with a
// run that has neither input nor command, and stays as it was.
func TestAResumeAtABreakpointSaysToContinueWithoutInput(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"topic": "tea"}, "assistant_id": "gated"}, nil)
	before := s.state(id)
	r := s.call("POST", "/threads/"+id+"/runs/wait", map[string]any{"command": map[string]any{"resume": true}, "assistant_id": "gated"})
	var e struct {
		Detail string `json:"detail"`
		Code   string `json:"code"`
	}
	r.json(t, &e)
	if r.status != 409 || e.Code != "not_interrupted" || !strings.Contains(e.Detail, "breakpoint") || !strings.Contains(e.Detail, "neither input nor command") ||
		strings.Contains(e.Detail, "send input") {
		t.Fatalf("a resume at the breakpoint answered %d %s, want 409 not_interrupted saying to continue with neither input nor command", r.status, r.body)
	}
	if after := s.state(id); *after.Checkpoint.CheckpointID != *before.Checkpoint.CheckpointID {
		t.Fatal("the refused resume changed the thread")
	}
}

func TestARunFromAnEarlierCheckpointForksTheThread(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	var first struct {
		Interrupt []lgInterrupt `json:"__interrupt__"`
	}
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"amount": 4}, "assistant_id": "refund"}, &first)
	paused := s.state(id)
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"command": map[string]any{"resume": map[string]any{"approved": true}}, "assistant_id": "refund"}, nil)
	s.must(422, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"amount": 1}, "checkpoint_id": *paused.Checkpoint.CheckpointID, "assistant_id": "refund"}, nil)
	var again map[string]json.RawMessage
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"checkpoint": map[string]any{"checkpoint_id": *paused.Checkpoint.CheckpointID}, "assistant_id": "refund"}, &again)
	var asked []lgInterrupt
	if json.Unmarshal(again["__interrupt__"], &asked) != nil || len(asked) != 1 || asked[0].ID == first.Interrupt[0].ID {
		t.Fatalf("the fork answered %s, want the question asked again with a new id", again["__interrupt__"])
	}
}

func TestResumingAThreadThatHasNotRunIsRefused(t *testing.T) {
	s := newLGServer(t)
	resume := map[string]any{"command": map[string]any{"resume": map[string]any{"approved": true}}, "assistant_id": "refund"}
	end := map[string]any{"command": map[string]any{"goto": "__end__"}, "assistant_id": "refund"}
	for _, body := range []map[string]any{resume, end} {
		r := s.must(404, "POST", "/threads/nope/runs/wait", body, nil)
		if !strings.Contains(string(r.body), "Thread with ID nope not found") {
			t.Fatalf("an unknown thread was refused with %s", r.body)
		}
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		s.must(200, "POST", "/threads", map[string]any{}, &th)
		s.must(409, "POST", "/threads/"+th.ThreadID+"/runs/wait", body, nil)
		s.must(200, "GET", "/threads/"+th.ThreadID, nil, nil)
	}
}

// TestAnAnswerSentAgainByIDIsAReplay checks that the answer a resumed thread
// took, sent again keyed by its interrupt id, gets the thread's output again
// without running anything, and that a different answer for it is refused.
func TestAnAnswerSentAgainByIDIsAReplay(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	var first struct {
		Interrupt []lgInterrupt `json:"__interrupt__"`
	}
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"amount": 7}, "assistant_id": "refund"}, &first)
	if len(first.Interrupt) != 1 {
		t.Fatalf("the run paused with %v, want one interrupt", first.Interrupt)
	}
	var iv struct {
		InterruptID string `json:"interrupt_id"`
	}
	json.Unmarshal(first.Interrupt[0].Value, &iv)
	answer := map[string]any{"command": map[string]any{"resume": map[string]any{first.Interrupt[0].ID: map[string]any{"approved": true}}}, "assistant_id": "refund"}
	var out map[string]any
	s.must(200, "POST", "/threads/"+id+"/runs/wait", answer, &out)
	if out["outcome"] != "refunded" {
		t.Fatalf("the answer ended with %v, want refunded", out)
	}
	done := s.state(id)
	for _, key := range []string{first.Interrupt[0].ID, iv.InterruptID} {
		again := map[string]any{"command": map[string]any{"resume": map[string]any{key: map[string]any{"approved": true}}}, "assistant_id": "refund"}
		var replayed map[string]any
		s.must(200, "POST", "/threads/"+id+"/runs/wait", again, &replayed)
		if replayed["outcome"] != "refunded" || replayed["__interrupt__"] != nil {
			t.Fatalf("the answer sent again by %s answered %v, want the refunded output", key, replayed)
		}
		r := s.must(200, "POST", "/threads/"+id+"/runs/stream", map[string]any{"command": again["command"], "stream_mode": []string{"values"}, "assistant_id": "refund"}, nil)
		if vals := named(events(t, r.body), "values"); len(vals) == 0 || !strings.Contains(string(vals[len(vals)-1].data), `"outcome":"refunded"`) {
			t.Fatalf("the answer sent again in a stream sent %s", r.body)
		}
	}
	different := map[string]any{"command": map[string]any{"resume": map[string]any{first.Interrupt[0].ID: map[string]any{"approved": false}}}, "assistant_id": "refund"}
	r := s.call("POST", "/threads/"+id+"/runs/wait", different)
	var e struct {
		Code string `json:"code"`
	}
	r.json(t, &e)
	if r.status != 409 || e.Code != "unknown_interrupt" {
		t.Fatalf("a different answer for the resolved interrupt answered %d %s, want 409 unknown_interrupt", r.status, r.body)
	}
	if after := s.state(id); *after.Checkpoint.CheckpointID != *done.Checkpoint.CheckpointID {
		t.Fatal("a replay or a refused answer changed the thread")
	}
	s.must(409, "POST", "/threads/"+id+"/runs/wait", map[string]any{"command": map[string]any{"resume": map[string]any{"0123456789abcdef0123456789abcdef": true}}, "assistant_id": "refund"}, nil)
}

// TestBadValuesAndMethodsAreRefusedNamingWhatIsAllowed checks that an
// unknown if_exists, sort_by or sort_order is refused with 400 naming the
// allowed values, that GET routes answer HEAD, and that OPTIONS and a method
// a route does not take get that route's Allow.
func TestBadValuesAndMethodsAreRefusedNamingWhatIsAllowed(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	for _, c := range []struct {
		path  string
		body  map[string]any
		names string
	}{
		{"/threads", map[string]any{"thread_id": id, "if_exists": "bogus"}, "do_nothing"},
		{"/threads", map[string]any{"if_exists": "bogus"}, "do_nothing"},
		{"/threads/search", map[string]any{"sort_by": "bogus"}, "updated_at"},
		{"/threads/search", map[string]any{"sort_order": "bogus"}, "desc"},
	} {
		r := s.call("POST", c.path, c.body)
		var e struct {
			Detail string `json:"detail"`
			Code   string `json:"code"`
		}
		r.json(t, &e)
		if r.status != 400 || e.Code != "invalid_request" || !strings.Contains(e.Detail, c.names) {
			t.Fatalf("POST %s %v answered %d %s, want 400 naming %s", c.path, c.body, r.status, r.body, c.names)
		}
	}
	for _, path := range []string{"/threads/" + id, "/threads/" + id + "/state", "/info"} {
		if r := s.call("HEAD", path, nil); r.status != 200 || len(r.body) != 0 {
			t.Fatalf("HEAD %s answered %d %q, want 200 without a body", path, r.status, r.body)
		}
	}
	for _, c := range []struct {
		method, path, allow string
		status              int
	}{
		{"OPTIONS", "/threads/search", "OPTIONS, POST", 204},
		{"OPTIONS", "/threads/" + id, "DELETE, GET, HEAD, OPTIONS, PATCH", 204},
		{"OPTIONS", "/threads/" + id + "/runs/stream", "OPTIONS, POST", 204},
		{"PUT", "/threads/search", "OPTIONS, POST", 405},
		{"DELETE", "/threads/" + id + "/state", "GET, HEAD, OPTIONS, POST", 405},
	} {
		r := s.call(c.method, c.path, nil)
		if r.status != c.status || r.header.Get("Allow") != c.allow {
			t.Fatalf("%s %s answered %d with Allow %q, want %d with %q", c.method, c.path, r.status, r.header.Get("Allow"), c.status, c.allow)
		}
	}
	s.must(404, "OPTIONS", "/nowhere", nil, nil)
}

// TestThreadInterruptedRefusalsNameLangGraphsInterruptIDs checks that a
// refusal of input or of an update to a thread waiting for answers names the
// interrupts by the ids the thread shows, not by Interlude's.
func TestThreadInterruptedRefusalsNameLangGraphsInterruptIDs(t *testing.T) {
	s := newLGServer(t)
	for _, c := range []struct{ assistant, input string }{{"refund", `{"amount": 5}`}, {"support-agent", `{"messages": [{"type": "human", "content": "Refund order A-1001 $40"}]}`}} {
		t.Run(c.assistant, func(t *testing.T) {
			id := s.newThread()
			s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": json.RawMessage(c.input), "assistant_id": c.assistant}, nil)
			var th threadObj
			s.must(200, "GET", "/threads/"+id, nil, &th)
			var want []string
			for _, list := range th.Interrupts {
				for _, in := range list {
					want = append(want, in.ID)
				}
			}
			if len(want) != 1 {
				t.Fatalf("the thread shows interrupts %v, want one", th.Interrupts)
			}
			for _, req := range []struct{ path, body string }{
				{"/runs/wait", `{"input": ` + c.input + `, "assistant_id": "` + c.assistant + `"}`},
				{"/runs/wait", `{"command": {"update": {"x": 1}}, "assistant_id": "` + c.assistant + `"}`},
				{"/state", `{"values": {"x": 1}}`},
			} {
				r := s.call("POST", "/threads/"+id+req.path, json.RawMessage(req.body))
				var e struct {
					Detail     string   `json:"detail"`
					Code       string   `json:"code"`
					Interrupts []string `json:"interrupts"`
				}
				r.json(t, &e)
				if r.status != 409 || e.Code != "thread_interrupted" || len(e.Interrupts) != 1 || e.Interrupts[0] != want[0] || strings.Contains(e.Detail, "int_") {
					t.Fatalf("POST %s %s answered %d %s, want 409 thread_interrupted naming %s", req.path, req.body, r.status, r.body, want[0])
				}
			}
		})
	}
}
