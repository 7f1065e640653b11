package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// builder compiles a graph with the options the test environment gives (store,
// events).
type builder func(opts ...graph.Option) (graph.Erased, error)

func erase[S any](f func(opts ...graph.Option) (*graph.Graph[S], error)) builder {
	return func(opts ...graph.Option) (graph.Erased, error) {
		g, err := f(opts...)
		if err != nil {
			return nil, err
		}
		return g.Erase(), nil
	}
}

// setup describes a test server.
type setup struct {
	graphs []builder       // besides the default ones
	opts   []server.Option // server options
	wrap   func(store.Store) store.Store
	tokens []auth.Token
}

// env is a running test server.
type env struct {
	t   *testing.T
	st  store.Store
	hub *host.Hub
	srv *server.Server
	hs  *httptest.Server
	url string
}

// Test tokens.
var (
	runner   = auth.Token{Name: "ci", Secret: "run-secret-000000", Roles: []auth.Role{auth.RoleRun}}
	approver = auth.Token{Name: "alice", Secret: "approve-secret-00", Roles: []auth.Role{auth.RoleApprove}}
	admin    = auth.Token{Name: "root", Secret: "admin-secret-0000", Roles: []auth.Role{auth.RoleAdmin}}
	reader   = auth.Token{Name: "viewer", Secret: "read-secret-00000"}
)

func newEnv(t *testing.T, s setup) *env {
	t.Helper()
	hub, err := server.NewEventHub()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, hub: hub}
	e.st = memory.New()
	if s.wrap != nil {
		e.st = s.wrap(e.st)
	}
	gopts := []graph.Option{graph.WithStore(e.st), graph.WithEvents(e.hub.Publish)}
	all := append([]builder{erase(graphs.Refund), erase(graphs.TwoStep), erase(graphs.Parallel), erase(graphs.Gated),
		erase(toolGraph), erase(flakyGraph), erase(chatGraph)}, s.graphs...)
	opts := []server.Option{server.WithEventHub(e.hub), server.WithLogger(slog.New(slog.DiscardHandler))}
	for _, b := range all {
		g, err := b(gopts...)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, server.WithGraph(g))
	}
	if len(s.tokens) > 0 {
		opts = append(opts, server.WithTokens(s.tokens))
	}
	srv, err := server.New(append(opts, s.opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	e.hs = httptest.NewServer(srv)
	e.url = e.hs.URL
	t.Cleanup(func() {
		srv.Close()
		e.hs.Close()
	})
	return e
}

func (e *env) client(tok ...auth.Token) *client.Client {
	var opts []client.Option
	if len(tok) > 0 {
		opts = append(opts, client.WithToken(tok[0].Secret))
	}
	return clienttest.New(e.t, e.url, opts...)
}

// answer is a raw HTTP answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("answer %d is not a JSON object: %v\n%s", a.status, err, a.body)
	}
	return m
}

// errCode returns the error code of an error answer.
func (a answer) errCode(t *testing.T) string {
	t.Helper()
	m := a.json(t)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("answer %d has no error object: %s", a.status, a.body)
	}
	return e["code"].(string)
}

// do sends a raw request; token may be "".
func (e *env) do(method, path, body, token string, header ...string) answer {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: data}
}

func (e *env) post(path, body string, token ...string) answer {
	e.t.Helper()
	tok := ""
	if len(token) > 0 {
		tok = token[0]
	}
	return e.do(http.MethodPost, path, body, tok)
}

// expect asserts an answer's status and, for errors, code.
func expect(t *testing.T, a answer, status int, code string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.body)
	}
	if code != "" {
		if got := a.errCode(t); got != code {
			t.Fatalf("error code %q, want %q: %s", got, code, a.body)
		}
	}
}

// snapshot is everything the API shows of a thread: its state and its history.
func (e *env) snapshot(id string) string {
	e.t.Helper()
	a := e.do(http.MethodGet, "/v1/threads/"+id, "", admin.Secret)
	h := e.do(http.MethodGet, "/v1/threads/"+id+"/history", "", admin.Secret)
	if a.status != 200 || h.status != 200 {
		e.t.Fatalf("snapshot of %s: %d %s / %d %s", id, a.status, a.body, h.status, h.body)
	}
	return string(a.body) + "\n" + string(h.body)
}

// unchanged runs refuse, which must be refused, and asserts that the thread is
// exactly as it was.
func (e *env) unchanged(id string, refuse func()) {
	e.t.Helper()
	before := e.snapshot(id)
	refuse()
	if after := e.snapshot(id); after != before {
		e.t.Fatalf("a refused request changed thread %s:\nbefore %s\nafter  %s", id, before, after)
	}
}

// start invokes a graph with input and returns the answer's JSON.
func (e *env) start(graphName, thread, input string) map[string]any {
	e.t.Helper()
	a := e.post("/v1/graph/invoke", `{"graph":"`+graphName+`","config":{"thread_id":"`+thread+`"},"input":`+input+`}`, admin.Secret)
	expect(e.t, a, 200, "")
	return a.json(e.t)
}

// canon re-encodes JSON so that two documents compare by value.
func canon(t *testing.T, v any) string {
	t.Helper()
	var x any
	switch v := v.(type) {
	case string:
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			t.Fatalf("%v: %s", err, v)
		}
	case []byte:
		if err := json.Unmarshal(v, &x); err != nil {
			t.Fatalf("%v: %s", err, v)
		}
	case json.RawMessage:
		if err := json.Unmarshal(v, &x); err != nil {
			t.Fatalf("%v: %s", err, v)
		}
	default:
		data, _ := json.Marshal(v)
		json.Unmarshal(data, &x)
	}
	data, _ := json.Marshal(x)
	return string(data)
}

