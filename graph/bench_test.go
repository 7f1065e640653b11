package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
	"github.com/interludehq/interlude/store/sqlite"
)

type counter struct {
	N int `json:"n"`
}

func stores(b *testing.B) map[string]func() store.Store {
	return map[string]func() store.Store{
		"memory": func() store.Store { return memory.New() },
		"sqlite": func() store.Store {
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		},
	}
}

// BenchmarkChain10 runs a 10-node chain on a new thread per iteration and reports
// the cost per step.
func BenchmarkChain10(b *testing.B) {
	for _, name := range []string{"memory", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			g := graph.New[counter]()
			prev := graph.Start
			for i := range 10 {
				n := "n" + strconv.Itoa(i)
				g.AddNode(n, func(ctx context.Context, s counter) (counter, error) { return counter{N: s.N + 1}, nil })
				g.AddEdge(prev, n)
				prev = n
			}
			app, err := g.Compile(graph.WithStore(stores(b)[name]()))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				res, err := app.Invoke(ctx, "t"+strconv.Itoa(i), graph.Input(counter{}))
				if err != nil || res.Values.N != 10 {
					b.Fatal(err, res)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10), "ns/step")
		})
	}
}

// BenchmarkInterruptCycle pauses and resumes a one-node refund graph on a new thread
// per iteration.
func BenchmarkInterruptCycle(b *testing.B) {
	for _, name := range []string{"memory", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			app := refundGraph(b, stores(b)[name]())
			ctx := context.Background()
			approve := graph.Resume(interlude.Resolve(json.RawMessage(`{"approved":true}`)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				id := "t" + strconv.Itoa(i)
				if res, err := app.Invoke(ctx, id, graph.Input(refundState{Amount: 150})); err != nil || res.Status != interlude.RunInterrupted {
					b.Fatal(err, res)
				}
				if res, err := app.Invoke(ctx, id, approve); err != nil || res.Values.Outcome != "refunded" {
					b.Fatal(err, res)
				}
			}
		})
	}
}

type transcript struct {
	Messages []string `json:"messages" graph:"append"`
}

// BenchmarkGrowth appends one 200-byte message per turn to one thread on SQLite and
// reports stored bytes over transcript bytes, and the time of a turn at the start
// and at the end of the run.
func BenchmarkGrowth(b *testing.B) {
	for _, turns := range []int{200, 2000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			for range b.N {
				ratio, payload, first, last := growth(b, turns)
				b.ReportMetric(ratio, "disk/transcript")
				b.ReportMetric(payload, "thread/transcript")
				b.ReportMetric(first, "µs/turn-first-decile")
				b.ReportMetric(last, "µs/turn-last-decile")
			}
		})
	}
}

// growth reports the file's bytes on disk over the transcript's JSON bytes (the file
// includes SQLite's fixed cost of about 36 KB for its schema and empty tables), the
// thread's own bytes (its records and snapshots as stored) over the transcript's, and
// the mean turn time of the first and last tenth of the turns.
func growth(b *testing.B, turns int) (ratio, payload, firstUS, lastUS float64) {
	path := filepath.Join(b.TempDir(), "growth.db")
	st, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	g := graph.New[transcript]()
	g.AddNode("turn", func(ctx context.Context, s transcript) (transcript, error) { return transcript{}, nil })
	g.AddEdge(graph.Start, "turn")
	app, err := g.Compile(graph.WithStore(st))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	lorem := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 5)
	times := make([]time.Duration, turns)
	var final []string
	for t := range turns {
		msg := fmt.Sprintf("m%d %s", t, lorem)[:200]
		start := time.Now()
		res, err := app.Invoke(ctx, "growth", graph.Input(transcript{Messages: []string{msg}}))
		times[t] = time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		final = res.Values.Messages
	}
	if err := st.Checkpoint(); err != nil {
		b.Fatal(err)
	}
	size, err := st.Size()
	if err != nil {
		b.Fatal(err)
	}
	recs, err := st.Records(ctx, "growth", 0, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	var own int
	for _, r := range recs {
		own += len(r.Data)
	}
	// Every snapshot kept is the base of the page of the record after it.
	snaps := map[int64]int{}
	for _, r := range recs {
		p, err := st.History(ctx, "growth", r.Version+1, 1)
		if err != nil {
			b.Fatal(err)
		}
		if p.Base != nil {
			snaps[p.Base.Version] = len(p.Base.Data)
		}
	}
	if l, err := st.Load(ctx, "growth"); err != nil {
		b.Fatal(err)
	} else if l.Snapshot != nil {
		snaps[l.Snapshot.Version] = len(l.Snapshot.Data)
	}
	for _, n := range snaps {
		own += n
	}
	tj, _ := json.Marshal(final)
	decile := turns / 10
	return float64(size) / float64(len(tj)), float64(own) / float64(len(tj)), mean(times[:decile]), mean(times[turns-decile:])
}

func mean(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum.Microseconds()) / float64(len(ds))
}
