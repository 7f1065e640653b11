package graph_test

import (
	"context"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store/memory"
)

func TestAnErasedResultLeavesTheValuesOutOnlyForACommandWithoutValues(t *testing.T) {
	ctx := context.Background()
	g := refundGraph(t, memory.New()).Erase()
	res, err := g.Invoke(ctx, "order-1", graph.Input(refundState{Amount: 150}).WithoutValues())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interlude.RunInterrupted || len(res.Interrupts) != 1 || res.Checkpoint == 0 {
		t.Fatalf("result without values = %+v, want the pause with its interrupt and checkpoint", res)
	}
	if res.Values != nil {
		t.Fatalf("values = %s, want none", res.Values)
	}
	res, err = g.Invoke(ctx, "order-1", graph.Resume(interlude.Resolve(map[string]any{"approved": true})))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Values) != `{"amount":150,"attempts":2,"outcome":"refunded"}` {
		t.Fatalf("values = %s, want the state", res.Values)
	}
}
