package graph_test

import (
	"context"
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

func outerGraph(t testing.TB, st store.Store, c *counts, middle *graph.Graph[innerState]) *graph.Graph[innerState] {
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
	app, err := g.Compile(graph.WithStore(st), graph.WithName("outer"))
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
	if res.Status != graph.Interrupted || len(res.Interrupts) != 1 {
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
	// A second graph over the same store: nothing survives in memory.
	var c2 counts
	again := outerGraph(t, st, &c2, middleGraph(t, &c2, askingGraph(t, &c2, "inner")))
	res, err = again.Invoke(ctx, "t1", graph.Resume("yes"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != graph.Completed {
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
