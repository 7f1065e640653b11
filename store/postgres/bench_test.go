package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storetest"
)

// BenchmarkAppend measures one durable append of one 512-byte record to a
// thread: one statement, one round trip, one commit (synchronous_commit as the
// server has it). The snapshot variant also replaces a 4 KiB snapshot.
func BenchmarkAppend(b *testing.B) {
	for _, snap := range []bool{false, true} {
		name := "record"
		if snap {
			name = "record+snapshot"
		}
		b.Run(name, func(b *testing.B) {
			s := openTest(b)
			ctx := context.Background()
			data, snapData := make([]byte, 512), make([]byte, 4096)
			meta := store.Meta{Graph: "bench", Status: interlude.ThreadIdle}
			var v int64
			b.ReportAllocs()
			for b.Loop() {
				a := store.Append{ThreadID: "bench-thread", Expect: v, Meta: meta,
					Records: []store.Record{{Version: v + 1, Format: 1, Kind: "step", Data: data}}}
				if snap {
					a.Snapshot = &store.Snapshot{Version: v + 1, Format: 1, Data: snapData}
				}
				if err := s.Append(ctx, a); err != nil {
					b.Fatal(err)
				}
				v++
			}
		})
	}
}

// BenchmarkLoad measures loading a thread: its facts, snapshot and the 5
// records after it.
func BenchmarkLoad(b *testing.B) { storetest.BenchmarkLoad(b, openTest(b)) }

// SeedSynthetic writes the first n storetest.SyntheticThread rows straight into
// the threads table with COPY, then runs ANALYZE so the planner knows the
// table's shape. It writes no records: it exists to measure listings.
func SeedSynthetic(tb testing.TB, s *Store, n int) {
	tb.Helper()
	ctx := context.Background()
	i := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		m := storetest.SyntheticThread(i)
		i++
		return []any{m.ThreadID, m.Graph, string(m.Status), m.Version, storetest.InterruptsJSON(m), m.CreatedAt.UnixNano(), m.UpdatedAt.UnixNano()}, nil
	})
	copied, err := s.pool.CopyFrom(ctx, pgx.Identifier{s.schema, "threads"},
		[]string{"id", "graph", "status", "version", "interrupts", "created_at", "updated_at"}, src)
	if err != nil {
		tb.Fatal(err)
	}
	if copied != int64(n) {
		tb.Fatalf("copied %d threads, want %d", copied, n)
	}
	if _, err := s.pool.Exec(ctx, "ANALYZE "+pgx.Identifier{s.schema, "threads"}.Sanitize()); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkListInterrupted times the inbox query over storetest.BenchThreads()
// threads (a million unless INTERLUDE_BENCH_THREADS says otherwise) and logs the
// plans, with timings, that prove it walks the index.
func BenchmarkListInterrupted(b *testing.B) {
	n := storetest.BenchThreads()
	s := openTest(b)
	start := time.Now()
	SeedSynthetic(b, s, n)
	b.Logf("seeded %d threads in %v", n, time.Since(start).Round(time.Millisecond))
	seedLeases(b, s, n)
	for _, q := range []store.Query{{Status: interlude.ThreadInterrupted}, {Status: interlude.ThreadInterrupted, Graph: "graph-3"}, {}} {
		query, args, err := s.listQuery(q, 50)
		if err != nil {
			b.Fatal(err)
		}
		plan := explain(b, s.pool, "ANALYZE, BUFFERS, COSTS OFF", query, args...)
		b.Logf("EXPLAIN (ANALYZE, BUFFERS) %s\n%s", query, plan)
		if !walks(plan, "threads_") || strings.Contains(plan, "Sort") {
			b.Fatalf("the listing does not walk an index in order:\n%s", plan)
		}
	}
	// Running and failed add the leased threads: found from the leases table,
	// never by walking every thread.
	for _, q := range []store.Query{{Status: interlude.ThreadFailed}, {Status: interlude.ThreadRunning, Graph: "graph-3"}} {
		query, args, err := s.listQuery(q, 50)
		if err != nil {
			b.Fatal(err)
		}
		plan := explain(b, s.pool, "ANALYZE, BUFFERS, COSTS OFF", query, args...)
		b.Logf("EXPLAIN (ANALYZE, BUFFERS) %s\n%s", query, plan)
		if !walks(plan, "threads_") || strings.Contains(plan, "threads_recent") {
			b.Fatalf("the listing walks every thread:\n%s", plan)
		}
	}
	storetest.BenchmarkList(b, s, n)
}

// seedLeases gives 200 of the n threads a lease, half of them expired (as
// their runs' processes died), as a busy deployment has, then runs ANALYZE.
func seedLeases(tb testing.TB, s *Store, n int) {
	tb.Helper()
	ctx := context.Background()
	var ids []string
	for i := range 200 {
		ids = append(ids, storetest.SyntheticThread(i*(n/200)+i%7).ThreadID)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO `+pgx.Identifier{s.schema}.Sanitize()+`.leases (thread_id, owner, token, expires_at)
		SELECT x.id, 'bench', x.i, now() + CASE WHEN x.i % 2 = 0 THEN interval '1 hour' ELSE interval '-1 hour' END
		FROM unnest($1::text[]) WITH ORDINALITY AS x (id, i)`, ids); err != nil {
		tb.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, "ANALYZE "+pgx.Identifier{s.schema, "leases"}.Sanitize()); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkChain10 runs a graph of ten nodes in a line on a new thread per
// run, by 1, 4 and 64 clients at once, and reports the time per step besides
// the time per run (the elapsed time over the runs of all clients). Each run
// takes the thread's lease, commits its nine middle steps without waiting
// for the WAL flush and its end with it.
func BenchmarkChain10(b *testing.B) {
	type counter struct {
		N int `json:"n"`
	}
	for _, clients := range []int{1, 4, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			s := openTest(b)
			gb := graph.New[counter]()
			prev := graph.Start
			for i := range 10 {
				name := fmt.Sprintf("n%d", i)
				gb.AddNode(name, func(_ context.Context, c counter) (counter, error) { return counter{N: c.N + 1}, nil })
				gb.AddEdge(prev, name)
				prev = name
			}
			gb.AddEdge(prev, graph.End)
			g, err := gb.Compile(graph.WithStore(s), graph.WithName("chain10"))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range clients {
				wg.Go(func() {
					for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
						res, err := g.Invoke(ctx, fmt.Sprint("chain-", n), graph.Input(counter{}))
						if err != nil {
							b.Error(err)
							return
						}
						if res.Values.N != 10 {
							b.Errorf("the run counted %d steps, want 10", res.Values.N)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10), "ns/step")
		})
	}
}
