package graph_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

func TestEndDocumentsGoWithTheCommitThatEndsTheRun(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	g, err := graphs.Refund(graph.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	var seen []*graph.Result[json.RawMessage]
	docs := func(end *graph.Result[json.RawMessage]) []store.DocumentWrite {
		seen = append(seen, end)
		return []store.DocumentWrite{{Document: store.Document{Kind: "end", Data: end.Values}}}
	}
	for i, cmd := range []graph.Command{
		graph.Input(json.RawMessage(`{"amount":150}`)),
		graph.Resume(interlude.Resolve(json.RawMessage(`{"approved":true}`))),
	} {
		res, err := g.Invoke(ctx, "t", cmd.WithEndDocuments(docs))
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != i+1 {
			t.Fatalf("run %d called for its documents %d times in all, want %d: once, at its end", i, len(seen), i+1)
		}
		end := seen[i]
		want, _ := json.Marshal(res.Values)
		if end.Checkpoint != res.Checkpoint || end.Status != res.Status || string(end.Values) != string(want) {
			t.Errorf("run %d: documents built for checkpoint %d, %s, %s; the run ended at %d, %s, %s",
				i, end.Checkpoint, end.Status, end.Values, res.Checkpoint, res.Status, want)
		}
		d, err := st.Document(ctx, "t", "end", "")
		if err != nil || string(d.Data) != string(want) {
			t.Errorf("run %d: the stored document is %v, %v; want the run's final values %s", i, d, err, want)
		}
	}
}
