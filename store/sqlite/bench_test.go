package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/interludehq/interlude/store"
)

// BenchmarkAppend measures one durable append of one 512-byte record to a
// thread, the store's share of a graph step: BEGIN IMMEDIATE, the version check,
// the record, the thread row, COMMIT with its fsync (synchronous=FULL). The
// snapshot variant also replaces a 4 KiB snapshot, as a step that snapshots does.
func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct {
		name string
		sync string
		snap bool
	}{
		{"sync=FULL", "FULL", false},
		{"sync=FULL/snapshot", "FULL", true},
		{"sync=NORMAL", "NORMAL", false},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := openTemp(b, WithSynchronous(c.sync))
			ctx := context.Background()
			data := make([]byte, 512)
			snap := make([]byte, 4096)
			meta := store.Meta{Graph: "bench", Status: store.StatusRunning}
			var v int64
			b.ReportAllocs()
			for b.Loop() {
				a := store.Append{ThreadID: "bench-thread", Expect: v, Meta: meta,
					Records: []store.Record{{Version: v + 1, Format: 1, Kind: "step", Data: data}}}
				if c.snap {
					a.Snapshot = &store.Snapshot{Version: v + 1, Format: 1, Data: snap}
				}
				if err := s.Append(ctx, a); err != nil {
					b.Fatal(err)
				}
				v++
			}
			size, _ := s.Size()
			b.ReportMetric(float64(size)/float64(v), "disk-B/append")
		})
	}
}

// BenchmarkLoad measures loading a thread: its facts, snapshot and the records
// after it (here 5).
func BenchmarkLoad(b *testing.B) {
	s := openTemp(b)
	ctx := context.Background()
	meta := store.Meta{Graph: "bench", Status: store.StatusRunning}
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
		if err != nil || len(l.Records) != 5 {
			b.Fatal(fmt.Sprint(err, len(l.Records)))
		}
	}
}

// BenchmarkVersion measures the cheap version check a runtime makes before
// trusting a cached thread.
func BenchmarkVersion(b *testing.B) {
	s := openTemp(b)
	ctx := context.Background()
	if err := s.Append(ctx, store.Append{ThreadID: "t", Meta: store.Meta{Graph: "g", Status: store.StatusIdle},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "step", Data: []byte("x")}}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Version(ctx, "t"); err != nil {
			b.Fatal(err)
		}
	}
}
