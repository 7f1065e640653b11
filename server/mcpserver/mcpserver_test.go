package mcpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/server/mcpserver"
	"github.com/interludehq/interlude/store/memory"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func newHost(t testing.TB) *host.Host {
	t.Helper()
	st := memory.New()
	refund, err := graphs.Refund(graph.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	support, err := graphs.SupportAgent(graphs.SupportScript(), graph.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(host.WithGraph(refund.Erase()), host.WithGraph(support.Erase()), host.WithStore(st), host.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// elicitor is an MCP client's user, answering every elicitation with result.
type elicitor struct {
	result *sdk.ElicitResult
	asked  atomic.Int64
	last   atomic.Value // *sdk.ElicitParams
}

func (e *elicitor) handle(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	e.asked.Add(1)
	e.last.Store(req.Params)
	return e.result, nil
}

// connect connects an SDK client, with an elicitation handler when e is not
// nil, to the server over in-memory transports.
func connect(t testing.TB, s *mcpserver.Server, version string, e *elicitor) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	if _, err := s.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	opts := &sdk.ClientOptions{}
	if e != nil {
		opts.ElicitationHandler = e.handle
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, opts).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func structured(t testing.TB, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return m
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestEachGraphIsAToolWithItsInputSchema(t *testing.T) {
	h := newHost(t)
	cs := connect(t, mustMCP(t, h), "", nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*sdk.Tool{}
	for _, x := range res.Tools {
		byName[x.Name] = x
	}
	for _, name := range []string{"refund", "support-agent", "pending_questions", "answer_question"} {
		if byName[name] == nil {
			t.Fatalf("no tool %q among %v", name, res.Tools)
		}
	}
	got, _ := json.Marshal(byName["refund"].InputSchema)
	var want, have any
	json.Unmarshal(h.Graph("refund").InputSchema(), &want)
	json.Unmarshal(got, &have)
	if !jsonEqual(want, have) {
		t.Fatalf("schema %s, want %s", got, h.Graph("refund").InputSchema())
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestAPauseIsElicitedAndItsAnswerFinishesTheRunInTheSameCall(t *testing.T) {
	cases := []struct {
		action  string
		content map[string]any
		outcome string
	}{
		{"accept", map[string]any{"approved": true}, "refunded"},
		{"accept", map[string]any{"approved": false}, "declined"},
		{"decline", nil, "declined"},
		{"cancel", nil, "cancelled"},
	}
	// 2026-07-28 asks with input_required and a retry; earlier revisions with
	// elicitation/create within the call.
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		for _, c := range cases {
			t.Run(version+"/"+c.action+"/"+c.outcome, func(t *testing.T) {
				e := &elicitor{result: &sdk.ElicitResult{Action: c.action, Content: c.content}}
				cs := connect(t, mustMCP(t, newHost(t)), version, e)
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "refund", Arguments: map[string]any{"amount": 150}})
				if err != nil || res.IsError {
					t.Fatalf("%v %+v", err, res)
				}
				if got := structured(t, res)["outcome"]; got != c.outcome {
					t.Fatalf("outcome %v, want %s (%s)", got, c.outcome, text(res))
				}
				p := e.last.Load().(*sdk.ElicitParams)
				schema, _ := json.Marshal(p.RequestedSchema)
				if e.asked.Load() != 1 || p.Message != "Approve a refund of $150?" || !strings.Contains(string(schema), `"approved"`) {
					t.Fatalf("asked %d: %+v %s", e.asked.Load(), p, schema)
				}
			})
		}
	}
}

func TestAClientWithoutElicitationAnswersThroughTheTools(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	cs := connect(t, mustMCP(t, h, mcpserver.WithInboxURL("https://example.com/inbox/")), "", nil)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "refund", Arguments: map[string]any{"amount": 80}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	waiting := structured(t, res)
	thread := waiting["thread_id"].(string)
	q := waiting["questions"].([]any)[0].(map[string]any)
	id := q["interrupt_id"].(string)
	if waiting["status"] != "interrupted" || q["message"] != "Approve a refund of $80?" ||
		q["link"] != "https://example.com/inbox/#/q/"+thread+"/"+id || !strings.Contains(text(res), thread) {
		t.Fatalf("%v\n%s", waiting, text(res))
	}

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "pending_questions", Arguments: map[string]any{}})
	if err != nil || !strings.Contains(text(res), id) {
		t.Fatalf("%v %s", err, text(res))
	}

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "answer_question", Arguments: map[string]any{
		"thread_id": thread, "interrupt_id": id, "action": "resume", "response": map[string]any{"approved": "yes"}}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "approved") {
		t.Fatalf("an invalid answer was not refused: %v %s", err, text(res))
	}
	if snap, _ := h.State(ctx, thread); len(snap.Interrupts) != 1 {
		t.Fatal("a refused answer changed the thread")
	}

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "answer_question", Arguments: map[string]any{
		"thread_id": thread, "action": "resume", "response": map[string]any{"approved": true}}})
	if err != nil || res.IsError || structured(t, res)["outcome"] != "refunded" {
		t.Fatalf("%v %s", err, text(res))
	}
}

