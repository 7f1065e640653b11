package graph_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/cputime"
	"github.com/interludehq/interlude/store"
)

// nestedAsker builds a graph whose one node asks a yes/no question, wrapped in
// levels subgraph nodes: levels 0 is a plain one-node graph.
func nestedAsker(b *testing.B, st store.Store, levels int) *graph.Graph[counter] {
	b.Helper()
	g := graph.New[counter]()
	g.AddNode("ask", func(ctx context.Context, s counter) (counter, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "ok?", Schema: `{"type":"boolean"}`})
		if err != nil {
			return counter{}, err
		}
		var yes bool
		if err := ans.Decode(&yes); err != nil || !yes {
			return counter{}, fmt.Errorf("not approved: %v", err)
		}
		return counter{N: s.N + 1}, nil
	})
	g.AddEdge(graph.Start, "ask")
	opts := []graph.Option{graph.WithName("level")}
	if levels == 0 {
		opts = append(opts, graph.WithStore(st))
	}
	app, err := g.Compile(opts...)
	if err != nil {
		b.Fatal(err)
	}
	for l := 1; l <= levels; l++ {
		w := graph.New[counter]()
		w.AddNode("sub"+strconv.Itoa(l), graph.SubgraphNode(app,
			func(s counter) counter { return s },
			func(_ counter, out counter) counter { return counter{N: out.N} }))
		w.AddEdge(graph.Start, "sub"+strconv.Itoa(l))
		opts := []graph.Option{graph.WithName("level")}
		if l == levels {
			opts = append(opts, graph.WithStore(st))
		}
		if app, err = w.Compile(opts...); err != nil {
			b.Fatal(err)
		}
	}
	return app
}

// BenchmarkNestedInterruptCycle pauses and resumes a question asked three
// subgraphs down (levels=3) and at the top level (levels=0), on a new thread per
// iteration: the nested cycle is meant to cost at most twice the top-level one.
func BenchmarkNestedInterruptCycle(b *testing.B) {
	for _, name := range []string{"memory", "sqlite"} {
		for _, levels := range []int{0, 3} {
			b.Run(fmt.Sprintf("%s/levels=%d", name, levels), func(b *testing.B) {
				app := nestedAsker(b, stores(b)[name](), levels)
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				cpu := cputime.Process()
				for i := range b.N {
					id := "t" + strconv.Itoa(i)
					res, err := app.Invoke(ctx, id, graph.Input(counter{}))
					if err != nil || res.Status != interlude.RunInterrupted || len(res.Interrupts[0].Path) != levels+1 {
						b.Fatal(err, res)
					}
					if res, err := app.Invoke(ctx, id, graph.Resume(interlude.Resolve(true))); err != nil || res.Values.N != 1 {
						b.Fatal(err, res)
					}
				}
				b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
