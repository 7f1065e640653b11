package agent_test

import (
	"context"
	"path/filepath"
	"testing"

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
	if err != nil || res.Status != graph.Interrupted {
		t.Fatalf("%v %+v", err, res)
	}
	id := res.Interrupts[0].ID
	if restart {
		closeStore()
		a, closeStore = build()
	}
	defer closeStore()
	res, err = a.Invoke(ctx, "conv", graph.Resume(agent.Approve().Response))
	if err != nil || res.Status != graph.Completed {
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
