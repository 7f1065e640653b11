package graph_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// chainState is the state of a three-step chain a → b → c.
type chainState struct {
	Done []string `json:"done,omitempty" graph:"append"`
}

// runCounts counts how often each node of a chain started, across every graph
// compiled over it (one per "process").
type runCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *runCounts) add(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[node]++
}

func (c *runCounts) get() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// chainGraph builds the chain a → b → c over st; each node counts its starts
// and, if hook is set, calls it first.
func chainGraph(t *testing.T, st store.Store, counts *runCounts, hook func(ctx context.Context, node string) error, opts ...graph.Option) *graph.Graph[chainState] {
	t.Helper()
	g := graph.New[chainState]()
	for _, n := range []string{"a", "b", "c"} {
		g.AddNode(n, func(ctx context.Context, s chainState) (chainState, error) {
			counts.add(n)
			if hook != nil {
				if err := hook(ctx, n); err != nil {
					return chainState{}, err
				}
			}
			return chainState{Done: []string{n}}, nil
		})
	}
	g.AddEdge(graph.Start, "a").AddEdge("a", "b").AddEdge("b", "c")
	app, err := g.Compile(append([]graph.Option{graph.WithStore(st), graph.WithName("chain")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// checkUnfinished checks that the thread reads running with next due, is listed
// by Unfinished, and is in no other listing.
func checkUnfinished(t *testing.T, mem *memory.Store, app *graph.Graph[chainState], id string, next ...string) {
	t.Helper()
	ctx := context.Background()
	snap, err := app.State(ctx, id)
	if err != nil || snap.Status != interlude.ThreadRunning || !slices.Equal(snap.Next, next) || len(snap.Interrupts) != 0 {
		t.Fatalf("the thread reads %v %+v; want running with %v next and no question", err, snap, next)
	}
	unfinished, err := mem.Unfinished(ctx, nil, 0)
	if err != nil || len(unfinished) != 1 || unfinished[0].ThreadID != id {
		t.Fatalf("Unfinished lists %v %+v; want %s", err, unfinished, id)
	}
	for _, status := range []interlude.ThreadStatus{interlude.ThreadIdle, interlude.ThreadInterrupted, interlude.ThreadFailed} {
		if page, err := mem.List(ctx, store.Query{Status: status}); err != nil || len(page.Threads) != 0 {
			t.Fatalf("listed as %s: %v %+v; want nothing", status, err, page)
		}
	}
}

func TestARunThatDiesBetweenStepsIsFinishedFromItsLastCheckpoint(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	counts := &runCounts{}
	dying := &failingStore{Store: mem, left: 1} // step a commits; the process dies in step b
	if _, err := chainGraph(t, dying, counts, nil).Invoke(ctx, "x", graph.Input(chainState{})); err == nil {
		t.Fatal("step b's commit should have failed")
	}
	restarted := chainGraph(t, mem, counts, nil) // a fresh process over the same store
	checkUnfinished(t, mem, restarted, "x", "b")

	res, err := restarted.Invoke(ctx, "x", graph.Recover())
	if err != nil || res.Status != interlude.RunCompleted || !slices.Equal(res.Values.Done, []string{"a", "b", "c"}) {
		t.Fatalf("recover: %v %+v; want completed with a, b and c done once each", err, res)
	}
	// Step a committed and is not run again; b was in flight and runs again.
	if got, want := counts.get(), map[string]int{"a": 1, "b": 2, "c": 1}; !maps.Equal(got, want) {
		t.Fatalf("the nodes started %v times; want %v", got, want)
	}
	if m, err := mem.Meta(ctx, "x"); err != nil || m.Status != interlude.ThreadIdle {
		t.Fatalf("the finished thread's stored status: %v %+v; want idle", err, m)
	}
	if left, _ := mem.Unfinished(ctx, nil, 0); len(left) != 0 {
		t.Fatalf("still unfinished: %+v", left)
	}
	if _, err := restarted.Invoke(ctx, "x", graph.Recover()); !errors.Is(err, interlude.ErrConflict) {
		t.Fatalf("a second recover: %v; want conflict", err)
	}
}

func TestInputToARunThatDiedBetweenStepsIsRefusedAndAContinueFinishesIt(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	counts := &runCounts{}
	if _, err := chainGraph(t, &failingStore{Store: mem, left: 2}, counts, nil).Invoke(ctx, "x", graph.Input(chainState{})); err == nil {
		t.Fatal("step c's commit should have failed")
	}
	app := chainGraph(t, mem, counts, nil)
	before := dump(t, mem, "x")
	_, err := app.Invoke(ctx, "x", graph.Input(chainState{Done: []string{"new"}}))
	var ie *interlude.Error
	if !errors.As(err, &ie) || ie.Code != interlude.CodeThreadBusy || !strings.Contains(ie.Message, "steps due after its last checkpoint") || !strings.Contains(ie.Message, "continue") {
		t.Fatalf("input: %v; want thread_busy saying the run stopped with steps due, and to continue", err)
	}
	if dump(t, mem, "x") != before {
		t.Fatal("the refused input changed the thread")
	}
	res, err := app.Invoke(ctx, "x", graph.Continue())
	if err != nil || res.Status != interlude.RunCompleted || !slices.Equal(res.Values.Done, []string{"a", "b", "c"}) {
		t.Fatalf("continue: %v %+v", err, res)
	}
	if got, want := counts.get(), map[string]int{"a": 1, "b": 1, "c": 2}; !maps.Equal(got, want) {
		t.Fatalf("the nodes started %v times; want %v", got, want)
	}
}

func TestARunWhoseContextIsCancelledBetweenStepsIsLeftToBeFinishedOnce(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	counts := &runCounts{}
	entered := make(chan struct{})
	var block sync.Once
	hook := func(ctx context.Context, node string) error {
		if node != "b" {
			return nil
		}
		first := false
		block.Do(func() { first = true })
		if !first {
			return nil
		}
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	}
	app := chainGraph(t, mem, counts, hook)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := app.Invoke(runCtx, "x", graph.Input(chainState{}))
		done <- err
	}()
	<-entered // step a committed; the run is in step b
	// While the run goes on, nothing else runs the thread: a recovery is refused at once.
	if _, err := app.Invoke(ctx, "x", graph.Recover()); !errors.Is(err, interlude.ErrThreadBusy) {
		t.Fatalf("recover during the run: %v; want thread_busy", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled run returned %v; want context.Canceled", err)
	}
	checkUnfinished(t, mem, app, "x", "b")
	res, err := app.Invoke(ctx, "x", graph.Recover())
	if err != nil || res.Status != interlude.RunCompleted || !slices.Equal(res.Values.Done, []string{"a", "b", "c"}) {
		t.Fatalf("recover: %v %+v", err, res)
	}
	if got, want := counts.get(), map[string]int{"a": 1, "b": 2, "c": 1}; !maps.Equal(got, want) {
		t.Fatalf("the nodes started %v times; want %v", got, want)
	}
}

func TestARunsLastCommitSaysHowItEndedNotRunning(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name   string
		opts   []graph.Option
		hook   func(ctx context.Context, node string) error
		status interlude.ThreadStatus
	}{
		{name: "completed", status: interlude.ThreadIdle},
		{name: "breakpoint after", opts: []graph.Option{graph.InterruptAfter("a")}, status: interlude.ThreadInterrupted},
		{name: "breakpoint before", opts: []graph.Option{graph.InterruptBefore("b")}, status: interlude.ThreadInterrupted},
		{name: "failed step", hook: func(ctx context.Context, node string) error {
			if node == "b" {
				return boom
			}
			return nil
		}, status: interlude.ThreadFailed},
		{name: "paused", hook: func(ctx context.Context, node string) error {
			if node == "b" {
				_, err := interlude.Interrupt(ctx, interlude.Request{Message: "go on?"})
				return err
			}
			return nil
		}, status: interlude.ThreadInterrupted},
		{name: "recursion limit", opts: []graph.Option{graph.WithRecursionLimit(2)}, status: interlude.ThreadFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.New()
			app := chainGraph(t, mem, &runCounts{}, c.hook, c.opts...)
			app.Invoke(ctx, "x", graph.Input(chainState{}))
			m, err := mem.Meta(ctx, "x")
			if err != nil || m.Status != c.status {
				t.Fatalf("stored status %v %+v; want %s", err, m, c.status)
			}
			if snap, err := app.State(ctx, "x"); err != nil || snap.Status != c.status {
				t.Fatalf("State reads %v %+v; want %s", err, snap, c.status)
			}
			if left, _ := mem.Unfinished(ctx, nil, 0); len(left) != 0 {
				t.Fatalf("listed as unfinished: %+v", left)
			}
		})
	}
}

func TestTheSameAnswerSentAgainFinishesTheRunItStartedThatDiedBetweenSteps(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	counts := &runCounts{}
	ask := func(ctx context.Context, node string) error {
		if node == "a" {
			_, err := interlude.Interrupt(ctx, interlude.Request{Message: "go on?"})
			return err
		}
		return nil
	}
	dying := chainGraph(t, &failingStore{Store: mem, left: 3}, counts, ask) // the pause, the answer, step a
	res, err := dying.Invoke(ctx, "x", graph.Input(chainState{}))
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("start: %v %+v", err, res)
	}
	answer := graph.Respond(map[string]interlude.Resolution{res.Interrupts[0].ID: interlude.Resolve(true)})
	if _, err := dying.Invoke(ctx, "x", answer); err == nil {
		t.Fatal("step b's commit should have failed")
	}
	restarted := chainGraph(t, mem, counts, ask)
	checkUnfinished(t, mem, restarted, "x", "b")
	res, err = restarted.Invoke(ctx, "x", answer)
	if err != nil || res.Status != interlude.RunCompleted || !slices.Equal(res.Values.Done, []string{"a", "b", "c"}) {
		t.Fatalf("the answer again: %v %+v; want the run finished", err, res)
	}
	if got, want := counts.get(), map[string]int{"a": 2, "b": 2, "c": 1}; !maps.Equal(got, want) {
		t.Fatalf("the nodes started %v times; want %v", got, want)
	}
}
