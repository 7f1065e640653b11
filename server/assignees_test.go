package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server/auth"
)

type payout struct {
	Amount  int    `json:"amount"`
	Outcome string `json:"outcome,omitempty"`
}

// assignedGraph asks one question that only the finance group may answer.
func assignedGraph(opts ...graph.Option) (graph.Erased, error) {
	g := graph.New[payout]()
	g.AddNode("pay", func(ctx context.Context, s payout) (payout, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "Pay out?", Assignees: []string{"finance"}})
		if err != nil {
			return s, err
		}
		return payout{Outcome: "by " + ans.By}, nil
	})
	g.AddEdge(graph.Start, "pay")
	app, err := g.Compile(append(opts, graph.WithName("payout"))...)
	if err != nil {
		return nil, err
	}
	return app.Erase(), nil
}

var financier = auth.Token{Name: "fiona", Secret: "finance-secret-00", Roles: []auth.Role{auth.RoleApprove}, Groups: []string{"finance"}}

func TestAnAnswerFromANonAssigneeIsRefusedOnEveryAnswerRoute(t *testing.T) {
	e := newEnv(t, setup{graphs: []builder{assignedGraph}, tokens: []auth.Token{runner, approver, admin, reader, financier}})
	routes := []struct{ path, body string }{
		{"/v1/threads/p/resume", `{"response":true}`},
		{"/v1/threads/p/reject", `{"error":{"name":"No","message":"no"}}`},
		{"/v1/threads/p/cancel", `{}`},
		{"/v1/graph/invoke", `{"config":{"thread_id":"p"},"resume":true}`},
		{"/v1/graph/invoke", `{"config":{"thread_id":"p"},"responses":[{"interrupt_id":"ID","status":"resolved","response":true}]}`},
		{"/v1/graph/stream", `{"config":{"thread_id":"p"},"resume":true}`},
	}
	started := e.start("payout", "p", `{"amount":5}`)
	id := started["interrupts"].([]any)[0].(map[string]any)["id"].(string)
	if as := started["interrupts"].([]any)[0].(map[string]any)["assignees"]; as == nil {
		t.Fatalf("the interrupt does not show who may answer: %v", started["interrupts"])
	}
	e.unchanged("p", func() {
		for _, r := range routes {
			a := e.post(r.path, strings.ReplaceAll(r.body, "ID", id), approver.Secret)
			if r.path == "/v1/graph/stream" && a.status == http.StatusOK {
				if !strings.Contains(string(a.body), `"forbidden"`) {
					t.Errorf("%s by a non-assignee: %s", r.path, a.body)
				}
				continue
			}
			expect(t, a, http.StatusForbidden, "forbidden")
		}
	})
	a := e.post("/v1/threads/p/resume", `{"response":true}`, financier.Secret)
	expect(t, a, http.StatusOK, "")
	if !strings.Contains(string(a.body), "by fiona") {
		t.Fatalf("the assignee's answer: %s", a.body)
	}
	e.start("payout", "q", `{"amount":5}`)
	expect(t, e.post("/v1/threads/q/cancel", `{}`, admin.Secret), http.StatusOK, "")
}
