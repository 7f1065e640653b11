package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/cputime"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/postgres"
	"github.com/interludehq/interlude/store/sqlite"
	"github.com/interludehq/interlude/store/storemetrics"
)

// BenchmarkCycleHTTP starts a refund thread and answers its pause over
// loopback HTTP with the Go client, against a server composed as `interlude
// serve` composes it on SQLite (metrics, event hub, lease, async durability):
// the path bench/load measures, in one process so that it can be profiled. As
// there, the server hosts more than one graph (here gated, whose name sorts
// before refund's).
// "serial" runs one client; "parallel" runs 64 at once (with 2 cores,
// -cpu 2 and SetParallelism 32), as bench/load's 64 clients do.
func BenchmarkCycleHTTP(b *testing.B) {
	for _, mode := range []string{"serial", "parallel"} {
		b.Run(mode, func(b *testing.B) {
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			hub, err := server.NewEventHub()
			if err != nil {
				b.Fatal(err)
			}
			benchCycles(b, mode, st, hub, nil)
		})
	}
}

// BenchmarkCycleHTTPPostgres is BenchmarkCycleHTTP on Postgres, composed as
// `interlude serve --postgres` composes it (the store's event log feeding the
// hub), in a fresh schema of the database INTERLUDE_TEST_POSTGRES names (it
// skips without one). Besides time and CPU it reports, per cycle, the
// statements the store sent (stmts/op), the round trips they took (trips/op:
// a statement alone or a batch of them) and, when the database runs on this
// machine, the CPU its backends serving the store used (db-cpu-ns/op).
func BenchmarkCycleHTTPPostgres(b *testing.B) {
	dsn := os.Getenv("INTERLUDE_TEST_POSTGRES")
	if dsn == "" {
		b.Skip("set INTERLUDE_TEST_POSTGRES to a connection string to run it")
	}
	ctx := context.Background()
	for _, mode := range []string{"serial", "parallel"} {
		b.Run(mode, func(b *testing.B) {
			cfg, err := pgxpool.ParseConfig(dsn)
			if err != nil {
				b.Fatal(err)
			}
			raw := make([]byte, 6)
			rand.Read(raw)
			schema := "interlude_bench_" + hex.EncodeToString(raw)
			trips := &tripCounter{}
			cfg.ConnConfig.Tracer = trips
			cfg.ConnConfig.RuntimeParams["application_name"] = schema // finds the backends
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer pool.Close()
			defer pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			st, err := postgres.New(ctx, pool, postgres.WithSchema(schema))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			events, err := st.EventLog(ctx, postgres.EventConfig{})
			if err != nil {
				b.Fatal(err)
			}
			defer events.Close()
			hub, err := server.NewEventHub(host.WithHubLog(events))
			if err != nil {
				b.Fatal(err)
			}
			// The monitor's own connection is not the store's: it has no tracer
			// and another application_name.
			mon, err := pgx.Connect(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer mon.Close(ctx)
			dbCPU := func() time.Duration {
				rows, err := mon.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, schema)
				if err != nil {
					b.Fatal(err)
				}
				pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
				if err != nil {
					b.Fatal(err)
				}
				var d time.Duration
				for _, pid := range pids {
					d += cputime.OfPid(int(pid))
				}
				return d
			}
			var db0 time.Duration
			benchCycles(b, mode, st, hub, &cycleHooks{
				start: func() {
					trips.trips.Store(0)
					trips.stmts.Store(0)
					db0 = dbCPU()
				},
				stop: func() {
					n := float64(b.N)
					b.ReportMetric(float64(trips.stmts.Load())/n, "stmts/op")
					b.ReportMetric(float64(trips.trips.Load())/n, "trips/op")
					b.ReportMetric(float64((dbCPU()-db0).Nanoseconds())/n, "db-cpu-ns/op")
				},
			})
		})
	}
}

// cycleHooks run just before the timed cycles and just after them.
type cycleHooks struct{ start, stop func() }

// benchCycles serves the refund and gated graphs on st, with hub, and times
// refund cycles in mode: "serial" or "parallel".
func benchCycles(b *testing.B, mode string, st store.Store, hub *host.Hub, hooks *cycleHooks) {
	gopts := []graph.Option{graph.WithStore(storemetrics.Instrument(st)), graph.WithEvents(hub.Publish), graph.WithListeners(hub.Listening), graph.WithLease(30*time.Second, "")}
	refund, err := graphs.Refund(gopts...)
	if err != nil {
		b.Fatal(err)
	}
	gated, err := graphs.Gated(gopts...)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.WithGraph(refund.Erase()), server.WithGraph(gated.Erase()), server.WithEventHub(hub), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}
	c, err := client.New(ts.URL, client.WithHTTPClient(hc))
	if err != nil {
		b.Fatal(err)
	}
	var seq atomic.Int64
	cycle := func(ctx context.Context) {
		id := "b" + strconv.FormatInt(seq.Add(1), 10)
		res, err := c.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: id, Input: map[string]any{"amount": 150}, Granularity: "low"})
		if err != nil || res.Status != interlude.RunInterrupted {
			b.Fatalf("start: %v %v", res, err)
		}
		res, err = c.Resume(ctx, id, res.Interrupts[0].ID, map[string]any{"approved": true})
		if err != nil || res.Status != interlude.RunCompleted {
			b.Fatalf("answer: %v %v", res, err)
		}
	}
	ctx := context.Background()
	cycle(ctx) // warm the connection and the caches
	b.ReportAllocs()
	b.ResetTimer()
	if hooks != nil {
		hooks.start()
	}
	cpu := cputime.Process().Nanoseconds()
	if mode == "serial" {
		for range b.N {
			cycle(ctx)
		}
	} else {
		b.SetParallelism(32)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				cycle(ctx)
			}
		})
	}
	// Client and server share the process: this is the cycle's
	// whole CPU, as bench/load's machine column is.
	b.ReportMetric(float64(cputime.Process().Nanoseconds()-cpu)/float64(b.N), "cpu-ns/op")
	if hooks != nil {
		hooks.stop()
	}
}

// tripCounter is a pgx tracer that counts the statements a store sends and
// the round trips they take: a statement sent alone is one, and so is a batch.
type tripCounter struct{ trips, stmts atomic.Int64 }

func (c *tripCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.trips.Add(1)
	c.stmts.Add(1)
	return ctx
}

func (c *tripCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *tripCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.trips.Add(1)
	return ctx
}

func (c *tripCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.stmts.Add(1)
}

func (c *tripCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