func TestAQuestionMCPFormsCannotExpressIsNotElicited(t *testing.T) {
	e := &elicitor{result: &sdk.ElicitResult{Action: "accept"}}
	cs := connect(t, mustMCP(t, newHost(t)), "", e)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "support-agent", Arguments: map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Please refund order 42"}}}}}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if structured(t, res)["status"] != "interrupted" || e.asked.Load() != 0 {
		t.Fatalf("asked %d times: %s", e.asked.Load(), text(res))
	}
}

func TestAForgedRequestStateIsRefused(t *testing.T) {
	ctx := context.Background()
	a := mustMCP(t, newHost(t))
	st, ct := sdk.NewInMemoryTransports()
	a.MCP().Connect(ctx, st, nil)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, &sdk.ClientOptions{
		ElicitationHandler: (&elicitor{result: &sdk.ElicitResult{Action: "accept"}}).handle,
		MultiRoundTrip:     &sdk.MultiRoundTripOptions{Disabled: true},
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "refund", Arguments: map[string]any{"amount": 5}})
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	var key string
	for k := range res.InputRequests {
		key = k
	}
	forged := strings.Replace(res.RequestState, "A", "B", 1)
	if forged == res.RequestState {
		forged = "x" + forged
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "refund", Arguments: map[string]any{"amount": 5},
		InputResponses: sdk.InputResponseMap{key: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approved": true}}},
		RequestState:   forged})
	if err != nil || !res.IsError || !strings.Contains(text(res), "answer_question") {
		t.Fatalf("%v %s", err, text(res))
	}
}

// headers adds a bearer token to every request.
type headers struct{ token string }

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.token != "" {
		r.Header.Set("Authorization", "Bearer "+h.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestTheEndpointTakesTheServersTokensAndRoles(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	srv, err := server.New(server.WithHost(h), server.WithLogger(slog.New(slog.DiscardHandler)), server.WithTokens([]auth.Token{
		{Name: "reader", Secret: "r"},
		{Name: "runner", Secret: "u", Roles: []auth.Role{auth.RoleRun}},
		{Name: "alice", Secret: "a", Roles: []auth.Role{auth.RoleRun, auth.RoleApprove}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Mount("/mcp", mustMCP(t, h).Handler())
	hs := httptest.NewServer(srv)
	defer hs.Close()
	dial := func(token string, e *elicitor) (*sdk.ClientSession, error) {
		opts := &sdk.ClientOptions{}
		if e != nil {
			opts.ElicitationHandler = e.handle
		}
		return sdk.NewClient(&sdk.Implementation{Name: "test"}, opts).Connect(ctx, &sdk.StreamableClientTransport{
			Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: headers{token}}, MaxRetries: -1}, nil)
	}
	if cs, err := dial("", nil); err == nil {
		cs.Close()
		t.Fatal("connected without a token")
	}
	if cs, err := dial("wrong", nil); err == nil {
		cs.Close()
		t.Fatal("connected with a wrong token")
	}
	call := func(cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	reader, err := dial("r", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if res := call(reader, "refund", map[string]any{"amount": 1}); !res.IsError || !strings.Contains(text(res), "run role") {
		t.Fatalf("a reader started a thread: %s", text(res))
	}
	// A runner that may not answer is not asked, even though it could be.
	e := &elicitor{result: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approved": true}}}
	runner, err := dial("u", e)
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	res := call(runner, "refund", map[string]any{"amount": 9})
	thread, _ := structured(t, res)["thread_id"].(string)
	if res.IsError || e.asked.Load() != 0 || thread == "" {
		t.Fatalf("%s", text(res))
	}
	if res := call(runner, "answer_question", map[string]any{"thread_id": thread, "action": "cancel"}); !res.IsError || !strings.Contains(text(res), "approve role") {
		t.Fatalf("a runner answered: %s", text(res))
	}
	alice, err := dial("a", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	if res := call(alice, "answer_question", map[string]any{"thread_id": thread, "action": "resume", "response": map[string]any{"approved": true}}); res.IsError {
		t.Fatal(text(res))
	}
	hist, err := h.History(ctx, thread, graph.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(hist); !strings.Contains(string(b), `"by":"alice"`) {
		t.Fatalf("the answer was not recorded as alice's: %s", b)
	}
	// And an approver with elicitation is asked within the call, over HTTP.
	e2 := &elicitor{result: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approved": true}}}
	alice2, err := dial("a", e2)
	if err != nil {
		t.Fatal(err)
	}
	defer alice2.Close()
	if res := call(alice2, "refund", map[string]any{"amount": 3}); res.IsError || structured(t, res)["outcome"] != "refunded" || e2.asked.Load() != 1 {
		t.Fatalf("%s", text(res))
	}
}

// mustMCP returns the MCP server over h, failing tb if New refuses.
func mustMCP(tb testing.TB, h *host.Host, opts ...mcpserver.Option) *mcpserver.Server {
	tb.Helper()
	s, err := mcpserver.New(h, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
