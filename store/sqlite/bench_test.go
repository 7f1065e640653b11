package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/cputime"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storetest"
)

// BenchmarkAppend measures one durable append of one 512-byte record, the
// store's share of a graph step: BEGIN IMMEDIATE, the version check, the record,
// the thread's row and its index entries, COMMIT with its fsync of the log
// (synchronous=FULL). Variants: also replacing a 4 KiB snapshot; appending round
// robin to 1000 threads, so each append touches other pages (and the background
// checkpoints copy more); synchronous=NORMAL, which skips the fsync; appends
// marked NoSync, which skip it too; and every fourth append durable, the rest
// NoSync, as a run of four steps commits by default.
func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct {
		name    string
		sync    string
		snap    bool
		threads int
		durable int // every durable-th append is durable, the others NoSync; 0: all durable
	}{
		{"sync=FULL", "FULL", false, 1, 0},
		{"sync=FULL/snapshot", "FULL", true, 1, 0},
		{"sync=FULL/threads=1000", "FULL", false, 1000, 0},
		{"sync=NORMAL", "NORMAL", false, 1, 0},
		{"sync=NORMAL/threads=1000", "NORMAL", false, 1000, 0},
		{"sync=FULL/nosync", "FULL", false, 1, 1 << 62},
		{"sync=FULL/durable=1in4", "FULL", false, 1, 4},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := openTemp(b, WithSynchronous(c.sync))
			ctx := context.Background()
			data := make([]byte, 512)
			snap := make([]byte, 4096)
			meta := store.Meta{Graph: "bench", Status: interlude.ThreadIdle}
			ids := make([]string, c.threads)
			vers := make([]int64, c.threads)
			for i := range ids {
				ids[i] = fmt.Sprintf("bench-thread-%04d", i)
			}
			n := 0
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				i := n % c.threads
				n++
				v := vers[i]
				a := store.Append{ThreadID: ids[i], Expect: v, Meta: meta,
					Records: []store.Record{{Version: v + 1, Format: 1, Kind: "step", Data: data}}}
				a.NoSync = c.durable > 0 && n%c.durable != 0
				if c.snap {
					a.Snapshot = &store.Snapshot{Version: v + 1, Format: 1, Data: snap}
				}
				if err := s.Append(ctx, a); err != nil {
					b.Fatal(err)
				}
				vers[i]++
			}
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
			}
		})
	}
}

