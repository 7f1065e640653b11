package graph_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/sqlite"
)

// ledger is a state of constant size: each turn replaces its fields, so the
// latest checkpoint's values weigh the same however long the thread is.
type ledger struct {
	Turn int    `json:"turn"`
	Note string `json:"note"`
}

// ledgerThread returns a graph over st with a thread "t" of the given number of
// checkpoints, one per turn.
func ledgerThread(tb testing.TB, st store.Store, checkpoints int) *graph.Graph[ledger] {
	tb.Helper()
	g := graph.New[ledger]()
	g.AddNode("turn", func(ctx context.Context, s ledger) (ledger, error) {
		return ledger{Turn: s.Turn + 1, Note: fmt.Sprintf("turn %d %s", s.Turn+1, strings.Repeat("x", 200))}, nil
	})
	g.AddEdge(graph.Start, "turn")
	app, err := g.Compile(graph.WithStore(st))
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	for range checkpoints {
		if _, err := app.Invoke(ctx, "t", graph.Input(ledger{})); err != nil {
			tb.Fatal(err)
		}
	}
	if v, err := st.Version(ctx, "t"); err != nil || v != int64(checkpoints) {
		tb.Fatalf("the thread has %d checkpoints (%v), want %d", v, err, checkpoints)
	}
	return app
}

// BenchmarkHistoryLatest reads the latest checkpoint of a thread on SQLite, as
// a page of one, for threads of 10, 100 and 1,000 checkpoints. Its time and
// bytes allocated do not grow with the thread.
func BenchmarkHistoryLatest(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("checkpoints=%d", n), func(b *testing.B) {
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "history.db"), sqlite.WithSynchronous("NORMAL"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			app := ledgerThread(b, st, n)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				h, err := app.History(ctx, "t", graph.HistoryOptions{Limit: 1})
				if err != nil || len(h) != 1 || h[0].ID != int64(n) || h[0].Values.Turn != n {
					b.Fatalf("%v %+v", err, h)
				}
			}
		})
	}
}
