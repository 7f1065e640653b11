package graph_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store/memory"
)

type shipState struct {
	Log []string `json:"log" graph:"append"`
}

// shipGraph's node packs (a tool call), then asks before it ships: its step
// pauses with the packing finished.
func shipGraph(t *testing.T, packs *atomic.Int32) *graph.Graph[shipState] {
	t.Helper()
	g := graph.New[shipState]()
	g.AddNode("ship", func(ctx context.Context, s shipState) (shipState, error) {
		packed, err := graph.Once(ctx, "pack", func(ctx context.Context) (string, error) {
			packs.Add(1)
			return "packed", nil
		}, graph.AsToolCall("call_pack"))
		if err != nil {
			return shipState{}, err
		}
		shipped, err := graph.Once(ctx, "ask", func(ctx context.Context) (string, error) {
			if _, err := interlude.Interrupt(ctx, interlude.Request{Message: "Ship it?"}); err != nil {
				return "", err
			}
			return "shipped", nil
		})
		if err != nil {
			return shipState{}, err
		}
		return shipState{Log: []string{packed, shipped}}, nil
	})
	g.AddEdge(graph.Start, "ship")
	app, err := g.Compile(graph.WithStore(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// subTasks returns the sub-task events of a run, by path.
func subTasks(t *testing.T, app *graph.Graph[shipState], cmd graph.Command) []graph.SubTaskResult {
	t.Helper()
	var out []graph.SubTaskResult
	for ev, err := range app.Stream(context.Background(), "s1", cmd) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == graph.EventSubTask {
			if ev.SubTask == nil || ev.Node != "ship" {
				t.Fatalf("sub-task event without its sub-task or node: %+v", ev)
			}
			out = append(out, *ev.SubTask)
		}
	}
	return out
}

func TestAWaitingStepShowsItsFinishedSubTasksAndStreamsEachOnce(t *testing.T) {
	ctx := context.Background()
	var packs atomic.Int32
	app := shipGraph(t, &packs)

	got := subTasks(t, app, graph.Input(shipState{}))
	if len(got) != 1 || got[0].ToolCallID != "call_pack" || !slices.Equal(got[0].Path, []string{"ship", "pack"}) || string(got[0].Result) != `"packed"` {
		t.Fatalf("the first run reported %+v, want the packing as it finished", got)
	}
	snap, err := app.State(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Status != "interrupted" || len(snap.Values.Log) != 0 {
		t.Fatalf("want the step waiting with nothing written: %s %v", snap.Status, snap.Values.Log)
	}
	if len(snap.Finished) != 1 || snap.Finished[0].ToolCallID != "call_pack" || string(snap.Finished[0].Result) != `"packed"` {
		t.Fatalf("snapshot Finished = %+v, want the packing", snap.Finished)
	}

	got = subTasks(t, app, graph.Resume(interlude.Resolve("yes")))
	if len(got) != 1 || got[0].ToolCallID != "" || !slices.Equal(got[0].Path, []string{"ship", "ask"}) {
		t.Fatalf("the resumed run reported %+v, want only the question's sub-task (the packing came from the ledger)", got)
	}
	if packs.Load() != 1 {
		t.Fatalf("packed %d times", packs.Load())
	}
	snap, err = app.State(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Finished) != 0 || !slices.Equal(snap.Values.Log, []string{"packed", "shipped"}) {
		t.Fatalf("after the step: Finished %+v, log %v", snap.Finished, snap.Values.Log)
	}
}

func TestAResultFinishedWithoutAStreamIsKeptWhileItsStepWaits(t *testing.T) {
	ctx := context.Background()
	var packs atomic.Int32
	app := shipGraph(t, &packs)
	res, err := app.Invoke(ctx, "s1", graph.Input(shipState{}))
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	snap, err := app.State(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Finished) != 1 || string(snap.Finished[0].Result) != `"packed"` || snap.Finished[0].ToolCallID != "call_pack" {
		t.Fatalf("the waiting step shows %+v, want the packing", snap.Finished)
	}
	res, err = app.Invoke(ctx, "s1", graph.Resume(interlude.Resolve("yes")))
	if err != nil || res.Status != interlude.RunCompleted || !slices.Equal(res.Values.Log, []string{"packed", "shipped"}) {
		t.Fatalf("%v %+v", err, res)
	}
	if n := packs.Load(); n != 1 {
		t.Fatalf("the packing ran %d times, want once", n)
	}
}

func TestAResultThatCannotBeRecordedFailsTheStepThatWaits(t *testing.T) {
	g := graph.New[shipState]()
	g.AddNode("ship", func(ctx context.Context, s shipState) (shipState, error) {
		if _, err := graph.Once(ctx, "pack", func(ctx context.Context) (func(), error) { return func() {}, nil }); err != nil {
			return shipState{}, err
		}
		if _, err := interlude.Interrupt(ctx, interlude.Request{Message: "Ship it?"}); err != nil {
			return shipState{}, err
		}
		return shipState{}, nil
	})
	g.AddEdge(graph.Start, "ship")
	app, err := g.Compile(graph.WithStore(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(context.Background(), "s1", graph.Input(shipState{}))
	if !errors.Is(err, &interlude.Error{Code: interlude.CodeInvalidUpdate}) || res == nil || res.Status != interlude.RunFailed {
		t.Fatalf("got %v %+v, want the step failed: its result cannot be recorded", err, res)
	}
}

// A node can tell whether its events reach anyone: they do in a Stream and
// with live listeners, not in a plain Invoke, and never outside a run.
func TestANodeKnowsWhetherItsEventsAreObserved(t *testing.T) {
	ctx := context.Background()
	build := func(opts ...graph.Option) (*graph.Graph[shipState], *atomic.Bool) {
		var seen atomic.Bool
		g := graph.New[shipState]()
		g.AddNode("look", func(ctx context.Context, s shipState) (shipState, error) {
			seen.Store(graph.Observed(ctx))
			return shipState{}, nil
		})
		g.AddEdge(graph.Start, "look")
		c, err := g.Compile(append([]graph.Option{graph.WithStore(memory.New())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return c, &seen
	}
	g, seen := build()
	if _, err := g.Invoke(ctx, "t1", graph.Input(shipState{})); err != nil || seen.Load() {
		t.Fatalf("an invocation without listeners is observed (%v)", err)
	}
	for _, err := range g.Stream(ctx, "t2", graph.Input(shipState{})) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if !seen.Load() {
		t.Fatal("a stream is not observed")
	}
	g, seen = build(graph.WithEvents(func(graph.Event) {}))
	if _, err := g.Invoke(ctx, "t1", graph.Input(shipState{})); err != nil || !seen.Load() {
		t.Fatalf("an invocation with live listeners is not observed (%v)", err)
	}
	if graph.Observed(ctx) {
		t.Fatal("a context outside any run is observed")
	}
}
