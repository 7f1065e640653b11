package notify_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/cputime"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/sqlite"
)

// BenchmarkOutboxCycle measures one cycle (start a thread that asks, answer
// it) on SQLite by 64 clients, without notifications and with the outbox and
// a dispatcher delivering every notice to a local webhook receiver; a
// cycle's time includes delivering its notices (the timer stops once the
// receiver has them all), and the benchmark checks that each notice reached
// the receiver exactly once. Compare ns/op and cpu-ns/op (the process's CPU,
// the receiver's included, per cycle) of the two.
func BenchmarkOutboxCycle(b *testing.B) {
	for _, notifying := range []bool{false, true} {
		b.Run(fmt.Sprintf("notify=%v", notifying), func(b *testing.B) {
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			var (
				mu     sync.Mutex
				seen   = map[string]int{}
				want   = -1 // once known, how many notices the cycles wrote
				caught = make(chan struct{})
			)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				mu.Lock()
				seen[r.Header.Get("webhook-id")]++
				if len(seen) == want {
					close(caught)
				}
				mu.Unlock()
			}))
			defer srv.Close()
			opts := []graph.Option{graph.WithStore(st), graph.WithName("refund")}
			if notifying {
				opts = append(opts, graph.WithOutbox())
			}
			g := graph.New[approval]()
			g.AddNode("approve", approvalNode)
			g.AddEdge(graph.Start, "approve")
			app, err := g.Compile(opts...)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			var d *notify.Dispatcher
			done := make(chan struct{})
			if notifying {
				w, err := notify.NewWebhook(notify.WebhookConfig{URL: srv.URL, Secret: secret}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if d, err = notify.New(st, []notify.Destination{w}); err != nil {
					b.Fatal(err)
				}
				go func() { d.Run(ctx); close(done) }()
			} else {
				close(done)
			}
			var n atomic.Int64
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0))) // 64 clients: RunParallel runs parallelism × GOMAXPROCS
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Process()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := fmt.Sprint("t", n.Add(1))
					if _, err := app.Invoke(ctx, id, graph.Input(approval{Amount: 1})); err != nil {
						b.Error(err)
						return
					}
					if _, err := app.Invoke(ctx, id, graph.Resume(interlude.Resolve(true))); err != nil {
						b.Error(err)
						return
					}
					if d != nil {
						d.Wake()
					}
				}
			})
			if notifying {
				// The cost of a cycle includes delivering its notices: wait
				// until the receiver has them all.
				mu.Lock()
				if want = int(2 * n.Load()); len(seen) >= want {
					close(caught)
				}
				mu.Unlock()
				<-caught
			}
			b.StopTimer()
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
			cancel()
			<-done
			ctx = context.Background()
			if notifying {
				for {
					k, err := d.DeliverDue(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if k == 0 {
						break
					}
				}
				pending, _ := st.Notices(ctx, store.NoticeQuery{State: store.NoticePending, Limit: 1})
				mu.Lock()
				for id, c := range seen {
					if c != 1 {
						b.Errorf("notice %s delivered %d times", id, c)
					}
				}
				if want := int(2 * n.Load()); len(seen) != want || len(pending) != 0 {
					b.Errorf("%d notices delivered, want %d; %d still pending", len(seen), want, len(pending))
				}
				mu.Unlock()
			}
		})
	}
}

// BenchmarkDeliver measures what a dispatcher spends on one notice, apart from
// writing it: b.N questions are raised on SQLite first (one notice each), then
// a running dispatcher, woken once, claims them, posts each to a local
// webhook receiver and records the outcomes; the timer stops once the
// receiver has them all, and the benchmark checks that each arrived once.
// allocs/op and cpu-ns/op are per notice, the receiver's included.
func BenchmarkDeliver(b *testing.B) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var (
		mu     sync.Mutex
		seen   = map[string]int{}
		caught = make(chan struct{})
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen[r.Header.Get("webhook-id")]++
		if len(seen) == b.N {
			close(caught)
		}
		mu.Unlock()
	}))
	defer srv.Close()
	g := graph.New[approval]()
	g.AddNode("approve", approvalNode)
	g.AddEdge(graph.Start, "approve")
	app, err := g.Compile(graph.WithStore(st), graph.WithName("refund"), graph.WithOutbox())
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var next atomic.Int64
	var writers sync.WaitGroup
	for range 16 {
		writers.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if _, err := app.Invoke(ctx, fmt.Sprint("t", i), graph.Input(approval{Amount: 1})); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	writers.Wait()
	w, err := notify.NewWebhook(notify.WebhookConfig{URL: srv.URL, Secret: secret}, nil)
	if err != nil {
		b.Fatal(err)
	}
	d, err := notify.New(st, []notify.Destination{w}, notify.WithPoll(time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	go func() { d.Run(ctx); close(done) }()
	<-caught
	cancel()
	<-done // the last outcomes are recorded
	b.StopTimer()
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	for id, c := range seen {
		if c != 1 {
			b.Errorf("notice %s delivered %d times", id, c)
		}
	}
	if pending, _ := st.Notices(context.Background(), store.NoticeQuery{State: store.NoticePending, Limit: 1}); len(pending) != 0 {
		b.Errorf("notices still pending after the run")
	}
}
