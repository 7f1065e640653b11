package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// plainGateGraph runs draft, review and publish in turn, without breakpoints.
func plainGateGraph(t *testing.T) *graph.Graph[gateState] {
	t.Helper()
	g := graph.New[gateState]()
	g.AddNode("draft", func(ctx context.Context, s gateState) (gateState, error) {
		return gateState{Draft: "about " + s.Topic}, nil
	})
	g.AddNode("review", func(ctx context.Context, s gateState) (gateState, error) { return gateState{Reviewed: true}, nil })
	g.AddNode("publish", func(ctx context.Context, s gateState) (gateState, error) { return gateState{Published: true}, nil })
	g.AddEdge(graph.Start, "draft").AddEdge("draft", "review").AddEdge("review", "publish")
	app, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestStreamWithValuesSendsTheStateAtTheStartAndAfterEachStep(t *testing.T) {
	app := plainGateGraph(t)
	var got []string
	for e, err := range app.Stream(context.Background(), "v", graph.Input(gateState{Topic: "go"}), graph.WithValues()) {
		if err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case graph.EventValues:
			got = append(got, "values "+string(e.Values))
		case graph.EventUpdate:
			got = append(got, "update "+e.Node)
		}
	}
	want := []string{
		`values {"topic":"go"}`,
		"update draft", `values {"topic":"go","draft":"about go"}`,
		"update review", `values {"topic":"go","draft":"about go","reviewed":true}`,
		"update publish", `values {"topic":"go","draft":"about go","reviewed":true,"published":true}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%q\nwant\n%q", got, want)
	}
	for e := range app.Stream(context.Background(), "w", graph.Input(gateState{Topic: "go"})) {
		if e.Type == graph.EventValues {
			t.Fatal("a stream that did not ask for values got them")
		}
	}
}

func TestUpdateStateOnGotoChoosesTheNextNodes(t *testing.T) {
	ctx := context.Background()
	app := plainGateGraph(t)
	if _, err := app.Invoke(ctx, "g", graph.Input(gateState{Topic: "go"})); err != nil {
		t.Fatal(err)
	}
	th, err := app.Open(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.UpdateStateOn(ctx, th, graph.StateUpdate{Values: json.RawMessage(`{"draft":"by hand"}`), Goto: []string{"publish"}})
	th.Release(ctx)
	if err != nil || res.Values.Draft != "by hand" || !slices.Equal(res.Next, []string{"publish"}) {
		t.Fatalf("update with goto: %v %+v", err, res)
	}
	res, err = app.Invoke(ctx, "g", graph.Continue())
	if err != nil || res.Status != interlude.RunCompleted || res.Values.Draft != "by hand" || !res.Values.Published {
		t.Fatalf("continue after goto publish: %v %+v", err, res)
	}
	th, _ = app.Open(ctx, "g")
	defer th.Release(ctx)
	if _, err := app.UpdateStateOn(ctx, th, graph.StateUpdate{Goto: []string{"nowhere"}}); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Fatalf("goto an unknown node: %v", err)
	}
}

func TestUpdateStateWithoutANodeKeepsTheNodesDue(t *testing.T) {
	ctx := context.Background()
	app := gatedGraph(t)
	res, err := app.Invoke(ctx, "k", graph.Input(gateState{Topic: "go"}))
	if err != nil || res.Breakpoint == nil || res.Breakpoint.Node != "draft" {
		t.Fatalf("after draft: %v %+v", err, res)
	}
	res, err = app.UpdateState(ctx, "k", gateState{Draft: "by hand"}, "")
	if err != nil || res.Values.Draft != "by hand" || !slices.Equal(res.Next, []string{"review"}) {
		t.Fatalf("the edit moved the thread: %v %+v", err, res)
	}
	res, err = app.Invoke(ctx, "k", graph.Continue())
	if err != nil || res.Breakpoint == nil || res.Breakpoint.Node != "publish" || !res.Values.Reviewed || res.Values.Draft != "by hand" {
		t.Fatalf("continue runs the node that was due: %v %+v", err, res)
	}
}
