package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/cputime"
	"github.com/interludehq/interlude/server"
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
		})
	}
}
