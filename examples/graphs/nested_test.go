package graphs_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/postgres"
	"github.com/interludehq/interlude/store/sqlite"
	"github.com/jackc/pgx/v5"
)

func TestNestedAsksManagerThenFinanceWithTheirPathsAndCountsManagerStarts(t *testing.T) {
	for _, c := range []struct {
		amount   float64
		answers  []bool
		outcome  string
		managers int
	}{
		{150, []bool{true, true}, "approved", 2},
		{150, []bool{true, false}, "rejected", 2},
		{150, []bool{false}, "rejected", 2},
		{50, []bool{true}, "approved", 2},
	} {
		g, err := graphs.Nested()
		if err != nil {
			t.Fatal(err)
		}
		res, err := g.Invoke(ctx, "n", graph.Input(map[string]any{"amount": c.amount}))
		paths := [][]string{{"approval", "manager"}, {"approval", "finance"}}
		who := []string{"Manager", "Finance"}
		for i, yes := range c.answers {
			if err != nil || res.Status != interlude.RunInterrupted || len(res.Interrupts) != 1 {
				t.Fatalf("%v: question %d: %v %+v", c, i, err, res)
			}
			q := res.Interrupts[0]
			if !slices.Equal(q.Path, paths[i]) || q.Message != who[i]+": approve "+graphs.Dollars(c.amount)+"?" || q.Reason != "approval" || string(q.Schema) != graphs.YesNoSchema {
				t.Fatalf("%v: question %d is %+v", c, i, q)
			}
			res, err = g.Invoke(ctx, "n", graph.Resume(interlude.Resolve(yes)))
		}
		if err != nil || res.Status != interlude.RunCompleted || res.Values.Outcome != c.outcome || res.Values.ManagerRuns != c.managers {
			t.Fatalf("%v: %v %+v", c, err, res)
		}
	}
}

// restartingStores are the stores a thread can restart over: SQLite always,
// Postgres when INTERLUDE_TEST_POSTGRES names a database.
func restartingStores(t *testing.T) map[string]func() (store.Store, func()) {
	path := filepath.Join(t.TempDir(), "nested.db")
	out := map[string]func() (store.Store, func()){
		"sqlite": func() (store.Store, func()) {
			st, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			return st, func() { st.Close() }
		},
	}
	if dsn := os.Getenv("INTERLUDE_TEST_POSTGRES"); dsn != "" {
		b := make([]byte, 6)
		rand.Read(b)
		schema := "interlude_test_" + hex.EncodeToString(b)
		t.Cleanup(func() {
			conn, err := pgx.Connect(context.Background(), dsn)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close(context.Background())
			conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		})
		out["postgres"] = func() (store.Store, func()) {
			st, err := postgres.Open(context.Background(), dsn, postgres.WithSchema(schema))
			if err != nil {
				t.Fatal(err)
			}
			return st, func() { st.Close() }
		}
	} else {
		t.Log("Postgres is skipped: set INTERLUDE_TEST_POSTGRES to run it too")
	}
	return out
}

func TestARestartBetweenEveryStepOfANestedThreadChangesNothing(t *testing.T) {
	for name, open := range restartingStores(t) {
		t.Run(name, func(t *testing.T) {
			for _, restart := range []bool{false, true} {
				st, closeStore := open()
				g, err := graphs.Nested(graph.WithStore(st))
				if err != nil {
					t.Fatal(err)
				}
				thread := "n-" + map[bool]string{false: "kept", true: "restarted"}[restart]
				var ids []string
				res, err := g.Invoke(ctx, thread, graph.Input(map[string]any{"amount": 150}))
				for step := 0; err == nil && res.Status == interlude.RunInterrupted; step++ {
					ids = append(ids, res.Interrupts[0].ID)
					if restart {
						closeStore()
						st, closeStore = open()
						if g, err = graphs.Nested(graph.WithStore(st)); err != nil {
							t.Fatal(err)
						}
						snap, err := g.State(ctx, thread)
						if err != nil || len(snap.Interrupts) != 1 || snap.Interrupts[0].ID != res.Interrupts[0].ID {
							t.Fatalf("after a restart the thread reads %v %+v", err, snap)
						}
					}
					res, err = g.Invoke(ctx, thread, graph.Resume(interlude.Resolve(true)))
				}
				closeStore()
				if err != nil || res.Values.Outcome != "approved" || res.Values.ManagerRuns != 2 || len(ids) != 2 {
					t.Fatalf("restart=%v: %v %+v after questions %v", restart, err, res, ids)
				}
			}
		})
	}
}

