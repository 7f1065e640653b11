package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

// DefaultBenchThreads is how many threads the listing benchmarks seed unless
// INTERLUDE_BENCH_THREADS says otherwise: the million the design promises to
// list fast.
const DefaultBenchThreads = 1_000_000

// BenchThreads returns how many threads listing benchmarks seed: the value of
// INTERLUDE_BENCH_THREADS if it is a positive number, else DefaultBenchThreads.
func BenchThreads() int {
	if n, err := strconv.Atoi(os.Getenv("INTERLUDE_BENCH_THREADS")); err == nil && n > 0 {
		return n
	}
	return DefaultBenchThreads
}

// Synthetic threads: one in ten is interrupted, one in ten failed, the rest idle;
// seven graphs; timestamps one millisecond apart in groups of three equal ones.
const (
	syntheticGraphs = 7
	syntheticGroup  = 3
)

var syntheticBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// SyntheticThread returns the facts of the i-th synthetic thread that store
// benchmarks seed in bulk (each store with its fastest bulk insert, since
// appending a million threads one by one would dominate the benchmark). Its
// Version is 1 + i%5; seeders write the thread row only, not records.
func SyntheticThread(i int) store.Meta {
	at := syntheticBase.Add(time.Duration(i/syntheticGroup) * time.Millisecond)
	m := store.Meta{
		ThreadID:  fmt.Sprintf("thread-%08d", i),
		Graph:     fmt.Sprintf("graph-%d", i%syntheticGraphs),
		Status:    interlude.ThreadIdle,
		Version:   int64(1 + i%5),
		CreatedAt: at.Add(-time.Hour),
		UpdatedAt: at,
	}
	switch i % 10 {
	case 0:
		m.Status = interlude.ThreadInterrupted
		m.Interrupts = []interlude.Interruption{{
			ID: fmt.Sprintf("int_%08x", i), Node: "approve", Path: []string{"approve", "call_1"}, ToolCallID: "call_1",
			Message: "Approve a refund of $150 for order " + strconv.Itoa(i) + "?", Reason: interlude.ReasonToolApproval,
			Value:     json.RawMessage(`{"amount":150,"currency":"EUR"}`),
			Schema:    json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}`),
			CreatedAt: at,
		}}
	case 1:
		m.Status = interlude.ThreadFailed
	}
	return m
}

// InterruptsJSON encodes m's interrupts as stores keep them: a JSON array, or nil
// when there are none. Seeders use it to write rows directly.
func InterruptsJSON(m store.Meta) []byte {
	if len(m.Interrupts) == 0 {
		return nil
	}
	b, err := json.Marshal(m.Interrupts)
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkList times inbox listings on s, which must hold exactly the first n
// synthetic threads (SyntheticThread(0) .. SyntheticThread(n-1)):
//
//   - interrupted: the first page (50) of interrupted threads, newest first;
//   - interrupted+graph: the same for one graph;
//   - interrupted/deep: a page 10,000 threads into the listing, through a cursor;
//   - all: the first page of every thread, with no filter (no index serves this
//     order; it is here to show the cost, not as a target).
func BenchmarkList(b *testing.B, s store.Store, n int) {
	ctx := context.Background()
	check := func(b *testing.B, q store.Query) {
		b.Helper()
		p, err := s.List(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		want := min(storekit.PageLimit(q), n/10)
		if q.Graph != "" {
			want = min(want, n/10/syntheticGraphs)
		}
		if q.Status == "" {
			want = min(storekit.PageLimit(q), n)
		}
		if len(p.Threads) < want {
			b.Fatalf("List(%+v) returned %d threads, want %d: is the store seeded with %d synthetic threads?", q, len(p.Threads), want, n)
		}
		for _, m := range p.Threads {
			if q.Status != "" && m.Status != q.Status || q.Graph != "" && m.Graph != q.Graph {
				b.Fatalf("List(%+v) returned %+v", q, m)
			}
		}
	}
	run := func(name string, q store.Query) {
		b.Run(name, func(b *testing.B) {
			check(b, q)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.List(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("interrupted", store.Query{Status: interlude.ThreadInterrupted, Limit: 50})
	run("interrupted+graph", store.Query{Status: interlude.ThreadInterrupted, Graph: "graph-3", Limit: 50})
	if n/10 > 10_050 {
		q := store.Query{Status: interlude.ThreadInterrupted, Limit: 1000}
		for range 10 {
			p, err := s.List(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			q.Cursor = p.NextCursor
		}
		q.Limit = 50
		run("interrupted/deep", q)
	}
	run("all", store.Query{Limit: 50})
}

// BenchmarkLoad measures loading a thread of s: its facts, its snapshot and
// the 5 records after it.
func BenchmarkLoad(b *testing.B, s store.Store) {
	ctx := context.Background()
	meta := store.Meta{Graph: "bench", Status: interlude.ThreadIdle}
	for v := range int64(10) {
		a := store.Append{ThreadID: "t", Expect: v, Meta: meta, Records: []store.Record{{Version: v + 1, Format: 1, Kind: "step", Data: make([]byte, 512)}}}
		if v == 4 {
			a.Snapshot = &store.Snapshot{Version: 5, Format: 1, Data: make([]byte, 4096)}
		}
		if err := s.Append(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		l, err := s.Load(ctx, "t")
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Records) != 5 {
			b.Fatalf("loaded %d records, want the 5 after the snapshot", len(l.Records))
		}
	}
}
