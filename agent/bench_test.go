package agent_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
	"github.com/interludehq/interlude/store/sqlite"
)

// BenchmarkAgentTurnScripted runs one agent turn with three parallel tool calls on
// the scripted model over SQLite: model call, three tools, model answer. The
// framework's own cost is what remains once the store's share is subtracted:
// three commits, of which only the run's last waits for an fsync (durability
// async, the default); see BenchmarkAppend in store/sqlite.
func BenchmarkAgentTurnScripted(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		st, err := sqlite.Open(filepath.Join(b.TempDir(), "agent.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		agentTurn(b, st)
	})
	b.Run("memory", func(b *testing.B) { agentTurn(b, memory.New()) })
}

func agentTurn(b *testing.B, st store.Store) {
	m := scripted.New(
		scripted.Calls(
			scripted.Call("lookup_order", lookupArgs{OrderID: "1"}),
			scripted.Call("lookup_order", lookupArgs{OrderID: "2"}),
			scripted.Call("lookup_order", lookupArgs{OrderID: "3"}),
		),
		scripted.Text("All three orders are fine."),
	)
	a, err := agent.New(m, newShop().tools(), agent.WithGraphOptions(graph.WithStore(st)))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		res, err := a.Invoke(ctx, "t"+strconv.Itoa(i), agent.Ask("check orders 1, 2 and 3"))
		if err != nil || res.Status != interlude.RunCompleted {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkAgentApprovalCycle pauses on a gated call and approves it: two
// invocations, five commits, of which over SQLite three wait for an fsync
// (the pause, the accepted answer and the run's end).
func BenchmarkAgentApprovalCycle(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		st, err := sqlite.Open(filepath.Join(b.TempDir(), "agent.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		approvalCycle(b, st)
	})
	b.Run("memory", func(b *testing.B) { approvalCycle(b, memory.New()) })
}

func approvalCycle(b *testing.B, st store.Store) {
	m := scripted.New(
		scripted.Calls(scripted.Call("issue_refund", refundArgs{OrderID: "1", Amount: 10})),
		scripted.Text("Refunded."),
	)
	s := newShop()
	s.amounts = make(chan float64, 1<<20)
	a, err := agent.New(m, s.tools(), agent.RequireApproval("issue_refund"), agent.WithGraphOptions(graph.WithStore(st)))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	approve := graph.Resume(agent.Approve())
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		id := "t" + strconv.Itoa(i)
		if res, err := a.Invoke(ctx, id, agent.Ask("refund order 1")); err != nil || res.Status != interlude.RunInterrupted {
			b.Fatal(err, res)
		}
		if res, err := a.Invoke(ctx, id, approve); err != nil || res.Status != interlude.RunCompleted {
			b.Fatal(err, res)
		}
		if i%1000 == 999 {
			for len(s.amounts) > 0 {
				<-s.amounts
			}
		}
	}
}
