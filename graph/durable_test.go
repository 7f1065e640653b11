package graph_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/sqlite"
)

// childEnv makes the test binary act as a separate process that starts a refund
// thread on a SQLite file and exits while it is paused.
const childEnv = "INTERLUDE_TEST_CHILD_DB"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(pauseInChild(path))
	}
	os.Exit(m.Run())
}

func pauseInChild(path string) int {
	st, err := sqlite.Open(path)
	if err != nil {
		return 2
	}
	defer st.Close()
	app := refundGraph(&testing.T{}, st)
	res, err := app.Invoke(context.Background(), "order-42", graph.Input(refundState{Amount: 150}))
	if err != nil || res.Status != interlude.RunInterrupted {
		return 3
	}
	return 0 // the process ends with the thread paused
}

func TestPauseSurvivesProcessAndResumesInNewOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interlude.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child process: %v %s", err, out)
	}

	ctx := context.Background()
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	page, err := st.List(ctx, store.Query{Status: interlude.ThreadInterrupted})
	if err != nil || len(page.Threads) != 1 || page.Threads[0].ThreadID != "order-42" || len(page.Threads[0].Interrupts) != 1 {
		t.Fatalf("the new process should list the paused thread: %v %+v", err, page)
	}
	app := refundGraph(t, st)
	snap, err := app.State(ctx, "order-42")
	if err != nil || len(snap.Interrupts) != 1 || snap.Interrupts[0].ID != page.Threads[0].Interrupts[0].ID {
		t.Fatalf("state: %v %+v", err, snap)
	}
	res, err := app.Invoke(ctx, "order-42", graph.Resume(interlude.Resolve(map[string]any{"approved": true})))
	if err != nil || res.Status != interlude.RunCompleted || res.Values.Outcome != "refunded" || res.Values.Attempts != 2 {
		t.Fatalf("%v %+v", err, res)
	}
}

// TestACachedThreadWrittenByAnotherProcessIsReadAgain runs a thread through a
// graph on one SQLite store (which keeps it cached), then through a graph on
// a second store over the same file, as another process would, then through
// the first again: its later runs start from the second's commit, both when
// the thread is opened as a host opens it and when the graph is invoked
// directly.
func TestACachedThreadWrittenByAnotherProcessIsReadAgain(t *testing.T) {
	type runs struct {
		N int `json:"n" graph:"add"`
	}
	compile := func(t *testing.T, st store.Store) *graph.Graph[runs] {
		t.Helper()
		g, err := graph.New[runs]().
			AddNode("count", func(ctx context.Context, r runs) (runs, error) { return runs{N: 1}, nil }).
			AddEdge(graph.Start, "count").
			Compile(graph.WithStore(st), graph.WithName("count"))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func(g *graph.Graph[runs]) (*graph.Result[runs], error)
	}{
		{"invoked", func(g *graph.Graph[runs]) (*graph.Result[runs], error) {
			return g.Invoke(ctx, "t", graph.Input(runs{}))
		}},
		{"opened", func(g *graph.Graph[runs]) (*graph.Result[runs], error) {
			th, err := g.Open(ctx, "t")
			if err != nil {
				return nil, err
			}
			defer th.Release(ctx)
			return g.InvokeOn(ctx, th, graph.Input(runs{}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "shared.db")
			var gs [2]*graph.Graph[runs]
			for i := range gs {
				st, err := sqlite.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				gs[i] = compile(t, st)
			}
			for i, g := range []*graph.Graph[runs]{gs[0], gs[0], gs[1], gs[0], gs[0]} {
				res, err := tc.run(g)
				if err != nil {
					t.Fatalf("run %d: %v", i+1, err)
				}
				if res.Values.N != i+1 {
					t.Fatalf("run %d counted %d runs, want %d: it started from a stale copy", i+1, res.Values.N, i+1)
				}
			}
		})
	}
}
