package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
	"github.com/interludehq/interlude/store/storetest"
)

// EnvDSN names the environment variable that holds the connection string of the
// database the tests may use; without it they skip.
const EnvDSN = "INTERLUDE_TEST_POSTGRES"

var (
	sharedOnce sync.Once
	sharedPool *pgxpool.Pool
	sharedErr  error
)

// testDSN returns the test database's connection string, or skips.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		t.Skip("Postgres store tests are off: set " + EnvDSN + " to a connection string to run them, e.g. " + EnvDSN + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	}
	return dsn
}

// pool returns a pool shared by the package's tests.
func pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dsn := testDSN(t)
	sharedOnce.Do(func() { sharedPool, sharedErr = pgxpool.New(context.Background(), dsn) })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedPool
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedPool != nil {
		sharedPool.Close()
	}
	os.Exit(code)
}

// freshSchema returns the name of a schema that does not exist yet, and drops it
// when the test ends.
func freshSchema(t testing.TB) string {
	t.Helper()
	p := pool(t)
	b := make([]byte, 6)
	rand.Read(b)
	name := "interlude_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		if _, err := p.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop test schema %s: %v", name, err)
		}
	})
	return name
}

func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := New(context.Background(), pool(t), WithSchema(freshSchema(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	testDSN(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t) }, storetest.Options{
		StepsKeepUpdatedAt: true,
		SetRecordFormat: func(st store.Store, threadID string, version int64, format int) error {
			s := st.(*Store)
			_, err := s.pool.Exec(context.Background(), `UPDATE `+pgx.Identifier{s.schema}.Sanitize()+`.records SET format = $1 WHERE thread_id = $2 AND version = $3`, format, threadID, version)
			return err
		},
		SetSnapshotFormat: func(st store.Store, threadID string, format int) error {
			s := st.(*Store)
			_, err := s.pool.Exec(context.Background(), `UPDATE `+pgx.Identifier{s.schema}.Sanitize()+`.snapshots SET format = $1 WHERE thread_id = $2`, format, threadID)
			return err
		},
		Reopen: func(t *testing.T, st store.Store) store.Store {
			s := st.(*Store)
			s.Close()
			again, err := New(context.Background(), pool(t), WithSchema(s.schema))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { again.Close() })
			return again
		},
	})
}

