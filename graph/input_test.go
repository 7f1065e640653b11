package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store/memory"
)

type tallyState struct {
	Items  []string `json:"items" graph:"append"`
	Inputs int      `json:"inputs" graph:"add"`
	Before int      `json:"before,omitempty"` // items the thread held before the latest input
}

func TestOnInputRefusesOrAddsBeforeAnythingIsCommitted(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	var interruptErr error
	build := func() *graph.Graph[tallyState] {
		g := graph.New[tallyState]()
		g.AddNode("noop", func(ctx context.Context, s tallyState) (tallyState, error) { return tallyState{}, nil })
		g.AddEdge(graph.Start, "noop")
		g.OnInput(func(ctx context.Context, current tallyState, input *tallyState) (tallyState, error) {
			_, interruptErr = interlude.Interrupt(ctx, interlude.Request{Message: "may I?"})
			if slices.Contains(input.Items, "") {
				return tallyState{}, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "items must not be empty"}
			}
			return tallyState{Inputs: 1, Before: len(current.Items)}, nil
		})
		app, err := g.Compile(graph.WithStore(st))
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	app := build()
	steps := []struct {
		name   string
		thread string
		input  any
		refuse bool
		want   tallyState // the thread's values afterwards, as a fresh graph loads them
	}{
		{"JSON input to a new thread", "t", json.RawMessage(`{"items":["a"]}`), false, tallyState{Items: []string{"a"}, Inputs: 1}},
		{"struct input to that thread", "t", tallyState{Items: []string{"b", "c"}}, false, tallyState{Items: []string{"a", "b", "c"}, Inputs: 2, Before: 1}},
		{"refused input to that thread", "t", tallyState{Items: []string{"d", ""}}, true, tallyState{Items: []string{"a", "b", "c"}, Inputs: 2, Before: 1}},
		{"refused input to a new thread", "n", json.RawMessage(`{"items":[""]}`), true, tallyState{}},
	}
	for _, s := range steps {
		before, _ := app.State(ctx, s.thread)
		res, err := app.Invoke(ctx, s.thread, graph.Input(s.input))
		if s.refuse != errors.Is(err, interlude.ErrInvalidRequest) || (!s.refuse && (err != nil || res.Status != interlude.RunCompleted)) {
			t.Fatalf("%s: err %v, result %+v", s.name, err, res)
		}
		after, err := build().State(ctx, s.thread)
		switch {
		case s.refuse && before == nil:
			if !errors.Is(err, interlude.ErrNotFound) {
				t.Fatalf("%s: a refused first input made the thread: %v %+v", s.name, err, after)
			}
			continue
		case err != nil:
			t.Fatalf("%s: %v", s.name, err)
		case s.refuse && after.Checkpoint != before.Checkpoint:
			t.Fatalf("%s: a refused input moved the thread from checkpoint %d to %d", s.name, before.Checkpoint, after.Checkpoint)
		}
		if got := after.Values; !slices.Equal(got.Items, s.want.Items) || got.Inputs != s.want.Inputs || got.Before != s.want.Before {
			t.Fatalf("%s: values %+v, want %+v", s.name, got, s.want)
		}
	}
	if !errors.Is(interruptErr, interlude.ErrNotInRun) {
		t.Fatalf("Interrupt in the input function: %v", interruptErr)
	}
}

func TestOnInputNilOrTwiceIsACompileError(t *testing.T) {
	for _, name := range []string{"nil", "twice"} {
		g := graph.New[tallyState]()
		g.AddNode("noop", func(ctx context.Context, s tallyState) (tallyState, error) { return s, nil })
		g.AddEdge(graph.Start, "noop")
		fn := func(ctx context.Context, current tallyState, input *tallyState) (tallyState, error) {
			return tallyState{}, nil
		}
		if name == "nil" {
			g.OnInput(nil)
		} else {
			g.OnInput(fn).OnInput(fn)
		}
		if _, err := g.Compile(); err == nil {
			t.Fatalf("OnInput %s: Compile accepted it", name)
		}
	}
}
