package interlude_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// Interrupt pauses the node; on resume the same call returns the answer. A
// rejection arrives as a *RejectedError the node may handle.
func ExampleInterrupt() {
	type State struct {
		Note string `json:"note,omitempty"`
	}
	g := graph.New[State]()
	g.AddNode("delete", func(ctx context.Context, s State) (State, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{
			Message: "Delete 3 records?",
			Schema:  `{"type":"boolean"}`,
		})
		var rejected *interlude.RejectedError
		switch {
		case errors.As(err, &rejected):
			return State{Note: "kept: " + rejected.Message}, nil
		case err != nil:
			return State{}, err
		case ans.Cancelled:
			return State{Note: "cancelled"}, nil
		}
		return State{Note: "deleted"}, nil
	})
	g.AddEdge(graph.Start, "delete")
	app, _ := g.Compile()
	ctx := context.Background()
	app.Invoke(ctx, "t", graph.Input(State{}))
	res, _ := app.Invoke(ctx, "t", graph.Resume(interlude.Reject(&interlude.RejectedError{Name: "Denied", Message: "needed for the audit"})))
	fmt.Println(res.Values.Note)
	// Output: kept: needed for the audit
}

// Ask derives the response schema from the answer type and decodes the answer.
func ExampleAsk() {
	type Shipping struct {
		Method string `json:"method" jsonschema:"enum=standard,enum=express"`
	}
	type State struct {
		Method string `json:"method,omitempty"`
	}
	g := graph.New[State]()
	g.AddNode("ship", func(ctx context.Context, s State) (State, error) {
		v, err := interlude.Ask[Shipping](ctx, interlude.Request{Message: "How should we ship?"})
		if err != nil {
			return State{}, err
		}
		return State{Method: v.Method}, nil
	})
	g.AddEdge(graph.Start, "ship")
	app, _ := g.Compile()
	ctx := context.Background()
	res, _ := app.Invoke(ctx, "t", graph.Input(State{}))
	fmt.Println(string(res.Interrupts[0].Schema))
	_, err := app.Invoke(ctx, "t", graph.Resume(interlude.Resolve(map[string]string{"method": "teleport"})))
	fmt.Println(errors.Is(err, interlude.ErrInvalidResponse))
	res, _ = app.Invoke(ctx, "t", graph.Resume(interlude.Resolve(map[string]string{"method": "express"})))
	fmt.Println(res.Values.Method)
	// Output:
	// {"properties":{"method":{"type":"string","enum":["standard","express"]}},"additionalProperties":false,"type":"object","required":["method"]}
	// true
	// express
}
