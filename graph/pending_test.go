package graph_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store/memory"
)

func TestPendingOnTellsWhatStateTellsOfAnOpenedThread(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []graph.Option
	}{
		{"cached", nil},
		{"read when opened", []graph.Option{graph.WithCacheBytes(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			g, err := graphs.Refund(append([]graph.Option{graph.WithStore(memory.New())}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Invoke(ctx, "t-1", graph.Input(graphs.RefundState{Amount: 150})); err != nil {
				t.Fatal(err)
			}
			snap, err := g.State(ctx, "t-1")
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Interrupts) != 1 {
				t.Fatalf("the refund did not pause: %+v", snap)
			}
			th, err := g.Open(ctx, "t-1")
			if err != nil {
				t.Fatal(err)
			}
			defer th.Release(ctx)
			pending, brk, err := g.PendingOn(ctx, th)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pending, snap.Interrupts) || !reflect.DeepEqual(brk, snap.Breakpoint) {
				t.Fatalf("PendingOn gave %+v, %+v; State gave %+v, %+v", pending, brk, snap.Interrupts, snap.Breakpoint)
			}
			// After a run on the opened thread, what it read is stale: the
			// answered question is pending no more.
			q := pending[0]
			if _, err := g.InvokeOn(ctx, th, graph.Respond(map[string]interlude.Resolution{q.ID: interlude.Resolve(map[string]any{"approved": true})})); err != nil {
				t.Fatal(err)
			}
			if pending, _, err := g.PendingOn(ctx, th); err != nil || len(pending) != 0 {
				t.Fatalf("after the answer PendingOn gave %+v, %v", pending, err)
			}
		})
	}
}
