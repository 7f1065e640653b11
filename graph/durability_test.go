package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// recordingStore notes, for each append, the kind of its record and whether it
// was to be durable.
type recordingStore struct {
	store.Store
	mu      sync.Mutex
	commits []string
}

func (s *recordingStore) Append(ctx context.Context, a store.Append) error {
	err := s.Store.Append(ctx, a)
	if err == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, r := range a.Records {
			c := r.Kind
			if !a.NoSync {
				c += "!"
			}
			s.commits = append(s.commits, c)
		}
	}
	return err
}

func (s *recordingStore) Unwrap() store.Store { return s.Store }

// take returns the commits noted since the last call.
func (s *recordingStore) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := strings.Join(s.commits, " ")
	s.commits = nil
	return c
}

type durabilityState struct {
	Fail  bool `json:"fail,omitempty"`
	Steps int  `json:"steps" graph:"add"`
}

// TestTheCommitsSomeoneIsToldAboutAreDurableAndOnlyThose runs a thread
// through every kind of commit (steps, a pause, an answer, a breakpoint, a
// failure, an edit, a fork) under each durability mode and checks which
// commits the store was asked to make durable ("!"): under async, those after
// which someone hears of the run (its end, its pause, its accepted answer, an
// edit), under exit only the run's end and edits, under sync all.
func TestTheCommitsSomeoneIsToldAboutAreDurableAndOnlyThose(t *testing.T) {
	type run struct {
		name string
		do   func(ctx context.Context, app *graph.Graph[durabilityState]) error
	}
	invoke := func(cmd graph.Command) func(context.Context, *graph.Graph[durabilityState]) error {
		return func(ctx context.Context, app *graph.Graph[durabilityState]) error {
			_, err := app.Invoke(ctx, "t", cmd)
			return err
		}
	}
	runs := []run{
		{"start, to the question", invoke(graph.Input(durabilityState{}))},
		{"answer, to the breakpoint", invoke(graph.Resume(interlude.Resolve("yes")))},
		{"continue, to the end", invoke(graph.Continue())},
		{"edit", func(ctx context.Context, app *graph.Graph[durabilityState]) error {
			_, err := app.UpdateState(ctx, "t", durabilityState{Steps: 1}, graph.Start)
			return err
		}},
		{"start, to a failure", func(ctx context.Context, app *graph.Graph[durabilityState]) error {
			_, err := app.Invoke(ctx, "t", graph.Input(durabilityState{Fail: true}))
			if err == nil || !strings.Contains(err.Error(), "boom") {
				return fmt.Errorf("the failing run returned %v, want its node's error", err)
			}
			return nil
		}},
		{"fork, to the question", func(ctx context.Context, app *graph.Graph[durabilityState]) error {
			_, err := app.Fork(ctx, "t", 1)
			return err
		}},
	}
	heard := []graph.Option{graph.WithEvents(func(graph.Event) {}), graph.WithListeners(func(string) bool { return true })}
	unheard := []graph.Option{graph.WithEvents(func(graph.Event) {}), graph.WithListeners(func(string) bool { return false })}
	for _, c := range []struct {
		name string
		mode graph.Durability
		opts []graph.Option
		want []string // per run
	}{
		{"async, an answer heard at once", graph.DurabilityAsync, heard, []string{
			"step pause!",
			"resolve! step step breakpoint!",
			"step!",
			"update!",
			"step fail!",
			"fork! pause!",
		}},
		{"async, an answer first told with its run's end", graph.DurabilityAsync, unheard, []string{
			"step pause!",
			"resolve step step breakpoint!",
			"step!",
			"update!",
			"step fail!",
			"fork! pause!",
		}},
		{"exit", graph.DurabilityExit, nil, []string{
			"step pause!",
			"resolve step step breakpoint!",
			"step!",
			"update!",
			"step fail!",
			"fork! pause!",
		}},
		{"sync", graph.DurabilitySync, nil, []string{
			"step! pause!",
			"resolve! step! step! breakpoint!",
			"step!",
			"update!",
			"step! fail!",
			"fork! pause!",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &recordingStore{Store: memory.New()}
			app := durabilityGraph(t, st, append([]graph.Option{graph.WithDurability(c.mode)}, c.opts...)...)
			ctx := context.Background()
			for i, r := range runs {
				if err := r.do(ctx, app); err != nil {
					t.Fatalf("%s: %v", r.name, err)
				}
				if got := st.take(); got != c.want[i] {
					t.Errorf("%s committed %q, want %q", r.name, got, c.want[i])
				}
			}
		})
	}
}

