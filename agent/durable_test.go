package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/store/sqlite"
)

func refundScript() *scripted.Model {
	return scripted.New(
		scripted.Calls(
			scripted.Call("lookup_order", lookupArgs{OrderID: "42"}),
			scripted.Call("issue_refund", refundArgs{OrderID: "42", Amount: 150}),
		),
		scripted.Text("Your refund of $150 is on its way."),
	)
}

// finish runs the refund conversation on the agent the factory builds, optionally
// dropping every Go value and rebuilding it over the same SQLite file while paused.
func finish(t *testing.T, restart bool) []model.Message {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agent.db")
	build := func() (*agent.Agent, func()) {
		st, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return newAgent(t, refundScript(), newShop(), st), func() { st.Close() }
	}
	a, closeStore := build()
	res, err := a.Invoke(ctx, "conv", agent.Ask("Please refund order 42"))
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	id := res.Interrupts[0].ID
	if restart {
		closeStore()
		a, closeStore = build()
	}
	defer closeStore()
	res, err = a.Invoke(ctx, "conv", graph.Resume(agent.Approve()))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	if res.Interrupts != nil || id == "" {
		t.Fatal("unexpected pending questions")
	}
	return res.Values.Messages
}

func TestRestartOverSQLiteFinishesWithSameResult(t *testing.T) {
	want := finish(t, false)
	got := finish(t, true)
	if len(got) != len(want) {
		t.Fatalf("%d messages after a restart, %d without", len(got), len(want))
	}
	for i := range want {
		if got[i].Role != want[i].Role || got[i].Text() != want[i].Text() || len(got[i].Content) != len(want[i].Content) {
			t.Fatalf("message %d differs: %+v vs %+v", i, got[i], want[i])
		}
	}
	if got[len(got)-1].Text() != "Your refund of $150 is on its way." {
		t.Fatalf("final text = %q", got[len(got)-1].Text())
	}
}

// refundLoop calls issue_refund until the run's assistant turns reach what the
// latest user message asks for: "twice" two calls then an answer, "forever" no end;
// anything else is answered at once.
func refundLoop() *scripted.Model {
	return scripted.Func(func(ctx context.Context, req *model.Request) (model.Message, error) {
		turns, ask := 0, ""
		for _, m := range slices.Backward(req.Messages) {
			if m.Role == model.RoleAssistant {
				turns++
			} else if len(m.ToolResults()) == 0 {
				ask = m.Text()
				break
			}
		}
		if ask == "forever" || (ask == "twice" && turns < 2) {
			return model.Message{Content: []model.Block{model.ToolUse("", "issue_refund", json.RawMessage(`{"order_id":"1","amount":1}`))}}, nil
		}
		return model.AssistantText("done"), nil
	})
}

func TestMaxTurnsCountsEachRunAcrossPausesAndRestarts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agent.db")
	m := refundLoop()
	build := func() (*agent.Agent, func()) {
		st, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return newAgent(t, m, newShop(), st, agent.WithMaxTurns(3)), func() { st.Close() }
	}
	a, closeStore := build()
	defer func() { closeStore() }()
	runs := []struct {
		ask      string
		restart  bool // rebuild the agent over the same file at the run's first pause
		calls    int  // model calls the run makes
		maxTurns bool // the run stops at the cap
	}{
		{"twice", false, 3, false},
		{"twice", true, 3, false}, // a count over the whole thread would stop here
		{"hello", false, 1, false},
		{"forever", true, 3, true}, // pauses and a restart do not reset the count
	}
	for i, r := range runs {
		before := m.Calls()
		res, err := a.Invoke(ctx, "c", agent.Ask(r.ask))
		for pauses := 0; err == nil && res.Status == interlude.RunInterrupted; pauses++ {
			if r.restart && pauses == 0 {
				closeStore()
				a, closeStore = build()
				if s, err := a.State(ctx, "c"); err != nil || s.Values.Turns != 1 {
					t.Fatalf("run %d: after a restart the count is %d (%v), want 1", i, s.Values.Turns, err)
				}
			}
			res, err = a.Invoke(ctx, "c", graph.Resume(agent.Approve()))
		}
		if got := m.Calls() - before; got != r.calls || errors.Is(err, agent.ErrMaxTurns) != r.maxTurns || res.Values.Turns != r.calls {
			t.Fatalf("run %d (%s): %d model calls, turns %d, err %v; want %d calls, stopped at the cap %v", i, r.ask, got, res.Values.Turns, err, r.calls, r.maxTurns)
		}
		if !r.maxTurns && (res.Status != interlude.RunCompleted || res.Values.Messages[len(res.Values.Messages)-1].Text() != "done") {
			t.Fatalf("run %d (%s) did not end with an answer: %+v", i, r.ask, res)
		}
	}
	before := m.Calls()
	if _, err := a.Invoke(ctx, "c", graph.Continue()); !errors.Is(err, agent.ErrMaxTurns) || m.Calls() != before {
		t.Fatalf("Continue after the cap: %v, %d model calls", err, m.Calls()-before)
	}
	res, err := a.Invoke(ctx, "c", agent.Ask("hello"))
	if err != nil || res.Status != interlude.RunCompleted || res.Values.Turns != 1 || m.Calls() != before+1 {
		t.Fatalf("new input after the cap: %v %+v", err, res)
	}
}
