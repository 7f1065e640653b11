package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store/sqlite"
)

// A thread paused in one process is answered in another: here the store is
// closed and the file opened again, as a restarted process would, and the
// answer is recorded with who gave it.
func Example() {
	type State struct {
		Outcome string `json:"outcome,omitempty"`
	}
	compile := func(path string) (*graph.Graph[State], *sqlite.Store) {
		st, err := sqlite.Open(path)
		if err != nil {
			panic(err)
		}
		g := graph.New[State]()
		g.AddNode("ship", func(ctx context.Context, s State) (State, error) {
			ok, err := interlude.Ask[bool](ctx, interlude.Request{Message: "Ship the order?"})
			if err != nil {
				return State{}, err
			}
			return State{Outcome: fmt.Sprint("shipped: ", ok)}, nil
		})
		g.AddEdge(graph.Start, "ship")
		app, err := g.Compile(graph.WithStore(st))
		if err != nil {
			panic(err)
		}
		return app, st
	}
	dir, _ := os.MkdirTemp("", "interlude")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "threads.db")
	ctx := context.Background()

	app, st := compile(path)
	res, _ := app.Invoke(ctx, "order-7", graph.Input(State{}))
	fmt.Println(res.Status, res.Interrupts[0].Message)
	st.Close()

	app, st = compile(path) // a new process over the same file
	defer st.Close()
	res, _ = app.Invoke(interlude.WithActor(ctx, "alice"), "order-7", graph.Resume(interlude.Resolve(true)))
	fmt.Println(res.Status, res.Values.Outcome)
	h, _ := app.History(ctx, "order-7", graph.HistoryOptions{})
	for _, cp := range h {
		for _, a := range cp.Resolved {
			fmt.Println("answered by", a.Resolution.By)
		}
	}
	// Output:
	// interrupted Ship the order?
	// completed shipped: true
	// answered by alice
}