func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := canon(t, got), canon(t, want); g != w {
		t.Fatalf("%s = %s, want %s", what, g, w)
	}
}

// ToolState is the state of the tool graph.
type ToolState struct {
	Results []string `json:"results,omitempty" graph:"append"`
}

// toolGraph runs two tool calls in one node, each asking for approval with private
// state attached, so that history has tool call interrupt histories.
func toolGraph(opts ...graph.Option) (*graph.Graph[ToolState], error) {
	g := graph.New[ToolState]()
	g.AddNode("tools", func(ctx context.Context, s ToolState) (ToolState, error) {
		var out []string
		for _, call := range []string{"call_1", "call_2"} {
			r, err := graph.Once(ctx, call, func(ctx context.Context) (string, error) {
				ans, err := interlude.Interrupt(ctx, interlude.Request{
					Message: "Run " + call + "?", Reason: interlude.ReasonToolApproval,
					Value: map[string]any{"call": call}, State: map[string]any{"planned": call},
				})
				var rej *interlude.RejectedError
				switch {
				case errors.As(err, &rej):
					return call + " rejected", nil
				case err != nil:
					return "", err
				case ans.Cancelled:
					return call + " cancelled", nil
				}
				return call + " ran with " + string(ans.Data), nil
			}, graph.AsToolCall(call))
			if err != nil && !interlude.IsPaused(err) {
				return ToolState{}, err
			}
			if err == nil {
				out = append(out, r)
			}
		}
		if len(out) < 2 {
			return ToolState{}, interlude.ErrPaused
		}
		return ToolState{Results: out}, nil
	})
	g.AddEdge(graph.Start, "tools")
	return g.Compile(append([]graph.Option{graph.WithName("tool")}, opts...)...)
}

// FlakyState is the state of the flaky graph.
type FlakyState struct {
	Fail  bool `json:"fail,omitempty"`
	Panic bool `json:"panic,omitempty"`
	Done  bool `json:"done,omitempty"`
}

// flakyGraph fails its step while input asks it to, with an error or a panic.
func flakyGraph(opts ...graph.Option) (*graph.Graph[FlakyState], error) {
	g := graph.New[FlakyState]()
	g.AddNode("work", func(ctx context.Context, s FlakyState) (FlakyState, error) {
		if s.Fail {
			return FlakyState{}, errors.New("boom")
		}
		if s.Panic {
			panic("the node broke\nbadly")
		}
		return FlakyState{Done: true}, nil
	})
	g.AddEdge(graph.Start, "work")
	return g.Compile(append([]graph.Option{graph.WithName("flaky")}, opts...)...)
}

// ChatState is an agent-like state with messages.
type ChatState struct {
	Messages []json.RawMessage `json:"messages,omitempty" graph:"append"`
}

func chatGraph(opts ...graph.Option) (*graph.Graph[ChatState], error) {
	g := graph.New[ChatState]()
	g.AddNode("echo", func(ctx context.Context, s ChatState) (ChatState, error) {
		graph.Emit(ctx, graph.EventMessage, map[string]any{"role": "assistant", "delta": "hi"})
		return ChatState{Messages: []json.RawMessage{json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"hi"}]}`)}}, nil
	})
	g.AddEdge(graph.Start, "echo")
	return g.Compile(append([]graph.Option{graph.WithName("chat")}, opts...)...)
}

// BlockState is the state of a graph whose node blocks.
type BlockState struct {
	N    int  `json:"n,omitempty"`
	Done bool `json:"done,omitempty"`
}

// blockingGraph's node reports entered, emits a message, then waits for release.
func blockingGraph(entered chan<- struct{}, release <-chan struct{}) builder {
	return erase(func(opts ...graph.Option) (*graph.Graph[BlockState], error) {
		g := graph.New[BlockState]()
		g.AddNode("wait", func(ctx context.Context, s BlockState) (BlockState, error) {
			graph.Emit(ctx, graph.EventMessage, map[string]any{"text": "working"})
			entered <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
				return BlockState{}, ctx.Err()
			}
			return BlockState{Done: true}, nil
		})
		g.AddEdge(graph.Start, "wait")
		return g.Compile(append([]graph.Option{graph.WithName("blocking")}, opts...)...)
	})
}

// faulty is a store whose next operations can be made to fail.
type faulty struct {
	store.Store
	appendErr chan error  // an error here is returned by the next Append
	readErr   chan error  // an error here is returned by the next Version, Meta or Load: the read that finds a thread
	onLoad    chan func() // a function here runs at the start of the next Load of a stored thread
}

func newFaulty(s store.Store) *faulty {
	return &faulty{Store: s, appendErr: make(chan error, 1), readErr: make(chan error, 1), onLoad: make(chan func(), 1)}
}

func (f *faulty) Load(ctx context.Context, id string) (*store.Loaded, error) {
	select {
	case err := <-f.readErr:
		return nil, err
	default:
	}
	if v, err := f.Store.Version(ctx, id); err == nil && v > 0 {
		select {
		case fn := <-f.onLoad:
			fn()
		default:
		}
	}
	return f.Store.Load(ctx, id)
}

func (f *faulty) Append(ctx context.Context, a store.Append) error {
	select {
	case err := <-f.appendErr:
		return err
	default:
	}
	return f.Store.Append(ctx, a)
}

func (f *faulty) Version(ctx context.Context, id string) (int64, error) {
	select {
	case err := <-f.readErr:
		return 0, err
	default:
	}
	return f.Store.Version(ctx, id)
}

func (f *faulty) Meta(ctx context.Context, id string) (*store.Meta, error) {
	select {
	case err := <-f.readErr:
		return nil, err
	default:
	}
	return f.Store.Meta(ctx, id)
}
