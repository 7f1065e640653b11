package graph_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// twiceAsker is a graph whose node "prep" logs itself and whose node "ask"
// asks two questions in turn and logs both answers.
func twiceAsker(t testing.TB, c *counts) *graph.Graph[innerState] {
	t.Helper()
	g := graph.New[innerState]()
	g.AddNode("prep", func(ctx context.Context, s innerState) (innerState, error) {
		c.inc("inner.prep")
		return innerState{Log: []string{"prep"}}, nil
	})
	g.AddNode("ask", func(ctx context.Context, s innerState) (innerState, error) {
		c.inc("inner.ask")
		var out innerState
		for _, q := range []string{"first?", "second?"} {
			ans, err := interlude.Interrupt(ctx, interlude.Request{Message: q, Schema: `{"type":"string"}`})
			if err != nil {
				return innerState{}, err
			}
			var v string
			if err := ans.Decode(&v); err != nil {
				return innerState{}, err
			}
			out.Log = append(out.Log, q+v)
		}
		return out, nil
	})
	g.AddEdge(graph.Start, "prep")
	g.AddEdge("prep", "ask")
	sub, err := g.Compile(graph.WithName("inner"))
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// TestNestedFormatFixturesStayReadable reads the committed logs of a thread
// paused inside nested subgraphs, as every format version since nesting was
// stored, in a process that never ran them: the subgraphs' checkpoints are
// decoded from the store, their questions read as asked, and the thread
// resumes to the end without running finished work again. Run with -update to
// add the current version's fixture.
func TestNestedFormatFixturesStayReadable(t *testing.T) {
	ctx := context.Background()
	if *update {
		var c counts
		st := memory.New()
		app := outerGraph(t, st, &c, middleGraph(t, &c, twiceAsker(t, &c)), graph.WithClock(fixedClock()))
		app.Invoke(ctx, "t", graph.Input(innerState{}))
		app.Invoke(ctx, "t", graph.Resume(interlude.Resolve("yes")))
		writeFixture(t, st, "t", filepath.Join("testdata", fmt.Sprintf("nested-v%d-paused.json", store.FormatVersion)), nil)
	}
	eachFixture(t, "nested-v*-paused.json", func(t *testing.T, file string) {
		fx, st := readFixture(t, file, "t", "outer")
		var c counts
		app := outerGraph(t, st, &c, middleGraph(t, &c, twiceAsker(t, &c)))
		snap, err := app.State(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Interrupts) != 1 || snap.Interrupts[0].Message != "second?" || !slices.Equal(snap.Interrupts[0].Path, []string{"approval", "review", "ask"}) {
			t.Fatalf("format %d's thread waits for %+v, want the second question at approval/review/ask", fx.Format, snap.Interrupts)
		}
		for _, ns := range [][]string{{"approval"}, {"approval", "review"}} {
			s, ok := graph.SubgraphAt(snap, ns...)
			want := []string{"approval", "review", "ask"}[len(ns):]
			if !ok || len(s.Interrupts) != 1 || s.Interrupts[0].ID != snap.Interrupts[0].ID || s.Interrupts[0].Message != "second?" ||
				s.Interrupts[0].CreatedAt != snap.Interrupts[0].CreatedAt || !slices.Equal(s.Interrupts[0].Path, want) {
				t.Fatalf("format %d's subgraph at %v reads %+v (found %v), want the second question at %v", fx.Format, ns, s, ok, want)
			}
		}
		res, err := app.Invoke(ctx, "t", graph.Resume(interlude.Resolve("no")))
		if err != nil || res.Status != interlude.RunCompleted {
			t.Fatalf("resuming format %d's thread: %v %+v", fx.Format, err, res)
		}
		if want := []string{"start", "before", "prep", "first?yes", "second?no"}; !slices.Equal(res.Values.Log, want) {
			t.Fatalf("format %d's thread ends with log %v, want %v", fx.Format, res.Values.Log, want)
		}
		if c.get("inner.prep") != 0 || c.get("middle.before") != 0 || c.get("outer.start") != 0 {
			t.Errorf("finished work ran again on resuming format %d's thread: %v", fx.Format, c.n)
		}
	})
}
