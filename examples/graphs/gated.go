package graphs

import (
	"context"

	"github.com/interludehq/interlude/graph"
)

// GatedState is the state of the gated graph.
type GatedState struct {
	// Topic is what to write about.
	Topic string `json:"topic"`
	// Draft is the text written by the draft node.
	Draft string `json:"draft,omitempty"`
	// Reviewed is set by the review node.
	Reviewed bool `json:"reviewed,omitempty"`
	// Published becomes true only when the publish node ran.
	Published bool `json:"published,omitempty"`
}

// Gated builds the gated graph: draft → review → publish, pausing at breakpoints
// after draft and before publish. The pauses have no interrupt; a plain continue
// passes each.
func Gated(opts ...graph.Option) (*graph.Graph[GatedState], error) {
	g := graph.New[GatedState]()
	g.AddNode("draft", func(ctx context.Context, s GatedState) (GatedState, error) {
		return GatedState{Draft: "A short note about " + s.Topic + "."}, nil
	})
	g.AddNode("review", func(ctx context.Context, s GatedState) (GatedState, error) {
		return GatedState{Reviewed: true}, nil
	})
	g.AddNode("publish", func(ctx context.Context, s GatedState) (GatedState, error) {
		return GatedState{Published: true}, nil
	})
	g.AddEdge(graph.Start, "draft").AddEdge("draft", "review").AddEdge("review", "publish")
	return g.Compile(append([]graph.Option{
		graph.WithName("gated"), graph.InterruptAfter("draft"), graph.InterruptBefore("publish"),
	}, opts...)...)
}
