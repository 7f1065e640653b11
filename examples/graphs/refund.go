package graphs

import (
	"context"
	"errors"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// RefundState is the state of the refund graph.
type RefundState struct {
	// Amount is the refund asked for.
	Amount float64 `json:"amount"`
	// Attempts counts how many times the refund node's body started.
	Attempts int `json:"attempts,omitempty" graph:"add"`
	// Outcome is "refunded", "declined" or "cancelled" once answered.
	Outcome string `json:"outcome,omitempty"`
}

// Approval is the answer the refund question expects.
type Approval struct {
	// Approved says whether the refund may go ahead.
	Approved bool `json:"approved"`
}

// ApprovalSchema is the refund question's response schema.
const ApprovalSchema = `{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}`

// Refund builds the refund graph: one node that records the attempt, asks
// "Approve a refund of $<amount>?" and sets the outcome from the answer: refunded,
// declined (also when the question is rejected) or cancelled.
func Refund(opts ...graph.Option) (*graph.Graph[RefundState], error) {
	g := graph.New[RefundState]()
	g.AddNode("refund", refund)
	g.AddEdge(graph.Start, "refund")
	return g.Compile(append([]graph.Option{graph.WithName("refund")}, opts...)...)
}

func refund(ctx context.Context, s RefundState) (RefundState, error) {
	// Kept even though the node pauses below: every start of the body counts.
	if err := graph.Write(ctx, RefundState{Attempts: 1}); err != nil {
		return RefundState{}, err
	}
	ans, err := interlude.Interrupt(ctx, interlude.Request{
		Message: "Approve a refund of " + Dollars(s.Amount) + "?",
		Reason:  interlude.ReasonToolApproval,
		Value:   map[string]any{"amount": s.Amount},
		Schema:  ApprovalSchema,
	})
	var rejected *interlude.RejectedError
	if errors.As(err, &rejected) {
		return RefundState{Outcome: "declined"}, nil
	}
	if err != nil {
		return RefundState{}, err
	}
	if ans.Cancelled {
		return RefundState{Outcome: "cancelled"}, nil
	}
	var a Approval
	if err := ans.Decode(&a); err != nil {
		return RefundState{}, err
	}
	if a.Approved {
		return RefundState{Outcome: "refunded"}, nil
	}
	return RefundState{Outcome: "declined"}, nil
}
