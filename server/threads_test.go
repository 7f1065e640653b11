package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/server/auth"
)

func TestGraphsListsEachGraphWithNodesAndInputSchema(t *testing.T) {
	e := newEnv(t, setup{})
	gs, err := e.client().Graphs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range gs {
		names = append(names, g.Name)
		if g.Name == "refund" {
			if !slices.Equal(g.Nodes, []string{"refund"}) || !strings.Contains(string(g.InputSchema), `"amount"`) {
				t.Fatalf("refund %+v", g)
			}
		}
	}
	if !slices.Equal(names, []string{"chat", "flaky", "gated", "parallel", "refund", "tool", "two-step"}) {
		t.Fatalf("graphs %v", names)
	}
}

func TestThreadListingFiltersPagesAndValidatesItsParameters(t *testing.T) {
	e := newEnv(t, setup{})
	ctx := context.Background()
	c := e.client()
	for i := range 5 {
		e.start("refund", fmt.Sprintf("r%d", i), `{"amount":1}`)
	}
	e.start("gated", "g", `{"topic":"x"}`)
	e.start("flaky", "f", `{}`)

	var seen []string
	cursor := ""
	for {
		p, err := c.Threads(ctx, client.ListOptions{Status: "interrupted", Graph: "refund", Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range p.Threads {
			seen = append(seen, th.ThreadID)
			if th.Graph != "refund" || th.Status != "interrupted" || len(th.Interrupts) != 1 || th.Interrupts[0].State != nil {
				t.Fatalf("listed %+v", th)
			}
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"r0", "r1", "r2", "r3", "r4"}) {
		t.Fatalf("listed %v", seen)
	}
	a := e.do(http.MethodGet, "/v1/threads?status=idle", "", "")
	expect(t, a, 200, "")
	m := a.json(t)
	if m["next_cursor"] != nil || len(m["threads"].([]any)) != 1 {
		t.Fatalf("%s", a.body)
	}
	if c := e.do(http.MethodGet, "/v1/threads?status=completed", "", ""); c.status != 200 || string(c.body) != string(a.body) {
		t.Fatalf("status=completed lists %d %s; want the idle threads %s", c.status, c.body, a.body)
	}
	th := m["threads"].([]any)[0].(map[string]any)
	for _, k := range []string{"thread_id", "graph", "status", "interrupts", "created_at", "updated_at"} {
		if _, ok := th[k]; !ok {
			t.Errorf("listing lacks %q", k)
		}
	}
	for q, path := range map[string]string{
		"limit=0": "limit", "limit=1001": "limit", "limit=x": "limit", "status=done": "status",
		"cursor=%25%25": "cursor", "sort=asc": "sort", "limit=1&limit=2": "limit", "graph=a%00b": "graph",
	} {
		a := e.do(http.MethodGet, "/v1/threads?"+q, "", "")
		expect(t, a, http.StatusBadRequest, "invalid_request")
		if got := pathOf(t, a); got != path {
			t.Errorf("?%s: path %q, want %q", q, got, path)
		}
	}
	// Empty parameters, as a form with empty fields sends them, are as good as none.
	plain := e.do(http.MethodGet, "/v1/threads?status=interrupted", "", "")
	empty := e.do(http.MethodGet, "/v1/threads?status=interrupted&graph=&limit=&cursor=", "", "")
	expect(t, empty, 200, "")
	if string(empty.body) != string(plain.body) {
		t.Errorf("with empty parameters:\n%s\nwithout:\n%s", empty.body, plain.body)
	}
}

func TestThreadShowsStatusValuesInterruptsAndNext(t *testing.T) {
	e := newEnv(t, setup{})
	e.start("refund", "r", `{"amount":7}`)
	a := e.do(http.MethodGet, "/v1/threads/r", "", "")
	expect(t, a, 200, "")
	m := a.json(t)
	if m["thread_id"] != "r" || m["graph"] != "refund" || m["status"] != "interrupted" {
		t.Fatalf("%s", a.body)
	}
	sameJSON(t, "values", m["values"], `{"amount":7,"attempts":1}`)
	sameJSON(t, "next", m["next"], `["refund"]`)
	q := m["interrupts"].([]any)[0].(map[string]any)
	if _, ok := q["state"]; ok || q["message"] != "Approve a refund of $7?" {
		t.Fatalf("interrupt %v", q)
	}
}

func TestHistoryListsCheckpointsNewestFirstAndEachToolCallsInterrupts(t *testing.T) {
	e := newEnv(t, setup{tokens: []auth.Token{approver, admin}})
	ctx := context.Background()
	res, err := e.client(admin).Invoke(ctx, client.InvokeRequest{Graph: "tool", ThreadID: "t", Input: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 2 {
		t.Fatalf("%+v", res)
	}
	ids := map[string]string{}
	for _, q := range res.Interrupts {
		ids[q.ToolCallID] = q.ID
		if q.State != nil {
			t.Fatalf("an invoke answer shows private state: %+v", q)
		}
	}
	res, err = e.client(approver).Respond(ctx, "t", []interlude.Resolution{
		interlude.Resolve("yes").For(ids["call_1"]),
		interlude.Reject(&interlude.RejectedError{Name: "Denied", Message: "not now"}).For(ids["call_2"]),
	})
	if err != nil || res.Status != "completed" {
		t.Fatalf("%v %+v", err, res)
	}
	sameJSON(t, "values", res.Values, `{"results":["call_1 ran with \"yes\"","call_2 rejected"]}`)

	h, err := e.client(admin).History(ctx, "t", client.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(h.Checkpoints); i++ {
		if h.Checkpoints[i].ID >= h.Checkpoints[i-1].ID {
			t.Fatalf("checkpoints not newest first: %d then %d", h.Checkpoints[i-1].ID, h.Checkpoints[i].ID)
		}
	}
	var kinds []string
	for _, cp := range h.Checkpoints {
		kinds = append(kinds, cp.Kind)
	}
	if !slices.Equal(kinds, []string{"step", "resolve", "pause"}) {
		t.Fatalf("kinds %v", kinds)
	}
	if len(h.ToolCalls) != 2 {
		t.Fatalf("tool calls %+v", h.ToolCalls)
	}
	x1, x2 := h.ToolCalls["call_1"], h.ToolCalls["call_2"]
	if len(x1) != 1 || len(x2) != 1 {
		t.Fatalf("tool calls %+v", h.ToolCalls)
	}
	sameJSON(t, "call_1 state", x1[0].Interrupt.State, `{"planned":"call_1"}`)
	if x1[0].Interrupt.Message != "Run call_1?" || x1[0].Resolution == nil || x1[0].Resolution.Status != "resolved" ||
		string(x1[0].Resolution.Response) != `"yes"` || x1[0].Resolution.By != "alice" || x1[0].Resolution.At.IsZero() {
		t.Fatalf("call_1 %+v %+v", x1[0].Interrupt, x1[0].Resolution)
	}
	if r := x2[0].Resolution; r == nil || r.Status != "rejected" || r.Error == nil || *r.Error != (interlude.Rejection{Name: "Denied", Message: "not now"}) || r.By != "alice" {
		t.Fatalf("call_2 %+v", x2[0].Resolution)
	}
	page, err := e.client(admin).History(ctx, "t", client.HistoryOptions{Limit: 1, Before: h.Checkpoints[0].ID})
	if err != nil || len(page.Checkpoints) != 1 || page.Checkpoints[0].Kind != "resolve" || len(page.ToolCalls) != 2 {
		t.Fatalf("paged history %v %+v", err, page)
	}
	// The page answers questions raised on an older one: its tool calls show
	// them with the answers.
	if x := page.ToolCalls["call_1"]; len(x) != 1 || x[0].Interrupt.Message != "Run call_1?" || x[0].Resolution == nil || x[0].Resolution.By != "alice" {
		t.Fatalf("the page's tool calls %+v", page.ToolCalls)
	}
	if page.NextBefore != page.Checkpoints[0].ID {
		t.Fatalf("next_before %d, want %d", page.NextBefore, page.Checkpoints[0].ID)
	}
	raw := e.do(http.MethodGet, "/v1/threads/t/history", "", admin.Secret)
	var hv map[string]json.RawMessage
	json.Unmarshal(raw.body, &hv)
	if !strings.Contains(string(hv["tool_calls"]), `"by":"alice"`) {
		t.Fatalf("history %s", raw.body)
	}
	expect(t, e.do(http.MethodGet, "/v1/threads/t/history?limit=-1", "", admin.Secret), http.StatusBadRequest, "invalid_request")
}

func TestRejectAndCancelRoutesTakeTheSinglePendingInterruptWithoutAnID(t *testing.T) {
	e := newEnv(t, setup{})
	e.start("refund", "c", `{"amount":1}`)
	a := e.post("/v1/threads/c/cancel", "")
	expect(t, a, 200, "")
	sameJSON(t, "values", a.json(t)["values"], `{"amount":1,"attempts":2,"outcome":"cancelled"}`)

	e.start("refund", "n", `{"amount":1}`)
	a = e.post("/v1/graph/invoke", `{"resume":null,"config":{"thread_id":"n"}}`)
	expect(t, a, 200, "")
	sameJSON(t, "values", a.json(t)["values"], `{"amount":1,"attempts":2,"outcome":"cancelled"}`)

	e.start("tool", "t", `{}`)
	th := e.do(http.MethodGet, "/v1/threads/t", "", "").json(t)
	var first string
	for _, q := range th["interrupts"].([]any) {
		if q.(map[string]any)["tool_call_id"] == "call_1" {
			first = q.(map[string]any)["id"].(string)
		}
	}
	expect(t, e.post("/v1/threads/t/reject", `{"interrupt_id":"`+first+`"}`), 200, "")
	a = e.post("/v1/threads/t/reject", `{"error":{"name":"Denied","message":""}}`)
	expect(t, a, 200, "")
	sameJSON(t, "values", a.json(t)["values"], `{"results":["call_1 rejected","call_2 rejected"]}`)
	h := e.do(http.MethodGet, "/v1/threads/t/history", "", "").json(t)
	calls := h["tool_calls"].(map[string]any)
	r1 := calls["call_1"].([]any)[0].(map[string]any)["resolution"].(map[string]any)
	r2 := calls["call_2"].([]any)[0].(map[string]any)["resolution"].(map[string]any)
	if _, given := r1["error"]; given || r1["status"] != "rejected" {
		t.Fatalf("a rejection without reason: %v", r1)
	}
	sameJSON(t, "rejection", r2["error"], `{"name":"Denied","message":""}`)
}

func TestDeleteForgetsTheThread(t *testing.T) {
	e := newEnv(t, setup{})
	e.start("refund", "d", `{"amount":1}`)
	a := e.do(http.MethodDelete, "/v1/threads/d", "", "")
	expect(t, a, 200, "")
	sameJSON(t, "answer", a.body, `{"thread_id":"d","deleted":true}`)
	expect(t, e.do(http.MethodGet, "/v1/threads/d", "", ""), http.StatusNotFound, "not_found")
	// The id is free again, for any graph.
	e.start("two-step", "d", `{}`)
}

// TestHistoryAnswersPagesNewestFirstWithTheBeforeOfTheNextOne pages through a
// thread of 45 checkpoints: twenty by default, each once, newest first, with
// next_before leading to the older page (and null at the first checkpoint),
// while the thread goes on growing; a page is 100 at most.
func TestHistoryAnswersPagesNewestFirstWithTheBeforeOfTheNextOne(t *testing.T) {
	e := newEnv(t, setup{})
	ctx := context.Background()
	c := e.client(admin)
	turn := func() {
		t.Helper()
		if _, err := c.Invoke(ctx, client.InvokeRequest{Graph: "chat", ThreadID: "long",
			Messages: []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "hello"}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	for range 45 {
		turn()
	}
	var ids []int64
	var pages []int
	for before := int64(0); ; {
		h, err := c.History(ctx, "long", client.HistoryOptions{Before: before})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, len(h.Checkpoints))
		for _, cp := range h.Checkpoints {
			ids = append(ids, cp.ID)
			if len(cp.Values) == 0 {
				t.Errorf("checkpoint %d has no values", cp.ID)
			}
		}
		if h.NextBefore == 0 {
			break
		}
		if last := h.Checkpoints[len(h.Checkpoints)-1].ID; h.NextBefore != last {
			t.Fatalf("next_before %d, want the page's oldest checkpoint %d", h.NextBefore, last)
		}
		before = h.NextBefore
		turn() // the thread grows between pages
	}
	if !slices.Equal(pages, []int{20, 20, 5}) {
		t.Errorf("pages of %v checkpoints, want 20, 20, 5", pages)
	}
	for i, id := range ids {
		if id != int64(45-i) {
			t.Fatalf("the pages give checkpoints %v, want 45 down to 1", ids)
		}
	}
	last := e.do(http.MethodGet, "/v1/threads/long/history?before=2", "", admin.Secret)
	expect(t, last, http.StatusOK, "")
	if !strings.Contains(string(last.body), `"next_before":null`) {
		t.Errorf("the page of the first checkpoint has a next page: %s", last.body)
	}
	if h, err := c.History(ctx, "long", client.HistoryOptions{Limit: 100}); err != nil || len(h.Checkpoints) != 47 || h.NextBefore != 0 {
		t.Errorf("a page of 100: %v, %d checkpoints, next %d", err, len(h.Checkpoints), h.NextBefore)
	}
	expect(t, e.do(http.MethodGet, "/v1/threads/long/history?limit=101", "", admin.Secret), http.StatusBadRequest, "invalid_request")
	expect(t, e.do(http.MethodGet, "/v1/threads/long/history?before=0", "", admin.Secret), http.StatusBadRequest, "invalid_request")
}
