package graphs

import (
	"context"
	"errors"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// TwoStepState is the state of the two-step graph.
type TwoStepState struct {
	// Answers lists the answers in the order given.
	Answers []bool `json:"answers,omitempty"`
	// Outcome is "done" when both answers were yes, "stopped" otherwise.
	Outcome string `json:"outcome,omitempty"`
}

// TwoStep builds the two-step graph: one node that asks two yes/no questions in a
// row; a no to the first skips the second.
func TwoStep(opts ...graph.Option) (*graph.Graph[TwoStepState], error) {
	g := graph.New[TwoStepState]()
	g.AddNode("confirm", confirm)
	g.AddEdge(graph.Start, "confirm")
	return g.Compile(append([]graph.Option{graph.WithName("two-step")}, opts...)...)
}

func confirm(ctx context.Context, s TwoStepState) (TwoStepState, error) {
	var answers []bool
	for _, msg := range []string{"Approve step 1?", "Approve step 2?"} {
		ok, err := interlude.Ask[bool](ctx, interlude.Request{Message: msg})
		var rejected *interlude.RejectedError
		if errors.Is(err, interlude.ErrCancelled) || errors.As(err, &rejected) {
			return TwoStepState{Answers: answers, Outcome: "stopped"}, nil
		}
		if err != nil {
			return TwoStepState{}, err
		}
		answers = append(answers, ok)
		if !ok {
			return TwoStepState{Answers: answers, Outcome: "stopped"}, nil
		}
	}
	return TwoStepState{Answers: answers, Outcome: "done"}, nil
}