// BenchmarkDriverCommitFloor measures the cheapest commits the driver makes
// with the writer's settings (WAL, synchronous=NORMAL, no fsync), on a file
// without the store's schema: one row of one integer, and a transaction that
// updates one row of a small table and inserts one 512-byte row into another,
// the least a graph step can write. Compare it with BenchmarkAppend's
// sync=FULL/nosync: the step's commit as the store makes it.
func BenchmarkDriverCommitFloor(b *testing.B) {
	open := func(b *testing.B, schema ...string) *sql.DB {
		db, err := sql.Open("sqlite", b.TempDir()+"/floor.db?_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate&_pragma=wal_autocheckpoint(0)")
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		b.Cleanup(func() { db.Close() })
		for _, q := range schema {
			if _, err := db.Exec(q); err != nil {
				b.Fatal(err)
			}
		}
		return db
	}
	prepare := func(b *testing.B, db *sql.DB, q string) *sql.Stmt {
		st, err := db.Prepare(q)
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	b.Run("one-integer", func(b *testing.B) {
		db := open(b, `CREATE TABLE kv (k INTEGER PRIMARY KEY, v INTEGER)`)
		ins := prepare(b, db, `INSERT INTO kv (v) VALUES (?)`)
		for i := 0; b.Loop(); i++ {
			if _, err := ins.Exec(i); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("row-and-record", func(b *testing.B) {
		db := open(b, `CREATE TABLE t (id TEXT PRIMARY KEY, version INTEGER NOT NULL)`,
			`CREATE TABLE r (id TEXT NOT NULL, version INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (id, version))`,
			`INSERT INTO t VALUES ('t', 0)`)
		upd := prepare(b, db, `UPDATE t SET version = ? WHERE id = 't'`)
		ins := prepare(b, db, `INSERT INTO r VALUES ('t', ?, ?)`)
		data := make([]byte, 512)
		for i := 1; b.Loop(); i++ {
			tx, err := db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tx.Stmt(upd).Exec(i); err != nil {
				b.Fatal(err)
			}
			if _, err := tx.Stmt(ins).Exec(i, data); err != nil {
				b.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAppendConcurrent appends from 64 goroutines at once, each to
// threads of its own, every append durable (the others' share its group and
// its fsync), with a snapshot on every fourth, as concurrent runs pausing at
// their questions do: what the group commit costs per append under load.
func BenchmarkAppendConcurrent(b *testing.B) {
	s := openTemp(b)
	ctx := context.Background()
	data := make([]byte, 512)
	snap := make([]byte, 2048)
	meta := store.Meta{Graph: "bench", Status: interlude.ThreadIdle}
	var worker atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(32)
	cpu0 := cputime.Process()
	b.RunParallel(func(pb *testing.PB) {
		w := worker.Add(1)
		ids := make([]string, 16)
		vers := make([]int64, len(ids))
		for i := range ids {
			ids[i] = fmt.Sprintf("bench-%02d-%02d", w, i)
		}
		for n := 0; pb.Next(); n++ {
			i := n % len(ids)
			v := vers[i]
			a := store.Append{ThreadID: ids[i], Expect: v, Meta: meta,
				Records: []store.Record{{Version: v + 1, Format: 1, Kind: "step", Data: data}}}
			if n%4 == 0 {
				a.Snapshot = &store.Snapshot{Version: v + 1, Format: 1, Data: snap}
			}
			if err := s.Append(ctx, a); err != nil {
				b.Error(err)
				return
			}
			vers[i]++
		}
	})
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkLoad measures loading a thread: its facts, snapshot and the 5
// records after it.
func BenchmarkLoad(b *testing.B) { storetest.BenchmarkLoad(b, openTemp(b)) }

// BenchmarkVersion measures the cheap version check a runtime makes before
// trusting a cached thread.
func BenchmarkVersion(b *testing.B) {
	s := openTemp(b)
	ctx := context.Background()
	if err := s.Append(ctx, store.Append{ThreadID: "t", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
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

// SeedSynthetic writes the first n storetest.SyntheticThread rows straight into
// the threads table, 500 rows per INSERT in one transaction, then runs ANALYZE
// so the planner knows the table's shape. It writes no records: it exists to
// measure listings.
func SeedSynthetic(tb testing.TB, s *Store, n int) {
	tb.Helper()
	ctx := context.Background()
	const batch = 500
	err := s.exclusive(ctx, func(ctx context.Context) error {
		tx, err := s.wc.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var full *sql.Stmt
		for start := 0; start < n; start += batch {
			rows := min(batch, n-start)
			q := "INSERT INTO threads (id, graph, status, version, interrupts, created_at, updated_at) VALUES " +
				strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?),", rows), ",")
			stmt := full
			if rows != batch || full == nil {
				if stmt, err = tx.PrepareContext(ctx, q); err != nil {
					return err
				}
				if rows == batch {
					full = stmt
				}
			}
			args := make([]any, 0, rows*7)
			for i := start; i < start+rows; i++ {
				m := storetest.SyntheticThread(i)
				args = append(args, m.ThreadID, m.Graph, string(m.Status), m.Version, storetest.InterruptsJSON(m), m.CreatedAt.UnixNano(), m.UpdatedAt.UnixNano())
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, "ANALYZE"); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Checkpoint(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkListInterrupted times the inbox query over storetest.BenchThreads()
// threads (a million unless INTERLUDE_BENCH_THREADS says otherwise) and logs the
// query plan that proves it walks the index.
func BenchmarkListInterrupted(b *testing.B) {
	n := storetest.BenchThreads()
	s := openTemp(b)
	start := time.Now()
	SeedSynthetic(b, s, n)
	size, _ := s.Size()
	b.Logf("seeded %d threads in %v (%d MB on disk)", n, time.Since(start).Round(time.Millisecond), size>>20)
	for _, q := range []store.Query{{Status: interlude.ThreadInterrupted}, {Status: interlude.ThreadInterrupted, Graph: "graph-3"}} {
		query, args, err := listQuery(q, 50)
		if err != nil {
			b.Fatal(err)
		}
		plan := explain(b, s, query, args...)
		b.Logf("EXPLAIN QUERY PLAN %s\n%s", query, plan)
		if !strings.Contains(plan, "USING INDEX") || strings.Contains(plan, "TEMP B-TREE") {
			b.Fatalf("the inbox query does not walk an index in order:\n%s", plan)
		}
	}
	storetest.BenchmarkList(b, s, n)
}

// BenchmarkAppendPairsParallel appends from many goroutines at once (with
// -cpu 2, 64 of them), each a NoSync append then a durable one to a thread of
// its own, as an answer's claim and end do, and reports the pairs a second,
// the 99th percentile of a pair's latency, the groups and log syncs a pair
// and the process's CPU a pair: how well the group commit batches under load.
func BenchmarkAppendPairsParallel(b *testing.B) {
	s := openTemp(b)
	ctx := context.Background()
	data := make([]byte, 512)
	meta := store.Meta{Graph: "bench", Status: interlude.ThreadRunning}
	var worker atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(32)
	groups0, syncs0 := s.commits.groups.Load(), syncs(s)
	cpu0 := cputime.Process()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		id := fmt.Sprintf("pair-%03d", worker.Add(1))
		var v int64
		var mine []time.Duration
		for pb.Next() {
			t0 := time.Now()
			for _, noSync := range []bool{true, false} {
				if err := s.Append(ctx, store.Append{ThreadID: id, Expect: v, Meta: meta, NoSync: noSync,
					Records: []store.Record{{Version: v + 1, Format: 1, Kind: "step", Data: data}}}); err != nil {
					b.Error(err)
					return
				}
				v++
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	el := time.Since(start)
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(b.N)/el.Seconds(), "pairs/s")
		b.ReportMetric(float64(s.commits.groups.Load()-groups0)/float64(b.N), "groups/op")
		b.ReportMetric(float64(syncs(s)-syncs0)/float64(b.N), "syncs/op")
		b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
