package graphs

import (
	"context"
	"errors"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// NestedState is the state of the nested graph.
type NestedState struct {
	// Amount is the sum to approve.
	Amount float64 `json:"amount"`
	// Answers are the answers of the approval subgraph's questions, in the order
	// asked (false for a rejection or a cancellation).
	Answers []bool `json:"answers,omitempty"`
	// ManagerRuns is the subgraph's count of manager body starts, copied by finish.
	ManagerRuns int `json:"manager_runs,omitempty"`
	// Outcome is "approved" or "rejected" once finish ran.
	Outcome string `json:"outcome,omitempty"`
}

// ApprovalState is the state of the nested graph's approval subgraph.
type ApprovalState struct {
	// Amount is the sum to approve.
	Amount float64 `json:"amount"`
	// ManagerRuns counts how many times the manager node's body started.
	ManagerRuns int `json:"manager_runs,omitempty" graph:"add"`
	// Answers are the answers given, in the order asked.
	Answers []bool `json:"answers,omitempty" graph:"append"`
}

// YesNoSchema is the response schema of the nested graph's questions.
const YesNoSchema = `{"type":"boolean"}`

// ApprovalSubgraph builds the approval subgraph of the nested graph: manager asks
// "Manager: approve $<amount>?"; finance, which runs only when the amount is over
// 100 and the manager said yes, asks "Finance: approve $<amount>?". Both expect a
// boolean.
func ApprovalSubgraph(opts ...graph.Option) (*graph.Graph[ApprovalState], error) {
	g := graph.New[ApprovalState]()
	g.AddNode("manager", func(ctx context.Context, s ApprovalState) (ApprovalState, error) {
		// Kept even though the node pauses below: every start of the body counts.
		if err := graph.Write(ctx, ApprovalState{ManagerRuns: 1}); err != nil {
			return ApprovalState{}, err
		}
		yes, err := askYesNo(ctx, "Manager: approve "+Dollars(s.Amount)+"?")
		if err != nil {
			return ApprovalState{}, err
		}
		return ApprovalState{Answers: []bool{yes}}, nil
	})
	g.AddNode("finance", func(ctx context.Context, s ApprovalState) (ApprovalState, error) {
		yes, err := askYesNo(ctx, "Finance: approve "+Dollars(s.Amount)+"?")
		if err != nil {
			return ApprovalState{}, err
		}
		return ApprovalState{Answers: []bool{yes}}, nil
	})
	g.AddEdge(graph.Start, "manager")
	g.AddRoute("manager", func(ctx context.Context, s ApprovalState) ([]string, error) {
		if s.Amount > 100 && len(s.Answers) > 0 && s.Answers[0] {
			return []string{"finance"}, nil
		}
		return []string{graph.End}, nil
	})
	return g.Compile(append([]graph.Option{graph.WithName("approval")}, opts...)...)
}

// askYesNo asks a yes/no question with reason approval; a rejection or a
// cancellation counts as no.
func askYesNo(ctx context.Context, message string) (bool, error) {
	ans, err := interlude.Interrupt(ctx, interlude.Request{Message: message, Reason: "approval", Schema: YesNoSchema})
	var rejected *interlude.RejectedError
	switch {
	case errors.As(err, &rejected):
		return false, nil
	case err != nil:
		return false, err
	case ans.Cancelled:
		return false, nil
	}
	var yes bool
	if err := ans.Decode(&yes); err != nil {
		return false, err
	}
	return yes, nil
}

// Nested builds the nested graph: intake, then approval (the ApprovalSubgraph as
// a node), then finish, which sets the outcome to "approved" when every question
// asked was answered yes and to "rejected" otherwise, and copies the subgraph's
// manager_runs. Its questions have the paths ["approval", "manager"] and
// ["approval", "finance"].
func Nested(opts ...graph.Option) (*graph.Graph[NestedState], error) {
	sub, err := ApprovalSubgraph()
	if err != nil {
		return nil, err
	}
	g := graph.New[NestedState]()
	g.AddNode("intake", func(ctx context.Context, s NestedState) (NestedState, error) {
		if s.Amount < 0 {
			return NestedState{}, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "the amount is negative; give an amount of 0 or more"}
		}
		return NestedState{}, nil
	})
	g.AddNode("approval", graph.SubgraphNode(sub,
		func(s NestedState) ApprovalState { return ApprovalState{Amount: s.Amount} },
		func(s NestedState, a ApprovalState) NestedState {
			return NestedState{Answers: a.Answers, ManagerRuns: a.ManagerRuns}
		}))
	g.AddNode("finish", func(ctx context.Context, s NestedState) (NestedState, error) {
		outcome := "approved"
		for _, yes := range s.Answers {
			if !yes {
				outcome = "rejected"
			}
		}
		if len(s.Answers) == 0 {
			outcome = "rejected"
		}
		return NestedState{Outcome: outcome, ManagerRuns: s.ManagerRuns}, nil
	})
	g.AddEdge(graph.Start, "intake")
	g.AddEdge("intake", "approval")
	g.AddEdge("approval", "finish")
	return g.Compile(append([]graph.Option{graph.WithName("nested")}, opts...)...)
}
