package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

type refundState struct {
	Amount   float64 `json:"amount"`
	Attempts int     `json:"attempts" graph:"add"`
	Outcome  string  `json:"outcome,omitempty"`
}

var approvalSchema = `{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}`

func refundGraph(t testing.TB, st store.Store, opts ...graph.Option) *graph.Graph[refundState] {
	t.Helper()
	g := graph.New[refundState]()
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		if err := graph.Write(ctx, refundState{Attempts: 1}); err != nil {
			return s, err
		}
		ans, err := interlude.Interrupt(ctx, interlude.Request{
			Message: fmt.Sprintf("Approve a refund of $%v?", s.Amount),
			Reason:  interlude.ReasonToolApproval,
			Value:   map[string]any{"amount": s.Amount},
			Schema:  approvalSchema,
		})
		if err != nil {
			return refundState{}, err
		}
		if ans.Cancelled {
			return refundState{Outcome: "cancelled"}, nil
		}
		var d struct{ Approved bool }
		if err := ans.Decode(&d); err != nil {
			return refundState{}, err
		}
		if d.Approved {
			return refundState{Outcome: "refunded"}, nil
		}
		return refundState{Outcome: "declined"}, nil
	})
	g.AddEdge(graph.Start, "refund")
	app, err := g.Compile(append([]graph.Option{graph.WithStore(st), graph.WithName("refund")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestInterruptPausesWithStatusInterruptedNotError(t *testing.T) {
	ctx := context.Background()
	app := refundGraph(t, memory.New())
	res, err := app.Invoke(ctx, "order-42", graph.Input(refundState{Amount: 150}))
	if err != nil {
		t.Fatalf("pause returned an error: %v", err)
	}
	if res.Status != interlude.RunInterrupted || len(res.Interrupts) != 1 {
		t.Fatalf("status %s with %d interrupts, want interrupted with 1", res.Status, len(res.Interrupts))
	}
	q := res.Interrupts[0]
	if q.Message != "Approve a refund of $150?" || q.Reason != "tool_approval" || q.Node != "refund" || string(q.Value) != `{"amount":150}` {
		t.Fatalf("interrupt = %+v", q)
	}
	if res.Values.Attempts != 1 {
		t.Fatalf("attempts = %d while paused, want 1 (written before the interrupt)", res.Values.Attempts)
	}
	res, err = app.Invoke(ctx, "order-42", graph.Resume(interlude.Resolve(map[string]any{"approved": true})))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interlude.RunCompleted || res.Values.Outcome != "refunded" || res.Values.Attempts != 2 {
		t.Fatalf("after resume: %s %+v", res.Status, res.Values)
	}
}

type twoState struct {
	Answers []bool `json:"answers" graph:"append"`
	Before  int    `json:"before" graph:"add"`
	After   int    `json:"after" graph:"add"`
	Outcome string `json:"outcome,omitempty"`
}

func TestTwoInterruptsInOneNodeNeedTwoAnswersInOrder(t *testing.T) {
	ctx := context.Background()
	var before, after atomic.Int32
	g := graph.New[twoState]()
	g.AddNode("ask", func(ctx context.Context, s twoState) (twoState, error) {
		before.Add(1)
		a1, err := interlude.Ask[bool](ctx, interlude.Request{Message: "Approve step 1?"})
		if err != nil {
			return twoState{}, err
		}
		a2, err := interlude.Ask[bool](ctx, interlude.Request{Message: "Approve step 2?"})
		if err != nil {
			return twoState{}, err
		}
		after.Add(1)
		return twoState{Answers: []bool{a1, a2}, Outcome: "done"}, nil
	})
	g.AddEdge(graph.Start, "ask")
	app, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(ctx, "t", graph.Input(twoState{}))
	if err != nil || res.Interrupts[0].Message != "Approve step 1?" {
		t.Fatalf("first pause: %v %+v", err, res)
	}
	first := res.Interrupts[0].ID
	if string(res.Interrupts[0].Schema) != `{"type":"boolean"}` {
		t.Fatalf("Ask[bool] schema = %s", res.Interrupts[0].Schema)
	}
	res, err = app.Invoke(ctx, "t", graph.Resume(interlude.Resolve(true)))
	if err != nil || res.Status != interlude.RunInterrupted || res.Interrupts[0].Message != "Approve step 2?" {
		t.Fatalf("second pause: %v %+v", err, res)
	}
	if res.Interrupts[0].ID == first {
		t.Fatal("second question reused the first one's id")
	}
	res, err = app.Invoke(ctx, "t", graph.Resume(interlude.Resolve(false)))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("end: %v %+v", err, res)
	}
	if !slices.Equal(res.Values.Answers, []bool{true, false}) {
		t.Fatalf("answers = %v", res.Values.Answers)
	}
	if before.Load() != 3 || after.Load() != 1 {
		t.Fatalf("code before the interrupts ran %d times (want 3, once per attempt), after ran %d (want 1)", before.Load(), after.Load())
	}
}

type loopState struct {
	Round int      `json:"round"`
	Got   []string `json:"got" graph:"append"`
}

func TestInterruptInLoopGetsFreshIDEachCycle(t *testing.T) {
	ctx := context.Background()
	g := graph.New[loopState]()
	g.AddNode("ask", func(ctx context.Context, s loopState) (loopState, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: fmt.Sprintf("round %d?", s.Round)})
		if err != nil {
			return loopState{}, err
		}
		var v string
		if err := ans.Decode(&v); err != nil {
			return loopState{}, err
		}
		return loopState{Round: s.Round + 1, Got: []string{v}}, nil
	})
	g.AddEdge(graph.Start, "ask")
	g.AddRoute("ask", func(ctx context.Context, s loopState) ([]string, error) {
		if s.Round < 3 {
			return []string{"ask"}, nil
		}
		return []string{graph.End}, nil
	})
	app, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(ctx, "loop", graph.Input(loopState{}))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := 0; res.Status == interlude.RunInterrupted; i++ {
		id := res.Interrupts[0].ID
		if seen[id] {
			t.Fatalf("cycle %d reused interrupt id %s", i, id)
		}
		seen[id] = true
		// The previous cycle's answer must not be delivered to this question.
		if res.Values.Round != i {
			t.Fatalf("round = %d at cycle %d", res.Values.Round, i)
		}
		res, err = app.Invoke(ctx, "loop", graph.Resume(interlude.Resolve(fmt.Sprintf("a%d", i))))
		if err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(res.Values.Got, []string{"a0", "a1", "a2"}) || len(seen) != 3 {
		t.Fatalf("got %v over %d questions", res.Values.Got, len(seen))
	}
}

type parState struct {
	Approved []string `json:"approved" graph:"append"`
	CRuns    int      `json:"c_runs" graph:"add"`
	Outcome  []string `json:"outcome,omitempty"`
}

func parallelGraph(t testing.TB, st store.Store) *graph.Graph[parState] {
	t.Helper()
	g := graph.New[parState]()
	branch := func(name string) graph.Node[parState] {
		return func(ctx context.Context, s parState) (parState, error) {
			ok, err := interlude.Ask[bool](ctx, interlude.Request{Message: "Approve " + name + "?"})
			if err != nil {
				return parState{}, err
			}
			if ok {
				return parState{Approved: []string{name}}, nil
			}
			return parState{}, nil
		}
	}
	g.AddNode("a", branch("a"))
	g.AddNode("b", branch("b"))
	g.AddNode("c", func(ctx context.Context, s parState) (parState, error) {
		return parState{CRuns: 1}, nil
	})
	g.AddNode("join", func(ctx context.Context, s parState) (parState, error) {
		out := slices.Clone(s.Approved)
		slices.Sort(out)
		if out == nil {
			out = []string{}
		}
		return parState{Outcome: out}, nil
	})
	for _, n := range []string{"a", "b", "c"} {
		g.AddEdge(graph.Start, n)
		g.AddEdge(n, "join")
	}
	app, err := g.Compile(graph.WithStore(st), graph.WithName("parallel"))
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestParallelBranchesFinishedBranchRunsOnce(t *testing.T) {
	ctx := context.Background()
	app := parallelGraph(t, memory.New())

	t.Run("answered one at a time", func(t *testing.T) {
		res, err := app.Invoke(ctx, "p1", graph.Input(parState{}))
		if err != nil || len(res.Interrupts) != 2 {
			t.Fatalf("%v %+v", err, res)
		}
		if _, err := app.Invoke(ctx, "p1", graph.Resume(interlude.Resolve(true))); !errors.Is(err, interlude.ErrAmbiguousResume) {
			t.Fatalf("bare resume with two pending: err = %v", err)
		}
		a := idFor(t, res.Interrupts, "Approve a?")
		b := idFor(t, res.Interrupts, "Approve b?")
		res, err = app.Invoke(ctx, "p1", graph.Respond(map[string]interlude.Resolution{a: interlude.Resolve(true)}))
		if err != nil || res.Status != interlude.RunInterrupted || len(res.Interrupts) != 1 || res.Interrupts[0].ID != b {
			t.Fatalf("after answering a: %v %+v", err, res)
		}
		res, err = app.Invoke(ctx, "p1", graph.Respond(map[string]interlude.Resolution{b: interlude.Resolve(true)}))
		if err != nil || res.Status != interlude.RunCompleted {
			t.Fatalf("after answering b: %v %+v", err, res)
		}
		if res.Values.CRuns != 1 || !slices.Equal(res.Values.Outcome, []string{"a", "b"}) {
			t.Fatalf("values = %+v", res.Values)
		}
	})
	t.Run("answered together", func(t *testing.T) {
		res, err := app.Invoke(ctx, "p2", graph.Input(parState{}))
		if err != nil {
			t.Fatal(err)
		}
		res, err = app.Invoke(ctx, "p2", graph.Respond(map[string]interlude.Resolution{
			idFor(t, res.Interrupts, "Approve a?"): interlude.Resolve(false),
			idFor(t, res.Interrupts, "Approve b?"): interlude.Resolve(true),
		}))
		if err != nil || res.Status != interlude.RunCompleted || res.Values.CRuns != 1 || !slices.Equal(res.Values.Outcome, []string{"b"}) {
			t.Fatalf("%v %+v", err, res)
		}
	})
}

func idFor(t *testing.T, qs []interlude.Interruption, msg string) string {
	t.Helper()
	for _, q := range qs {
		if q.Message == msg {
			return q.ID
		}
	}
	t.Fatalf("no interrupt %q in %+v", msg, qs)
	return ""
}

var _ = json.Valid
var _ sync.Mutex

// TestABuilderChangedAfterCompileLeavesTheCompiledGraphAlone checks that a
// compiled graph runs as it was compiled: nodes, edges and routes added to its
// builder afterwards change nothing it does.
func TestABuilderChangedAfterCompileLeavesTheCompiledGraphAlone(t *testing.T) {
	ctx := context.Background()
	var ran []string
	node := func(name string) graph.Node[refundState] {
		return func(context.Context, refundState) (refundState, error) {
			ran = append(ran, name)
			return refundState{Attempts: 1}, nil
		}
	}
	b := graph.New[refundState]()
	b.AddNode("first", node("first")).AddNode("second", node("second"))
	b.AddEdge(graph.Start, "first").AddEdge("first", "second")
	app, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	b.AddNode("later", node("later"))
	b.AddEdge(graph.Start, "later").AddEdge("first", "later").AddEdge("second", "later")
	b.AddRoute("second", func(context.Context, refundState) ([]string, error) { return []string{"later"}, nil })
	res, err := app.Invoke(ctx, "x", graph.Input(refundState{Amount: 1}))
	if err != nil || res.Status != interlude.RunCompleted || res.Values.Attempts != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	if !slices.Equal(ran, []string{"first", "second"}) {
		t.Fatalf("the compiled graph ran %q, want first then second", ran)
	}
	if got := app.Nodes(); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("the compiled graph lists nodes %q, want first and second", got)
	}
}

// TestTwoNodesReplacingOneFieldInOneStepFailTheStep checks that parallel nodes
// writing the same field without a reducer fail their step, while one node
// writing a field twice (Write, then its update) does not.
func TestTwoNodesReplacingOneFieldInOneStepFailTheStep(t *testing.T) {
	ctx := context.Background()
	setOutcome := func(outcome string) graph.Node[refundState] {
		return func(ctx context.Context, _ refundState) (refundState, error) {
			if err := graph.Write(ctx, refundState{Outcome: "draft"}); err != nil {
				return refundState{}, err
			}
			return refundState{Outcome: outcome}, nil
		}
	}
	alone := graph.New[refundState]()
	alone.AddNode("a", setOutcome("a")).AddEdge(graph.Start, "a")
	app, err := alone.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if res, err := app.Invoke(ctx, "x", graph.Input(refundState{Amount: 1})); err != nil || res.Values.Outcome != "a" {
		t.Fatalf("%v %+v", err, res)
	}
	both := graph.New[refundState]()
	both.AddNode("a", setOutcome("a")).AddNode("b", setOutcome("b"))
	both.AddEdge(graph.Start, "a").AddEdge(graph.Start, "b")
	if app, err = both.Compile(); err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(ctx, "x", graph.Input(refundState{Amount: 1}))
	if !errors.Is(err, interlude.ErrInvalidUpdate) || res == nil || res.Status != interlude.RunFailed {
		t.Fatalf("got %v %+v, want the step failed: a and b both wrote outcome", err, res)
	}
}
