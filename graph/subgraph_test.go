package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// counts counts node body starts by name, across runs.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) inc(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

func (c *counts) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

type innerState struct {
	Log []string `json:"log,omitempty" graph:"append"`
}

// askingGraph is a graph whose node "prep" records itself and whose node "ask"
// asks for a string and logs it.
func askingGraph(t testing.TB, c *counts, name string, opts ...graph.Option) *graph.Graph[innerState] {
	t.Helper()
	g := graph.New[innerState]()
	g.AddNode("prep", func(ctx context.Context, s innerState) (innerState, error) {
		c.inc(name + ".prep")
		return innerState{Log: []string{"prep"}}, nil
	})
	g.AddNode("ask", func(ctx context.Context, s innerState) (innerState, error) {
		c.inc(name + ".ask")
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: name + "?", Schema: `{"type":"string"}`})
		if err != nil {
			return innerState{}, err
		}
		var v string
		if err := ans.Decode(&v); err != nil {
			return innerState{}, err
		}
		return innerState{Log: []string{"ask:" + v}}, nil
	})
	g.AddEdge(graph.Start, "prep")
	g.AddEdge("prep", "ask")
	sub, err := g.Compile(append([]graph.Option{graph.WithName(name)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// middleGraph runs inner as its node "review", after a node "before".
func middleGraph(t testing.TB, c *counts, inner *graph.Graph[innerState]) *graph.Graph[innerState] {
	t.Helper()
	g := graph.New[innerState]()
	g.AddNode("before", func(ctx context.Context, s innerState) (innerState, error) {
		c.inc("middle.before")
		return innerState{Log: []string{"before"}}, nil
	})
	g.AddNode("review", graph.SubgraphNode(inner,
		func(s innerState) innerState { return innerState{} },
		func(s innerState, out innerState) innerState { return innerState{Log: out.Log} }))
	g.AddEdge(graph.Start, "before")
	g.AddEdge("before", "review")
	sub, err := g.Compile(graph.WithName("middle"))
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func outerGraph(t testing.TB, st store.Store, c *counts, middle *graph.Graph[innerState], opts ...graph.Option) *graph.Graph[innerState] {
	t.Helper()
	g := graph.New[innerState]()
	g.AddNode("start", func(ctx context.Context, s innerState) (innerState, error) {
		c.inc("outer.start")
		return innerState{Log: []string{"start"}}, nil
	})
	g.AddNode("approval", graph.SubgraphNode(middle,
		func(s innerState) innerState { return innerState{} },
		func(s innerState, out innerState) innerState { return innerState{Log: out.Log} }))
	g.AddEdge(graph.Start, "start")
	g.AddEdge("start", "approval")
	app, err := g.Compile(append([]graph.Option{graph.WithStore(st), graph.WithName("outer")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestAnInterruptTwoSubgraphsDownPausesThereAndResumesThere(t *testing.T) {
	ctx := context.Background()
	var c counts
	st := memory.New()
	app := outerGraph(t, st, &c, middleGraph(t, &c, askingGraph(t, &c, "inner")))
	res, err := app.Invoke(ctx, "t1", graph.Input(innerState{}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interlude.RunInterrupted || len(res.Interrupts) != 1 {
		t.Fatalf("got %s with %d interrupts, want one pause", res.Status, len(res.Interrupts))
	}
	q := res.Interrupts[0]
	if want := []string{"approval", "review", "ask"}; !slices.Equal(q.Path, want) || q.Node != "approval" {
		t.Fatalf("the interrupt's path is %v on node %q, want %v on node approval", q.Path, q.Node, want)
	}
	snap, err := app.State(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Interrupts) != 1 || snap.Interrupts[0].ID != q.ID {
		t.Fatalf("a fresh read shows %v, want the pending interrupt %s", snap.Interrupts, q.ID)
	}
	if s, ok := graph.SubgraphAt(snap, "approval", "review"); !ok || string(s.Values) != `{"log":["prep"]}` || !slices.Equal(s.Next, []string{"ask"}) {
		t.Fatalf("the innermost subgraph's state reads %+v (found %v)", s, ok)
	}
	hist, err := app.History(ctx, "t1", graph.HistoryOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 || len(hist[0].Subgraphs) != 2 || !slices.Equal(hist[0].Subgraphs[1].Namespace, []string{"approval", "review"}) {
		t.Fatalf("the pause's history entry keeps subgraphs %+v, want approval and approval/review", hist[0].Subgraphs)
	}
	// A second graph over the same store: nothing survives in memory.
	var c2 counts
	again := outerGraph(t, st, &c2, middleGraph(t, &c2, askingGraph(t, &c2, "inner")))
	res, err = again.Invoke(ctx, "t1", graph.Resume(interlude.Resolve("yes")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interlude.RunCompleted {
		t.Fatalf("status %s, want completed", res.Status)
	}
	want := []string{"start", "before", "prep", "ask:yes"}
	if !slices.Equal(res.Values.Log, want) {
		t.Fatalf("log %v, want %v", res.Values.Log, want)
	}
	for _, n := range []string{"outer.start", "middle.before", "inner.prep"} {
		if c2.get(n) != 0 {
			t.Errorf("%s ran %d times on resume; finished work must not run again", n, c2.get(n))
		}
	}
	if c2.get("inner.ask") != 1 {
		t.Errorf("the interrupted node ran %d times on resume, want 1", c2.get("inner.ask"))
	}
}

type fanState struct {
	Items   []int    `json:"items"`
	Results []string `json:"results,omitempty" graph:"append"`
	Before  int      `json:"before,omitempty" graph:"add"`
}

type itemState struct {
	Item int    `json:"item"`
	Out  string `json:"out,omitempty"`
}

// itemGraph asks about odd items and echoes even ones; c counts each item's
// body starts.
func itemGraph(t testing.TB, c *counts) *graph.Graph[itemState] {
	t.Helper()
	g := graph.New[itemState]()
	g.AddNode("check", func(ctx context.Context, s itemState) (itemState, error) {
		c.inc(fmt.Sprint("item", s.Item))
		if s.Item%2 == 0 {
			return itemState{Out: fmt.Sprint(s.Item, ":auto")}, nil
		}
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: fmt.Sprint("item ", s.Item, "?"), Schema: `{"type":"string"}`})
		if err != nil {
			return itemState{}, err
		}
		var v string
		if err := ans.Decode(&v); err != nil {
			return itemState{}, err
		}
		return itemState{Out: fmt.Sprint(s.Item, ":", v)}, nil
	})
	g.AddEdge(graph.Start, "check")
	sub, err := g.Compile(graph.WithName("item"))
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// fanOut's node "each" runs the item subgraph once per item, in parallel, from
// its code; its body starts are counted as "each".
func fanOut(t testing.TB, st store.Store, c *counts) *graph.Graph[fanState] {
	t.Helper()
	sub := itemGraph(t, c)
	g := graph.New[fanState]()
	g.AddNode("each", func(ctx context.Context, s fanState) (fanState, error) {
		c.inc("each")
		outs := make([]string, len(s.Items))
		errs := make([]error, len(s.Items))
		var wg sync.WaitGroup
		for i, item := range s.Items {
			wg.Go(func() {
				var res itemState
				res, errs[i] = graph.Subgraph(ctx, fmt.Sprint("item-", i), sub, itemState{Item: item})
				outs[i] = res.Out
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return fanState{}, err
			}
		}
		return fanState{Results: outs}, nil
	})
	g.AddEdge(graph.Start, "each")
	app, err := g.Compile(graph.WithStore(st), graph.WithName("fan"))
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestFiveParallelSubgraphsThreePausingAreAnsweredInTwoBatches(t *testing.T) {
	ctx := context.Background()
	var c counts
	app := fanOut(t, memory.New(), &c)
	res, err := app.Invoke(ctx, "f", graph.Input(fanState{Items: []int{1, 2, 3, 4, 5}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 3 {
		t.Fatalf("%d interrupts pending, want 3 (items 1, 3 and 5)", len(res.Interrupts))
	}
	byItem := map[string]interlude.Interruption{}
	ids := map[string]bool{}
	for _, q := range res.Interrupts {
		if len(q.Path) != 3 || q.Path[0] != "each" || q.Path[2] != "check" {
			t.Fatalf("interrupt path %v, want [each item-N check]", q.Path)
		}
		byItem[q.Path[1]] = q
		ids[q.ID] = true
	}
	if len(ids) != 3 || len(byItem) != 3 {
		t.Fatalf("the three pauses share ids or paths: %v", res.Interrupts)
	}
	// First batch: item 3 alone.
	res, err = app.Invoke(ctx, "f", graph.Respond(map[string]interlude.Resolution{byItem["item-2"].ID: interlude.Resolve("b")}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interlude.RunInterrupted || len(res.Interrupts) != 2 {
		t.Fatalf("after one answer: %s with %d pending, want 2 pending", res.Status, len(res.Interrupts))
	}
	for _, q := range res.Interrupts {
		if q.ID != byItem[q.Path[1]].ID {
			t.Fatalf("the unanswered pause of %s changed id from %s to %s", q.Path[1], byItem[q.Path[1]].ID, q.ID)
		}
	}
	// Second batch: items 1 and 5 together.
	res, err = app.Invoke(ctx, "f", graph.Respond(map[string]interlude.Resolution{
		byItem["item-0"].ID: interlude.Resolve("a"), byItem["item-4"].ID: interlude.Resolve("c")}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interlude.RunCompleted {
		t.Fatalf("status %s, want completed", res.Status)
	}
	want := []string{"1:a", "2:auto", "3:b", "4:auto", "5:c"}
	if !slices.Equal(res.Values.Results, want) {
		t.Fatalf("results %v, want %v", res.Values.Results, want)
	}
	// Even items finished on the first run and never ran again; item 3 ran
	// twice (pause, answer), items 1 and 5 twice too.
	for item, runs := range map[int]int{1: 2, 2: 1, 3: 2, 4: 1, 5: 2} {
		if got := c.get(fmt.Sprint("item", item)); got != runs {
			t.Errorf("item %d's subgraph node ran %d times, want %d", item, got, runs)
		}
	}
}

type callerState struct {
	Before int    `json:"before,omitempty" graph:"add"`
	Out    string `json:"out,omitempty"`
}

func TestASubgraphCalledFromNodeCodeResumesWhereItStopped(t *testing.T) {
	ctx := context.Background()
	var c counts
	sub := askingGraph(t, &c, "inner")
	g := graph.New[callerState]()
	g.AddNode("work", func(ctx context.Context, s callerState) (callerState, error) {
		c.inc("work.before-call") // code before the call runs again on resume
		out, err := graph.Subgraph(ctx, "checks", sub, innerState{Log: []string{"given"}})
		if err != nil {
			return callerState{}, err
		}
		c.inc("work.after-call")
		return callerState{Out: fmt.Sprint(out.Log)}, nil
	})
	g.AddEdge(graph.Start, "work")
	app, err := g.Compile(graph.WithName("caller"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(ctx, "c", graph.Input(callerState{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 1 || !slices.Equal(res.Interrupts[0].Path, []string{"work", "checks", "ask"}) {
		t.Fatalf("pending %v, want one interrupt at [work checks ask]", res.Interrupts)
	}
	res, err = app.Invoke(ctx, "c", graph.Resume(interlude.Resolve("ok")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Values.Out != "[given prep ask:ok]" {
		t.Fatalf("out %q, want the subgraph's log from its input through the answer", res.Values.Out)
	}
	if c.get("inner.prep") != 1 {
		t.Errorf("the subgraph's finished node ran %d times, want once: the call must resume mid-way", c.get("inner.prep"))
	}
	if c.get("work.before-call") != 2 || c.get("work.after-call") != 1 {
		t.Errorf("the calling node's code ran %d times before the call and %d after, want 2 and 1", c.get("work.before-call"), c.get("work.after-call"))
	}
}

type roundsState struct {
	Rounds int      `json:"rounds,omitempty" graph:"add"`
	Log    []string `json:"log,omitempty" graph:"append"`
}

func TestASubgraphCalledInALoopGetsFreshIDsEachCycle(t *testing.T) {
	ctx := context.Background()
	var c counts
	sub := askingGraph(t, &c, "inner")
	g := graph.New[roundsState]()
	g.AddNode("round", func(ctx context.Context, s roundsState) (roundsState, error) {
		out, err := graph.Subgraph(ctx, "ask", sub, innerState{})
		if err != nil {
			return roundsState{}, err
		}
		return roundsState{Rounds: 1, Log: out.Log[len(out.Log)-1:]}, nil
	})
	g.AddEdge(graph.Start, "round")
	g.AddRoute("round", func(ctx context.Context, s roundsState) ([]string, error) {
		if s.Rounds < 3 {
			return []string{"round"}, nil
		}
		return nil, nil
	})
	app, err := g.Compile(graph.WithName("loop"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(ctx, "l", graph.Input(roundsState{}))
	seen := map[string]bool{}
	for i := 0; err == nil && res.Status == interlude.RunInterrupted; i++ {
		id := res.Interrupts[0].ID
		if seen[id] {
			t.Fatalf("cycle %d reused interrupt id %s", i, id)
		}
		seen[id] = true
		res, err = app.Invoke(ctx, "l", graph.Resume(interlude.Resolve(fmt.Sprint(i))))
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || !slices.Equal(res.Values.Log, []string{"ask:0", "ask:1", "ask:2"}) {
		t.Fatalf("%d distinct ids and log %v, want 3 and one answer per cycle", len(seen), res.Values.Log)
	}
}

func TestABreakpointInsideASubgraphPausesTheParentAndContinuePassesIt(t *testing.T) {
	ctx := context.Background()
	var c counts
	inner := askingGraph(t, &c, "inner", graph.InterruptBefore("ask"))
	app := outerGraph(t, memory.New(), &c, middleGraph(t, &c, inner))
	res, err := app.Invoke(ctx, "b", graph.Input(innerState{}))
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Breakpoint; res.Status != interlude.RunInterrupted || b == nil || b.Node != "ask" || b.When != "before" || b.Namespace != "approval/review" || len(res.Interrupts) != 0 {
		t.Fatalf("got %s at %+v with %d interrupts, want a breakpoint before ask in approval/review", res.Status, res.Breakpoint, len(res.Interrupts))
	}
	if c.get("inner.ask") != 0 {
		t.Fatal("the node behind the breakpoint ran")
	}
	if _, err := graph.UpdateSubgraphState(ctx, app, "b", inner, []string{"approval", "nowhere"}, innerState{Log: []string{"x"}}); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Fatalf("an update of a namespace where no subgraph waits: %v, want invalid request", err)
	}
	if _, err := graph.UpdateSubgraphState(ctx, app, "b", inner, []string{"approval", "review"}, innerState{Log: []string{"edited"}}); err != nil {
		t.Fatal(err)
	}
	res, err = app.Invoke(ctx, "b", graph.Continue())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 1 || c.get("inner.ask") != 1 || c.get("inner.prep") != 1 {
		t.Fatalf("after continue: %d interrupts, ask ran %d, prep ran %d; want the question asked and prep not run again", len(res.Interrupts), c.get("inner.ask"), c.get("inner.prep"))
	}
	res, err = app.Invoke(ctx, "b", graph.Resume(interlude.Resolve("go")))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("resume: %v, %v", res, err)
	}
	if want := []string{"start", "before", "prep", "edited", "ask:go"}; !slices.Equal(res.Values.Log, want) {
		t.Fatalf("log %v, want %v: the edit made inside the subgraph at its breakpoint", res.Values.Log, want)
	}
}

func TestAStreamWithSubgraphsCarriesTheirEventsWithTheirNamespace(t *testing.T) {
	ctx := context.Background()
	var c counts
	app := outerGraph(t, memory.New(), &c, middleGraph(t, &c, askingGraph(t, &c, "inner")))
	var plain, nested []graph.Event
	for e, err := range app.Stream(ctx, "s1", graph.Input(innerState{})) {
		if err != nil {
			t.Fatal(err)
		}
		plain = append(plain, e)
	}
	for e, err := range app.Stream(ctx, "s2", graph.Input(innerState{}), graph.WithSubgraphs()) {
		if err != nil {
			t.Fatal(err)
		}
		nested = append(nested, e)
	}
	for _, e := range plain {
		if len(e.Namespace) > 0 {
			t.Fatalf("a stream without WithSubgraphs carried a subgraph's event %+v", e)
		}
	}
	found := false
	for _, e := range nested {
		if e.Type == graph.EventUpdate && e.Node == "prep" {
			found = slices.Equal(e.Namespace, []string{"approval", "review"})
		}
	}
	if !found {
		t.Fatalf("no update of the inner node prep in namespace [approval review] among %d events", len(nested))
	}
}

func TestForkingASubgraphsCheckpointResumesItThereWithoutRerunningFinishedWork(t *testing.T) {
	ctx := context.Background()
	var c counts
	app := outerGraph(t, memory.New(), &c, middleGraph(t, &c, askingGraph(t, &c, "inner")))
	paused, err := app.Invoke(ctx, "f", graph.Input(innerState{}))
	if err != nil || len(paused.Interrupts) != 1 {
		t.Fatalf("first run: %v, %+v", err, paused)
	}
	res, err := app.Invoke(ctx, "f", graph.Resume(interlude.Resolve("first")))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("resume: %v, %+v", err, res)
	}
	if _, err := app.ForkSubgraph(ctx, "f", paused.Checkpoint, []string{"approval", "nowhere"}); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Fatalf("a fork at a namespace the checkpoint does not keep: %v, want invalid request", err)
	}
	if _, err := app.ForkSubgraph(ctx, "f", res.Checkpoint, []string{"approval", "review"}); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Fatalf("a fork of a checkpoint where no subgraph waits: %v, want invalid request", err)
	}
	before := map[string]int{}
	for _, n := range []string{"outer.start", "middle.before", "inner.prep", "inner.ask"} {
		before[n] = c.get(n)
	}
	forked, err := app.ForkSubgraph(ctx, "f", paused.Checkpoint, []string{"approval", "review"})
	if err != nil {
		t.Fatal(err)
	}
	if forked.Status != interlude.RunInterrupted || len(forked.Interrupts) != 1 {
		t.Fatalf("the fork ended %s with %d interrupts, want the inner question asked again", forked.Status, len(forked.Interrupts))
	}
	q := forked.Interrupts[0]
	if q.ID == paused.Interrupts[0].ID || !slices.Equal(q.Path, []string{"approval", "review", "ask"}) {
		t.Fatalf("the question asked again is %s at %v; want a new id at approval/review/ask", q.ID, q.Path)
	}
	for _, n := range []string{"outer.start", "middle.before", "inner.prep"} {
		if c.get(n) != before[n] {
			t.Errorf("%s ran %d more times after the fork; finished work must not run again", n, c.get(n)-before[n])
		}
	}
	if c.get("inner.ask") != before["inner.ask"]+1 {
		t.Errorf("the inner node ran %d times after the fork, want once", c.get("inner.ask")-before["inner.ask"])
	}
	// The abandoned branch's answer, sent again, does not answer the new question.
	app.Invoke(ctx, "f", graph.Resume(interlude.Resolve("first").For(paused.Interrupts[0].ID)))
	if snap, err := app.State(ctx, "f"); err != nil || len(snap.Interrupts) != 1 || snap.Interrupts[0].ID != q.ID {
		t.Fatalf("after the old answer again: %v, %+v; want the new question still pending", err, snap)
	}
	res, err = app.Invoke(ctx, "f", graph.Resume(interlude.Resolve("second")))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("resume after the fork: %v, %+v", err, res)
	}
	if want := []string{"start", "before", "prep", "ask:second"}; !slices.Equal(res.Values.Log, want) {
		t.Fatalf("log %v, want %v", res.Values.Log, want)
	}
}

func TestABreakpointNamedByPathFromTheParentPausesInsideTheSubgraph(t *testing.T) {
	ctx := context.Background()
	var c counts
	app := outerGraph(t, memory.New(), &c, middleGraph(t, &c, askingGraph(t, &c, "inner")),
		graph.InterruptAfter("approval/before"), graph.InterruptBefore("approval/review/ask"))
	res, err := app.Invoke(ctx, "p", graph.Input(innerState{}))
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Breakpoint; b == nil || b.Node != "before" || b.When != "after" || b.Namespace != "approval" || c.get("inner.prep") != 0 {
		t.Fatalf("first pause at %+v (inner prep ran %d times), want after approval/before", res.Breakpoint, c.get("inner.prep"))
	}
	if res, err = app.Invoke(ctx, "p", graph.Continue()); err != nil {
		t.Fatal(err)
	}
	if b := res.Breakpoint; b == nil || b.Node != "ask" || b.When != "before" || b.Namespace != "approval/review" || c.get("inner.ask") != 0 {
		t.Fatalf("second pause at %+v (ask ran %d times), want before approval/review/ask", res.Breakpoint, c.get("inner.ask"))
	}
	if c.get("middle.before") != 1 || c.get("inner.prep") != 1 {
		t.Fatalf("before ran %d times and prep %d, want once each", c.get("middle.before"), c.get("inner.prep"))
	}
	if res, err = app.Invoke(ctx, "p", graph.Continue()); err != nil || len(res.Interrupts) != 1 || c.get("inner.ask") != 1 {
		t.Fatalf("continue past the inner breakpoint: %v, %+v; want the question asked", err, res)
	}
	res, err = app.Invoke(ctx, "p", graph.Resume(interlude.Resolve("ok")))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("resume: %v, %+v", err, res)
	}
	if want := []string{"start", "before", "prep", "ask:ok"}; !slices.Equal(res.Values.Log, want) {
		t.Fatalf("log %v, want %v", res.Values.Log, want)
	}
}

func TestABreakpointPathMustStartAtANodeOfTheGraph(t *testing.T) {
	var c counts
	middle := middleGraph(t, &c, askingGraph(t, &c, "inner"))
	for _, name := range []string{"nowhere/ask", "approval/", "approval/review/"} {
		g := graph.New[innerState]()
		g.AddNode("approval", graph.SubgraphNode(middle, func(s innerState) innerState { return s }, func(_ innerState, out innerState) innerState { return out }))
		g.AddEdge(graph.Start, "approval")
		if _, err := g.Compile(graph.InterruptBefore(name)); err == nil {
			t.Errorf("Compile took a breakpoint on %q", name)
		}
	}
}
