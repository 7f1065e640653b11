package graph_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

type payload struct {
	Items []map[string]float64 `json:"items" graph:"append"`
}

func TestUnencodableWriteIsRefusedWithItsPath(t *testing.T) {
	g := graph.New[payload]()
	g.AddNode("bad", func(ctx context.Context, s payload) (payload, error) {
		return payload{Items: []map[string]float64{{"ok": 1}, {"ratio": math.NaN()}}}, nil
	})
	g.AddEdge(graph.Start, "bad")
	app, _ := g.Compile()
	res, err := app.Invoke(context.Background(), "t", graph.Input(payload{}))
	if !errors.Is(err, interlude.ErrInvalidUpdate) || !strings.Contains(err.Error(), "items[1][ratio]") {
		t.Fatalf("err = %v", err)
	}
	if res.Status != interlude.RunFailed {
		t.Fatalf("status = %s", res.Status)
	}
	if _, err := app.Invoke(context.Background(), "u", graph.Input(payload{Items: []map[string]float64{{"x": math.Inf(1)}}})); !errors.Is(err, interlude.ErrInvalidUpdate) || !strings.Contains(err.Error(), "items[0][x]") {
		t.Fatalf("input: err = %v", err)
	}
}

func TestObserverSeesNodesButCannotPauseThem(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	var pauseErr error
	obs := graph.Observer[refundState]{
		BeforeNode: func(ctx context.Context, info graph.NodeInfo, s refundState) error {
			_, pauseErr = interlude.Interrupt(ctx, interlude.Request{Message: "may I?"})
			mu.Lock()
			seen = append(seen, "before "+info.Node)
			mu.Unlock()
			if s.Amount < 0 {
				return errors.New("amount must not be negative")
			}
			return nil
		},
		AfterNode: func(ctx context.Context, info graph.NodeInfo, upd refundState, err error) {
			mu.Lock()
			seen = append(seen, "after "+info.Node+" paused="+boolString(interlude.IsPaused(err)))
			mu.Unlock()
		},
	}
	app := refundGraph(t, nil, graph.WithObserver(obs))
	res, err := app.Invoke(context.Background(), "o", graph.Input(refundState{Amount: 3}))
	if err != nil || res.Status != interlude.RunInterrupted || len(res.Interrupts) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	if !errors.Is(pauseErr, interlude.ErrNotInRun) {
		t.Fatalf("Interrupt in an observer: %v", pauseErr)
	}
	if strings.Join(seen, "; ") != "before refund; after refund paused=true" {
		t.Fatalf("seen %v", seen)
	}
	res, err = app.Invoke(context.Background(), "neg", graph.Input(refundState{Amount: -1}))
	if err == nil || res.Status != interlude.RunFailed || !strings.Contains(res.Error, "must not be negative") {
		t.Fatalf("input check: %v %+v", err, res)
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestRecursionLimitStopsEndlessLoops(t *testing.T) {
	g := graph.New[counter]()
	g.AddNode("spin", func(ctx context.Context, s counter) (counter, error) { return counter{N: s.N + 1}, nil })
	g.AddEdge(graph.Start, "spin").AddEdge("spin", "spin")
	app, _ := g.Compile(graph.WithRecursionLimit(5))
	res, err := app.Invoke(context.Background(), "l", graph.Input(counter{}))
	if !errors.Is(err, interlude.ErrRecursionLimit) || res.Values.N != 5 || res.Status != interlude.RunFailed {
		t.Fatalf("%v %+v", err, res)
	}
	res, err = app.Invoke(context.Background(), "l", graph.Continue())
	if !errors.Is(err, interlude.ErrRecursionLimit) || res.Values.N != 10 {
		t.Fatalf("continue runs another 5 steps: %v %+v", err, res)
	}
}

func TestFailedStepRetriesOnContinueWithoutRerunningFinishedTasks(t *testing.T) {
	var aRuns, bRuns int
	var mu sync.Mutex
	fail := true
	g := graph.New[parState]()
	g.AddNode("a", func(ctx context.Context, s parState) (parState, error) {
		mu.Lock()
		defer mu.Unlock()
		aRuns++
		return parState{CRuns: 1}, nil
	})
	g.AddNode("b", func(ctx context.Context, s parState) (parState, error) {
		mu.Lock()
		defer mu.Unlock()
		bRuns++
		if fail {
			return parState{}, errors.New("flaky")
		}
		return parState{Approved: []string{"b"}}, nil
	})
	g.AddEdge(graph.Start, "a").AddEdge(graph.Start, "b")
	app, _ := g.Compile()
	ctx := context.Background()
	res, err := app.Invoke(ctx, "f", graph.Input(parState{}))
	if err == nil || res.Status != interlude.RunFailed {
		t.Fatalf("%v %+v", err, res)
	}
	fail = false
	res, err = app.Invoke(ctx, "f", graph.Continue())
	if err != nil || res.Status != interlude.RunCompleted || aRuns != 1 || bRuns != 2 || res.Values.CRuns != 1 {
		t.Fatalf("%v %+v a=%d b=%d", err, res, aRuns, bRuns)
	}
}

func TestUpdateStateActsAsNode(t *testing.T) {
	ctx := context.Background()
	app := gatedGraph(t)
	app.Invoke(ctx, "u", graph.Input(gateState{Topic: "go"}))
	res, err := app.UpdateState(ctx, "u", gateState{Draft: "edited by hand"}, "review")
	if err != nil || res.Values.Draft != "edited by hand" || len(res.Next) != 1 || res.Next[0] != "publish" || res.Breakpoint != nil {
		t.Fatalf("%v %+v", err, res)
	}
	res, err = app.Invoke(ctx, "u", graph.Continue())
	if err != nil || res.Breakpoint == nil || res.Breakpoint.Node != "publish" {
		t.Fatalf("the before-breakpoint still applies: %v %+v", err, res)
	}
	if _, err := app.UpdateState(ctx, "u", gateState{}, "nope"); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Fatalf("unknown node: %v", err)
	}
}

func TestStreamYieldsUpdatesInterruptAndEnd(t *testing.T) {
	ctx := context.Background()
	app := parallelGraph(t, nil)
	var types []graph.EventType
	nodes := map[string]bool{}
	for ev, err := range app.Stream(ctx, "s", graph.Input(parState{})) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		if ev.Type == graph.EventUpdate {
			nodes[ev.Node] = true
		}
		if ev.Type == graph.EventInterrupt && (ev.Interrupt == nil || ev.Interrupt.ID == "") {
			t.Fatalf("interrupt event without interrupt: %+v", ev)
		}
	}
	if types[0] != graph.EventMetadata || types[len(types)-1] != graph.EventEnd || !nodes["c"] || nodes["a"] {
		t.Fatalf("events %v, updates from %v", types, nodes)
	}
	n := 0
	for _, ty := range types {
		if ty == graph.EventInterrupt {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d interrupt events, want 2", n)
	}
	for _, err := range app.Stream(ctx, "s", graph.Input(parState{})) {
		if !errors.Is(err, interlude.ErrThreadInterrupted) {
			t.Fatalf("refused command: %v", err)
		}
	}
}

func TestRouteErrorFailsTheStepAndContinueRunsOnlyTheRoute(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	runs := map[string]int{}
	routeFails := true
	g := graph.New[parState]()
	for _, n := range []string{"a", "b", "after"} {
		g.AddNode(n, func(ctx context.Context, s parState) (parState, error) {
			mu.Lock()
			defer mu.Unlock()
			runs[n]++
			return parState{Approved: []string{n}}, nil
		})
	}
	g.AddEdge(graph.Start, "a").AddEdge(graph.Start, "b")
	g.AddRoute("a", func(ctx context.Context, s parState) ([]string, error) {
		if routeFails {
			return nil, errors.New("no route today")
		}
		return []string{"after"}, nil
	})
	app, _ := g.Compile()
	res, err := app.Invoke(ctx, "r", graph.Input(parState{CRuns: 7}))
	if err == nil || !strings.Contains(err.Error(), "no route today") {
		t.Fatalf("err = %v", err)
	}
	if res == nil || res.Status != interlude.RunFailed || !strings.Contains(res.Error, "no route today") || res.Values.CRuns != 7 || len(res.Values.Approved) != 0 {
		t.Fatalf("result of the failed step: %+v", res)
	}
	snap, err := app.State(ctx, "r")
	if err != nil || snap.Status != "failed" || snap.Values.CRuns != 7 || len(snap.Values.Approved) != 0 {
		t.Fatalf("stored thread: %v %+v", err, snap)
	}
	routeFails = false
	res, err = app.Invoke(ctx, "r", graph.Continue())
	if err != nil || res.Status != interlude.RunCompleted || strings.Join(res.Values.Approved, ",") != "a,b,after" {
		t.Fatalf("continue: %v %+v", err, res)
	}
	if runs["a"] != 1 || runs["b"] != 1 || runs["after"] != 1 {
		t.Fatalf("the step's finished nodes ran again: %v", runs)
	}
}

func TestUpdateStateAtABreakpointBeforeANodeStaysThere(t *testing.T) {
	ctx := context.Background()
	app := gatedGraph(t)
	app.Invoke(ctx, "e", graph.Input(gateState{Topic: "go"}))
	res, err := app.Invoke(ctx, "e", graph.Continue())
	if err != nil || res.Breakpoint == nil || res.Breakpoint.Node != "publish" {
		t.Fatalf("before publish: %v %+v", err, res)
	}
	// The person edits the draft at the pause, as if review had written it.
	res, err = app.UpdateState(ctx, "e", gateState{Draft: "edited by hand"}, "review")
	if err != nil || res.Status != interlude.RunInterrupted || res.Breakpoint == nil || *res.Breakpoint != (graph.Breakpoint{Node: "publish", When: "before"}) {
		t.Fatalf("the edit moved the thread off its breakpoint: %v %+v", err, res)
	}
	if _, err := app.Invoke(ctx, "e", graph.Input(gateState{Topic: "x"})); !errors.Is(err, interlude.ErrThreadInterrupted) {
		t.Fatalf("input at the breakpoint after the edit: %v", err)
	}
	res, err = app.Invoke(ctx, "e", graph.Continue())
	if err != nil || res.Status != interlude.RunCompleted || !res.Values.Published || res.Values.Draft != "edited by hand" {
		t.Fatalf("one Continue passes the breakpoint: %v %+v", err, res)
	}
}

func TestRecursionLimitBelowOneIsRefusedByCompile(t *testing.T) {
	for _, n := range []int{0, -1} {
		g := graph.New[parState]()
		g.AddNode("a", func(ctx context.Context, s parState) (parState, error) { return parState{}, nil })
		g.AddEdge(graph.Start, "a")
		if _, err := g.Compile(graph.WithRecursionLimit(n)); err == nil || !strings.Contains(err.Error(), "WithRecursionLimit") {
			t.Fatalf("WithRecursionLimit(%d): err = %v", n, err)
		}
	}
}

// A result's slices are the caller's: appending to them changes neither the
// thread nor a later result, and the thread's later appends do not show
// through them.
func TestAppendingToAResultsSliceLeavesTheThreadAlone(t *testing.T) {
	type log struct {
		Lines []string `json:"lines" graph:"append"`
		Count int      `json:"count" graph:"add"`
	}
	b := graph.New[log]()
	b.AddNode("note", func(context.Context, log) (log, error) { return log{Count: 1}, nil })
	b.AddEdge(graph.Start, "note")
	b.AddEdge("note", graph.End)
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var held [][]string
	for _, line := range []string{"a", "b", "c", "d", "e"} {
		res, err := g.Invoke(ctx, "t", graph.Input(log{Lines: []string{line}}))
		if err != nil {
			t.Fatal(err)
		}
		mine := append(res.Values.Lines, "mine")
		held = append(held, mine)
	}
	res, err := g.Invoke(ctx, "t", graph.Input(log{Lines: []string{"f"}}))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Values.Lines, ","); got != "a,b,c,d,e,f" || res.Values.Count != 6 {
		t.Fatalf("the thread holds %q, count %d; want a,b,c,d,e,f and 6", got, res.Values.Count)
	}
	for i, h := range held {
		if h[len(h)-1] != "mine" || len(h) != i+2 {
			t.Fatalf("the caller's slice after run %d became %q", i+1, h)
		}
	}
}