// durabilityGraph runs a, then ask (which asks a question), then b and c, with
// a breakpoint before c; a fails when the state says so.
func durabilityGraph(t *testing.T, st store.Store, opts ...graph.Option) *graph.Graph[durabilityState] {
	t.Helper()
	g := graph.New[durabilityState]()
	g.AddNode("a", func(ctx context.Context, s durabilityState) (durabilityState, error) {
		return durabilityState{Steps: 1}, nil
	})
	g.AddNode("ask", func(ctx context.Context, s durabilityState) (durabilityState, error) {
		if _, err := interlude.Interrupt(ctx, interlude.Request{Message: "go on?"}); err != nil {
			return durabilityState{}, err
		}
		return durabilityState{Steps: 1}, nil
	})
	g.AddNode("b", func(ctx context.Context, s durabilityState) (durabilityState, error) {
		return durabilityState{Steps: 1}, nil
	})
	g.AddNode("c", func(ctx context.Context, s durabilityState) (durabilityState, error) {
		return durabilityState{Steps: 1}, nil
	})
	g.AddNode("boom", func(ctx context.Context, s durabilityState) (durabilityState, error) {
		return durabilityState{}, errors.New("boom")
	})
	g.AddEdge(graph.Start, "a")
	g.AddRoute("a", func(ctx context.Context, s durabilityState) ([]string, error) {
		if s.Fail {
			return []string{"boom"}, nil
		}
		return []string{"ask"}, nil
	})
	g.AddEdge("ask", "b")
	g.AddEdge("b", "c")
	app, err := g.Compile(append([]graph.Option{graph.WithStore(st), graph.InterruptBefore("c")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// TestAnUnknownDurabilityIsRefused checks that Compile refuses a mode it does
// not know, and that the modes' names read back.
func TestAnUnknownDurabilityIsRefused(t *testing.T) {
	g := graph.New[durabilityState]()
	g.AddNode("a", func(ctx context.Context, s durabilityState) (durabilityState, error) { return s, nil })
	g.AddEdge(graph.Start, "a")
	if _, err := g.Compile(graph.WithDurability(graph.Durability(7))); err == nil || !strings.Contains(err.Error(), "graph.WithDurability: mode 7 ") {
		t.Fatalf("Compile with durability 7: %v, want a refusal naming it", err)
	}
	var names []string
	for _, name := range []string{"sync", "async", "exit"} {
		d, err := graph.ParseDurability(name)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, d.String())
	}
	if !slices.Equal(names, []string{"sync", "async", "exit"}) {
		t.Fatalf("the modes read back as %v", names)
	}
	if _, err := graph.ParseDurability("fast"); err == nil {
		t.Fatal(`ParseDurability("fast") succeeded`)
	}
}

func TestAStreamedAnswerIsDurableBeforeTheStreamHearsOfIt(t *testing.T) {
	st := &recordingStore{Store: memory.New()}
	app := durabilityGraph(t, st, graph.WithListeners(func(string) bool { return false }))
	ctx := context.Background()
	if _, err := app.Invoke(ctx, "t", graph.Input(durabilityState{})); err != nil {
		t.Fatal(err)
	}
	st.take()
	for _, err := range app.Stream(ctx, "t", graph.Resume(interlude.Resolve("yes"))) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, want := st.take(), "resolve! step step breakpoint!"; got != want {
		t.Errorf("a streamed answer committed %q, want %q", got, want)
	}
}
