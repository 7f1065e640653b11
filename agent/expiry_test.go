package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/testclock"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/store/memory"
)

func TestAnApprovalNotGivenInTimeDoesNotRunTheTool(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	m := scripted.New(scripted.Calls(scripted.Call("issue_refund", refundArgs{OrderID: "1", Amount: 80})), scripted.Text("ok"))
	s := newShop()
	a, err := agent.New(m, s.tools(),
		agent.RequireApproval("issue_refund", agent.WithApprovalTTL(24*time.Hour)),
		agent.WithGraphOptions(graph.WithStore(memory.New()), graph.WithClock(clock.Now)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(ctx, "r", agent.Ask("refund"))
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	q := res.Interrupts[0]
	if q.ExpiresAt == nil || !q.ExpiresAt.Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("the approval question expires at %v, want %v", q.ExpiresAt, t0.Add(24*time.Hour))
	}
	clock.Set(t0.Add(24 * time.Hour))
	if _, err := a.Invoke(ctx, "r", graph.Respond(map[string]interlude.Resolution{q.ID: agent.Approve()})); err == nil {
		t.Fatal("an approval given after the question expired was accepted")
	}
	res, err = a.Invoke(ctx, "r", graph.Respond(map[string]interlude.Resolution{q.ID: interlude.Expire()}))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	if s.refunds.Load() != 0 {
		t.Fatal("the tool ran without approval")
	}
	reqs := m.Requests()
	msgs := reqs[len(reqs)-1].Messages
	r := toolResults(msgs[len(msgs)-1])[0]
	if want := "The call to issue_refund was not approved in time, so it did not run."; !r.IsError || r.ContentText() != want {
		t.Fatalf("model saw %q (error %v), want %q", r.ContentText(), r.IsError, want)
	}
}
