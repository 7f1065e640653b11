package server_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server"
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

var financier = server.Token{Name: "fiona", Secret: "finance-secret-00", Roles: []server.Role{server.RoleApprove}, Groups: []string{"finance"}}

func TestAnAnswerFromANonAssigneeIsRefusedOnEveryAnswerRoute(t *testing.T) {
	e := newEnv(t, setup{graphs: []builder{assignedGraph}, tokens: []server.Token{runner, approver, admin, reader, financier}})
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

func TestTheTokensFileGivesGroups(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/tokens"
	if err := os.WriteFile(path, []byte("alice:s3cret-token:approve,@finance,@ops\nbob:other-token:run\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := server.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts[0].Groups) != 2 || ts[0].Groups[0] != "finance" || ts[0].Groups[1] != "ops" || len(ts[0].Roles) != 1 || len(ts[1].Groups) != 0 {
		t.Fatalf("tokens = %+v", ts)
	}
}
