package graphs

import (
	"context"
	"errors"
	"slices"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// ParallelState is the state of the parallel graph.
type ParallelState struct {
	// Approved collects the names of the approved branches.
	Approved []string `json:"approved,omitempty" graph:"append"`
	// CRuns counts the runs of branch c, which never pauses.
	CRuns int `json:"c_runs,omitempty" graph:"add"`
	// Outcome is the sorted list of approved branches, set by the join.
	Outcome []string `json:"outcome,omitempty"`
}

// Parallel builds the parallel graph: branches a, b and c run in the same step; a
// and b each ask a yes/no question, c just counts its runs; a join lists the
// approved branches.
func Parallel(opts ...graph.Option) (*graph.Graph[ParallelState], error) {
	g := graph.New[ParallelState]()
	g.AddNode("a", approveBranch("a"))
	g.AddNode("b", approveBranch("b"))
	g.AddNode("c", func(ctx context.Context, s ParallelState) (ParallelState, error) {
		return ParallelState{CRuns: 1}, nil
	})
	g.AddNode("join", func(ctx context.Context, s ParallelState) (ParallelState, error) {
		out := slices.Clone(s.Approved)
		slices.Sort(out)
		if out == nil {
			out = []string{}
		}
		return ParallelState{Outcome: out}, nil
	})
	for _, n := range []string{"a", "b", "c"} {
		g.AddEdge(graph.Start, n)
		g.AddEdge(n, "join")
	}
	return g.Compile(append([]graph.Option{graph.WithName("parallel")}, opts...)...)
}

func approveBranch(name string) graph.Node[ParallelState] {
	return func(ctx context.Context, s ParallelState) (ParallelState, error) {
		ok, err := interlude.Ask[bool](ctx, interlude.Request{Message: "Approve " + name + "?"})
		var rejected *interlude.RejectedError
		if errors.Is(err, interlude.ErrCancelled) || errors.As(err, &rejected) {
			return ParallelState{}, nil
		}
		if err != nil {
			return ParallelState{}, err
		}
		if !ok {
			return ParallelState{}, nil
		}
		return ParallelState{Approved: []string{name}}, nil
	}
}
