package graph_test

import (
	"context"
	"fmt"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// A node asks a person whether to go ahead; the thread pauses, and a later
// invocation with the answer continues it.
func ExampleGraph_Invoke() {
	type State struct {
		Amount  float64 `json:"amount"`
		Outcome string  `json:"outcome,omitempty"`
	}
	g := graph.New[State]()
	g.AddNode("refund", func(ctx context.Context, s State) (State, error) {
		ok, err := interlude.Ask[bool](ctx, interlude.Request{Message: fmt.Sprintf("Refund $%v?", s.Amount)})
		if err != nil {
			return State{}, err
		}
		if ok {
			return State{Outcome: "refunded"}, nil
		}
		return State{Outcome: "declined"}, nil
	})
	g.AddEdge(graph.Start, "refund")
	app, err := g.Compile() // threads in memory; use graph.WithStore for durability
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	res, _ := app.Invoke(ctx, "order-1", graph.Input(State{Amount: 20}))
	fmt.Println(res.Status, res.Interrupts[0].Message)
	res, _ = app.Invoke(ctx, "order-1", graph.Resume(interlude.Resolve(true)))
	fmt.Println(res.Status, res.Values.Outcome)
	// Output:
	// interrupted Refund $20?
	// completed refunded
}