// TestConcurrentOpenOnEmptySchema starts two stores at once on a schema that does
// not exist: both must come up, and the migrations must be applied once.
func TestConcurrentOpenOnEmptySchema(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t)
	const n = 2
	var wg sync.WaitGroup
	start := make(chan struct{})
	stores := make([]*Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = Open(context.Background(), dsn, WithSchema(schema))
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	var rows, top int
	if err := pool(t).QueryRow(context.Background(), `SELECT count(*), max(version) FROM `+pgx.Identifier{schema}.Sanitize()+`.schema_migrations`).Scan(&rows, &top); err != nil {
		t.Fatal(err)
	}
	if rows != SchemaVersion || top != SchemaVersion {
		t.Errorf("schema_migrations has %d rows up to %d, want %d", rows, top, SchemaVersion)
	}
	// Both work, on the same data.
	ctx := context.Background()
	if err := stores[0].Append(ctx, store.Append{ThreadID: "t", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "step", Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	if v, err := stores[1].Version(ctx, "t"); v != 1 || err != nil {
		t.Errorf("the second store sees version %d, %v; want 1", v, err)
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	schema := freshSchema(t)
	for range 3 {
		s, err := New(context.Background(), pool(t), WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	var rows int
	if err := pool(t).QueryRow(context.Background(), `SELECT count(*) FROM `+pgx.Identifier{schema}.Sanitize()+`.schema_migrations`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != SchemaVersion {
		t.Errorf("schema_migrations has %d rows, want %d", rows, SchemaVersion)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	if _, err := s.pool.Exec(ctx, `INSERT INTO `+pgx.Identifier{s.schema}.Sanitize()+`.schema_migrations (version, name) VALUES ($1, 'future')`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err := New(ctx, s.pool, WithSchema(s.schema))
	if !errors.Is(err, interlude.ErrUnknownFormat) || !strings.Contains(err.Error(), "newer Interlude") {
		t.Fatalf("New over a newer schema: err = %v, want ErrUnknownFormat saying to run the newer Interlude", err)
	}
}

func TestSchemaNames(t *testing.T) {
	p := pool(t)
	ctx := context.Background()
	for _, bad := range []string{"", strings.Repeat("x", 64)} {
		if _, err := New(ctx, p, WithSchema(bad)); err == nil {
			t.Errorf("WithSchema(%q) was accepted", bad)
		}
	}
	// A name that needs quoting works, and is a separate store.
	odd := freshSchema(t) + `"; DROP TABLE x; --`
	t.Cleanup(func() { p.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{odd}.Sanitize()+" CASCADE") })
	a, err := New(ctx, p, WithSchema(odd))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := openTest(t)
	if err := a.Append(ctx, store.Append{ThreadID: "t", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "k", Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	if v, _ := b.Version(ctx, "t"); v != 0 {
		t.Errorf("a thread of one schema shows in another")
	}
}

func TestOpenBadDSN(t *testing.T) {
	testDSN(t)
	_, err := Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err == nil || !strings.Contains(err.Error(), "postgres store") {
		t.Fatalf("Open of an unreachable database: err = %v", err)
	}
}

// explain returns the plan of query, EXPLAINed with the given options.
func explain(t testing.TB, conn interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, options, query string, args ...any) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), "EXPLAIN ("+options+") "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// TestListUsesIndex proves from the plans that every listing can walk an index
// in order: with sequential scans, bitmap scans and sorts disabled, the planner
// still picks a plan with a Sort node unless an index gives the order. (On a
// small table Postgres rightly prefers to scan and sort; BenchmarkListInterrupted
// shows the plan it picks at a million threads.)
func TestListUsesIndex(t *testing.T) {
	s := openTest(t)
	tx := indexWalks(t, s)
	cursor := storekit.EncodeCursor(storekit.Cursor{ThreadID: "x"})
	for _, c := range []struct {
		q     store.Query
		index string
	}{
		{store.Query{Status: interlude.ThreadInterrupted}, "threads_inbox"},
		{store.Query{Status: interlude.ThreadInterrupted, Cursor: cursor}, "threads_inbox"},
		{store.Query{Status: interlude.ThreadInterrupted, Graph: "g"}, "threads_graph_inbox"},
		{store.Query{Status: interlude.ThreadInterrupted, Graph: "g", Cursor: cursor}, "threads_graph_inbox"},
		{store.Query{}, "threads_recent"},
		{store.Query{Cursor: cursor}, "threads_recent"},
	} {
		query, args, err := s.listQuery(c.q, 50)
		if err != nil {
			t.Fatal(err)
		}
		plan := explain(t, tx, "COSTS OFF", query, args...)
		if !walks(plan, c.index) || strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") {
			t.Errorf("List(%+v) does not walk %s in order:\n%s", c.q, c.index, plan)
		}
		if c.q.Cursor != "" && !regexp.MustCompile(`Index Cond: .*ROW\(updated_at, id\) < ROW\(`).MatchString(plan) {
			t.Errorf("List(%+v) does not seek to the cursor in the index:\n%s", c.q, plan)
		}
	}
	// Running and failed merge the threads of that stored status (walking the
	// index in order) with the few leased ones; BenchmarkListInterrupted shows
	// that the second branch starts from the leases table at a million threads.
	for _, c := range []struct {
		q     store.Query
		index string
	}{
		{store.Query{Status: interlude.ThreadFailed}, "threads_inbox"},
		{store.Query{Status: interlude.ThreadRunning, Graph: "g", Cursor: cursor}, "threads_graph_inbox"},
	} {
		query, args, err := s.listQuery(c.q, 50)
		if err != nil {
			t.Fatal(err)
		}
		plan := explain(t, tx, "COSTS OFF", query, args...)
		if !strings.Contains(plan, "Merge Append") || !walks(plan, c.index) {
			t.Errorf("List(%+v) does not merge an ordered walk of %s:\n%s", c.q, c.index, plan)
		}
	}
}

// walks reports whether plan scans index, in either direction: the listing
// indexes keep their times ascending and are walked backwards for the newest
// first.
func walks(plan, index string) bool {
	return strings.Contains(plan, "Index Scan using "+index) || strings.Contains(plan, "Index Scan Backward using "+index)
}

// indexWalks returns a transaction, rolled back when the test ends, whose
// plans avoid sequential scans, bitmap scans and sorts wherever they can: a plan
// that has one anyway cannot walk an index in order.
func indexWalks(t *testing.T, s *Store) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	for _, off := range []string{"enable_seqscan", "enable_bitmapscan", "enable_sort"} {
		if _, err := tx.Exec(ctx, "SET LOCAL "+off+" = off"); err != nil {
			t.Fatal(err)
		}
	}
	return tx
}

// TestExpiredUsesIndex checks that Expired walks the partial index of
// expiries in order, reading no thread without one.
func TestExpiredUsesIndex(t *testing.T) {
	s := openTest(t)
	tx := indexWalks(t, s)
	plan := explain(t, tx, "COSTS OFF", s.sql.expiredQuestions, time.Now().UnixNano(), 100, []string{"refund"})
	if !strings.Contains(plan, "Index Scan using threads_expiry") || strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") {
		t.Errorf("Expired does not walk threads_expiry in order:\n%s", plan)
	}
}

// TestHistoryWalksThePrimaryKeys checks that a page of history seeks into the
// primary keys of records and snapshots, sorting nothing and scanning no table.
func TestHistoryWalksThePrimaryKeys(t *testing.T) {
	s := openTest(t)
	tx := indexWalks(t, s)
	plan := explain(t, tx, "COSTS OFF", s.sql.history, "t", int64(10), int64(5))
	if !strings.Contains(plan, "Index Scan Backward using records_pkey") || !strings.Contains(plan, "Index Scan Backward using snapshots_pkey") ||
		strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") {
		t.Errorf("History does not walk the primary keys:\n%s", plan)
	}
}

// TestUnfinishedUsesIndex checks that Unfinished walks the listing index of the
// running threads in order, reading no thread of another status.
func TestUnfinishedUsesIndex(t *testing.T) {
	s := openTest(t)
	tx := indexWalks(t, s)
	for _, graphs := range [][]string{nil, {"refund"}} {
		plan := explain(t, tx, "COSTS OFF", s.sql.unfinished, 100, graphs)
		if !strings.Contains(plan, "using threads_inbox") || strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan on threads") {
			t.Errorf("Unfinished(%v) does not walk threads_inbox in order:\n%s", graphs, plan)
		}
	}
}

func TestAppendIsOneStatement(t *testing.T) {
	// The sixteen shapes of Append are valid SQL for Postgres: prepare each.
	s := openTest(t)
	ctx := context.Background()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for i, row := range s.sql.appends {
		for j, qs := range row {
			for k, ds := range qs {
				for l, q := range ds {
					name := fmt.Sprintf("append_%d_%d_%d_%d", i, j, k, l)
					if _, err := conn.Conn().Prepare(ctx, name, q); err != nil {
						t.Errorf("append statement (insert %d, snapshot %d, outbox %d, documents %d): %v\n%s", i, j, k, l, err, q)
					}
					conn.Conn().Deallocate(ctx, name) // the pool keeps the connection
				}
			}
		}
	}
}

// TestUpgradeFromSchemaVersion1 opens a store over a schema that a build of
// schema version 1 made: the leases and events tables are added.
func TestUpgradeFromSchemaVersion1(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	ident := pgx.Identifier{s.schema}.Sanitize()
	if err := s.Append(ctx, store.Append{ThreadID: "old", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "k", Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `DROP TABLE `+ident+`.leases, `+ident+`.events; ALTER TABLE `+ident+`.threads DROP COLUMN expires_at;
		DELETE FROM `+ident+`.schema_migrations WHERE version > 1`); err != nil {
		t.Fatal(err)
	}
	up, err := New(ctx, s.pool, WithSchema(s.schema))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	l, err := up.Lease(ctx, store.LeaseRequest{ThreadID: "old", Owner: "a", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := up.Meta(ctx, "old"); err != nil || m.Status != interlude.ThreadRunning {
		t.Fatalf("after the upgrade: %+v, %v", m, err)
	}
	l.Release(ctx)
}

// TestUpgradeIndexesExpiries opens a store over a schema of version 4, whose
// threads have no expiry column: the upgrade fills it from their pending
// questions, to the microsecond that timestamptz keeps, and Expired finds them.
func TestUpgradeIndexesExpiries(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	ident := pgx.Identifier{s.schema}.Sanitize()
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.UTC)
	ask := func(expires ...*time.Time) store.Meta {
		m := store.Meta{Graph: "g", Status: interlude.ThreadInterrupted}
		for i, e := range expires {
			m.Interrupts = append(m.Interrupts, interlude.Interruption{ID: fmt.Sprint("q", i), Node: "n", Message: "?", ExpiresAt: e})
		}
		return m
	}
	ptr := func(t time.Time) *time.Time { return &t }
	threads := map[string]store.Meta{
		"two":       ask(ptr(at.Add(time.Hour)), ptr(at.In(time.FixedZone("UTC+3", 3*3600))), nil),
		"earlier":   ask(ptr(at.Add(-1001 * time.Nanosecond))),
		"never":     ask(nil),
		"idle":      {Graph: "g", Status: interlude.ThreadIdle},
		"centuries": ask(ptr(at.Add(math.MaxInt64))),
	}
	for id, m := range threads {
		if err := s.Append(ctx, store.Append{ThreadID: id, Meta: m, Records: []store.Record{{Version: 1, Format: 1, Kind: "k", Data: []byte("x")}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, `ALTER TABLE `+ident+`.threads DROP COLUMN expires_at; DELETE FROM `+ident+`.schema_migrations WHERE version > 4`); err != nil {
		t.Fatal(err)
	}
	up, err := New(ctx, s.pool, WithSchema(s.schema))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	micros := func(t time.Time) *int64 { n := (t.UnixNano() + 500) / 1000 * 1000; return &n }
	want := map[string]*int64{"two": micros(at), "earlier": micros(at.Add(-1001 * time.Nanosecond)), "centuries": ptrInt(math.MaxInt64)}
	for id := range threads {
		var got *int64
		if err := s.pool.QueryRow(ctx, `SELECT expires_at FROM `+ident+`.threads WHERE id = $1`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if w := want[id]; (got == nil) != (w == nil) || got != nil && *got != *w {
			t.Errorf("%s: expires_at %v after the upgrade, want %v", id, deref(got), deref(w))
		}
	}
	ms, err := up.Expired(ctx, at.Add(time.Microsecond), nil, 0)
	if err != nil || len(ms) != 2 || ms[0].ThreadID != "earlier" || ms[1].ThreadID != "two" {
		t.Errorf("Expired after the upgrade = %+v, %v; want earlier, two", ms, err)
	}
}

func ptrInt(n int64) *int64 { return &n }

func deref(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}