// recorded wraps a model, keeping every request it gets.
type recorded struct {
	model.Model
	reqs []*model.Request
}

func (r *recorded) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	r.reqs = append(r.reqs, req)
	return r.Model.Generate(ctx, req)
}

func (r *recorded) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	r.reqs = append(r.reqs, req)
	return r.Model.Stream(ctx, req)
}

func teamAgent(t *testing.T, opts ...graph.Option) (*agent.Agent, *recorded, *recorded) {
	t.Helper()
	sup, bill := &recorded{Model: graphs.SupervisorScript()}, &recorded{Model: graphs.SupportScript()}
	a, err := graphs.TeamAgent(sup, bill, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return a, sup, bill
}

func TestTeamAgentAsksForTheInnerRefundWithThePathThroughBothAgents(t *testing.T) {
	a, sup, bill := teamAgent(t)
	res, err := a.Invoke(ctx, "team", agent.Ask("Please refund order A-1001 ($150), it arrived broken."))
	if err != nil || res.Status != interlude.RunInterrupted || len(res.Interrupts) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	q := res.Interrupts[0]
	if len(q.Path) != 5 || q.Path[0] != agent.ToolsNode || q.Path[2] != "billing" || q.Path[3] != agent.ToolsNode || q.ToolCallID != q.Path[4] || q.Reason != interlude.ReasonToolApproval {
		t.Fatalf("the approval is %+v, want the path [tools <call> billing tools <inner call>]", q)
	}
	var v struct{ Tool string }
	if json.Unmarshal(q.Value, &v); v.Tool != "issue_refund" {
		t.Fatalf("the approval is about %q, want issue_refund", v.Tool)
	}
	res, err = a.Invoke(ctx, "team", graph.Resume(agent.Approve()))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	if got := res.Values.Messages[len(res.Values.Messages)-1].Text(); got != "Billing says: Done: Refunded $150 on order A-1001." {
		t.Fatalf("the supervisor answered %q", got)
	}
	// Each model turn was made once: the billing agent's first turn was not
	// made again on resume.
	if len(sup.reqs) != 2 || len(bill.reqs) != 2 {
		t.Fatalf("supervisor called %d times, billing %d; want 2 each", len(sup.reqs), len(bill.reqs))
	}
	for _, req := range sup.reqs {
		for _, m := range req.Messages {
			if strings.Contains(m.Text(), "Let me look up") || len(m.ToolUses()) > 0 && m.ToolUses()[0].Name != "billing" {
				t.Fatalf("the supervisor saw the billing agent's own turn: %+v", m)
			}
		}
	}
	d, ok := res.Values.Subagents[q.Path[1]]
	if !ok || d.Tool != "billing" || len(d.Messages) != 4 {
		t.Fatalf("the billing transcript kept is %+v (found %v), want its 4 messages", d, ok)
	}
}

func TestAnInnerApprovalRejectedShowsEachModelTheRightThing(t *testing.T) {
	a, sup, bill := teamAgent(t)
	if _, err := a.Invoke(ctx, "team", agent.Ask("Please refund order A-1001 ($150).")); err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(ctx, "team", graph.Respond(map[string]interlude.Resolution{"": agent.Deny("over the limit")}))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	// The billing model sees the rejection as issue_refund's failed result.
	last := bill.reqs[len(bill.reqs)-1].Messages
	results := last[len(last)-1].ToolResults()
	if r := results[len(results)-1]; !r.IsError || r.ContentText() != "over the limit" {
		t.Fatalf("billing's model saw %+v for issue_refund", r)
	}
	// The supervisor sees only billing's answer, as its tool's result.
	sl := sup.reqs[len(sup.reqs)-1].Messages
	sr := sl[len(sl)-1].ToolResults()
	if len(sr) != 1 || sr[0].IsError || sr[0].ContentText() != "I could not issue the refund: over the limit" {
		t.Fatalf("the supervisor saw %+v", sr)
	}
}

func TestAnInnerApprovalEditedOrAnsweredActsOnTheInnerCall(t *testing.T) {
	for _, c := range []struct {
		answer interlude.Resolution
		want   string
	}{
		{agent.Edit(graphs.RefundArgs{OrderID: "A-1001", Amount: 20}), "Billing says: Done: Refunded $20 on order A-1001."},
		{agent.RespondWith("Refund queued for review."), "Billing says: Done: Refund queued for review."},
	} {
		a, _, _ := teamAgent(t)
		if _, err := a.Invoke(ctx, "team", agent.Ask("Please refund order A-1001 ($150).")); err != nil {
			t.Fatal(err)
		}
		res, err := a.Invoke(ctx, "team", graph.Respond(map[string]interlude.Resolution{"": c.answer}))
		if err != nil || res.Status != interlude.RunCompleted {
			t.Fatalf("%v %+v", err, res)
		}
		if got := res.Values.Messages[len(res.Values.Messages)-1].Text(); got != c.want {
			t.Fatalf("answered %q, want %q", got, c.want)
		}
	}
}

func TestARestartBetweenEveryStepOfATeamAgentChangesNothing(t *testing.T) {
	for name, open := range restartingStores(t) {
		t.Run(name, func(t *testing.T) {
			st, closeStore := open()
			a, _, _ := teamAgent(t, graph.WithStore(st))
			res, err := a.Invoke(ctx, "team-r", agent.Ask("Please refund order A-1001 ($150)."))
			if err != nil || len(res.Interrupts) != 1 {
				t.Fatalf("%v %+v", err, res)
			}
			id := res.Interrupts[0].ID
			closeStore()
			st, closeStore = open()
			defer closeStore()
			a, sup, bill := teamAgent(t, graph.WithStore(st))
			snap, err := a.State(ctx, "team-r")
			if err != nil || len(snap.Interrupts) != 1 || snap.Interrupts[0].ID != id {
				t.Fatalf("after a restart: %v %+v", err, snap)
			}
			if s, ok := graph.SubgraphAt(snap, agent.ToolsNode, snap.Interrupts[0].Path[1], "billing"); !ok || len(s.Interrupts) != 1 {
				t.Fatalf("the billing agent's state is not readable by namespace: %+v", snap.Subgraphs)
			}
			res, err = a.Invoke(ctx, "team-r", graph.Resume(agent.Approve()))
			if err != nil || res.Status != interlude.RunCompleted || res.Values.Messages[len(res.Values.Messages)-1].Text() != "Billing says: Done: Refunded $150 on order A-1001." {
				t.Fatalf("%v %+v", err, res)
			}
			if len(sup.reqs) != 1 || len(bill.reqs) != 1 {
				t.Fatalf("after the restart the supervisor was called %d times and billing %d; want 1 each (turns made before are not made again)", len(sup.reqs), len(bill.reqs))
			}
		})
	}
}

// storedBytes is what a thread keeps in st: its records and the snapshots kept.
func storedBytes(t *testing.T, st store.Store, thread string) int {
	t.Helper()
	recs, err := st.Records(ctx, thread, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	snaps := map[int64]int{}
	for _, r := range recs {
		n += len(r.Data)
		p, err := st.History(ctx, thread, r.Version+1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if p.Base != nil {
			snaps[p.Base.Version] = len(p.Base.Data)
		}
	}
	for _, s := range snaps {
		n += s
	}
	return n
}

func TestTheStorageOfANestedThreadStaysLinearInItsTranscript(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "growth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, _, _ := teamAgent(t, graph.WithStore(st))
	ratio := map[int]float64{}
	for turn := 1; turn <= 40; turn++ {
		res, err := a.Invoke(ctx, "grow", agent.Ask("Please refund order A-1001 ($150), it arrived broken."))
		if err != nil || res.Status != interlude.RunInterrupted {
			t.Fatalf("turn %d: %v %+v", turn, err, res)
		}
		if res, err = a.Invoke(ctx, "grow", graph.Resume(agent.Approve())); err != nil || res.Status != interlude.RunCompleted {
			t.Fatalf("turn %d: %v %+v", turn, err, res)
		}
		if turn == 20 || turn == 40 {
			// The transcript: the outer conversation and the inner ones.
			tj, _ := json.Marshal(res.Values)
			ratio[turn] = float64(storedBytes(t, st, "grow")) / float64(len(tj))
		}
	}
	t.Logf("stored bytes over transcript bytes: %.2f after 20 turns, %.2f after 40", ratio[20], ratio[40])
	if ratio[40] > ratio[20]*1.15 || ratio[40] > 4 {
		t.Fatalf("stored bytes grow faster than the transcript: %.2f times it after 20 turns, %.2f after 40", ratio[20], ratio[40])
	}
}
