package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
	"github.com/interludehq/interlude/store/storetest"
)

func openTemp(t testing.TB, opts ...Option) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "interlude.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// formatHooks rewrite stored formats behind the store's back, as a newer build
// would have written them.
var formatHooks = storetest.Options{
	StepsKeepUpdatedAt: true,
	SetRecordFormat: func(st store.Store, threadID string, version int64, format int) error {
		return writerExec(st.(*Store), `UPDATE records SET format = ? WHERE thread_id = ? AND version = ?`, format, threadID, version)
	},
	SetSnapshotFormat: func(st store.Store, threadID string, format int) error {
		return writerExec(st.(*Store), `UPDATE snapshots SET format = ? WHERE thread_id = ?`, format, threadID)
	},
	Reopen: func(t *testing.T, st store.Store) store.Store {
		s := st.(*Store)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := Open(s.path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { again.Close() })
		return again
	},
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) }, formatHooks)
}

func TestConformanceSynchronousNormal(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t, WithSynchronous("normal"), WithReadConns(1)) }, formatHooks)
}

// writerExec runs query on the writer's connection between two groups, as
// a write of another process would run between the store's commits.
func writerExec(s *Store, query string, args ...any) error {
	return s.exclusive(context.Background(), func(ctx context.Context) error {
		_, err := s.wc.ExecContext(ctx, query, args...)
		return err
	})
}

// writerQueryRow reads one row on the writer's connection between two groups.
func writerQueryRow(s *Store, query string, args []any, dest ...any) error {
	return s.exclusive(context.Background(), func(ctx context.Context) error {
		return s.wc.QueryRowContext(ctx, query, args...).Scan(dest...)
	})
}

func pragma(t *testing.T, s *Store, name string) string {
	t.Helper()
	var v string
	if err := writerQueryRow(s, "PRAGMA "+name, nil, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPragmas(t *testing.T) {
	s := openTemp(t)
	for name, want := range map[string]string{"journal_mode": "wal", "synchronous": "1", "foreign_keys": "1", "busy_timeout": "5000", "temp_store": "2"} {
		if got := pragma(t, s, name); got != want {
			t.Errorf("PRAGMA %s = %s, want %s", name, got, want)
		}
	}
	n := openTemp(t, WithSynchronous("NORMAL"))
	if got := pragma(t, n, "synchronous"); got != "1" {
		t.Errorf("WithSynchronous(NORMAL): synchronous = %s, want 1", got)
	}
	var qo int
	if err := s.r.QueryRow("PRAGMA query_only").Scan(&qo); err != nil || qo != 1 {
		t.Errorf("read pool query_only = %d, %v; want 1", qo, err)
	}
}

func TestOpenRefusesBadArguments(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		path string
		opts []Option
	}{
		{"", nil},
		{":memory:", nil},
		{"file:x.db", nil},
		{filepath.Join(dir, "a.db?mode=ro"), nil},
		{filepath.Join(dir, "b.db"), []Option{WithSynchronous("OFF")}},
		{filepath.Join(dir, "c.db"), []Option{WithReadConns(0)}},
		{filepath.Join(dir, "no-such-dir", "d.db"), nil},
	} {
		if s, err := Open(c.path, c.opts...); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", c.path)
		} else if !strings.Contains(err.Error(), "sqlite") {
			t.Errorf("Open(%q): error does not say where it comes from: %v", c.path, err)
		}
	}
}

func TestOpenSaysWhyAFileCannotBeOpened(t *testing.T) {
	dir := t.TempDir()
	notADB := filepath.Join(dir, "notadb.db")
	if err := os.WriteFile(notADB, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const dirHint = "does its directory exist"
	for _, c := range []struct {
		name, path, want, not string
		unknownFormat         bool
	}{
		{"a file that is not a database", notADB, "is not an Interlude SQLite database (it is a file of another kind); choose another path", dirHint, true},
		{"a missing directory", filepath.Join(dir, "no-such-dir", "d.db"), dirHint, "not an Interlude SQLite database", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(c.path)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded", c.path)
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.not) || errors.Is(err, interlude.ErrUnknownFormat) != c.unknownFormat {
				t.Fatalf("Open(%q): %v", c.path, err)
			}
		})
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	for range 3 {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var n, v int
		if err := s.r.QueryRow(`SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		if n != SchemaVersion || v != SchemaVersion {
			t.Errorf("schema_migrations has %d rows up to %d, want %d", n, v, SchemaVersion)
		}
		s.Close()
	}
}

func TestConcurrentOpenOfNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "race.db")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	start := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			<-start
			s, err := Open(path)
			if err != nil {
				errs <- err
				return
			}
			errs <- s.Close()
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writerExec(s, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 0)`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(path)
	if !errors.Is(err, interlude.ErrUnknownFormat) || !strings.Contains(err.Error(), "newer Interlude") {
		t.Fatalf("Open of a newer schema: err = %v, want ErrUnknownFormat saying to use a newer Interlude", err)
	}
}

func TestSizeAndCheckpoint(t *testing.T) {
	s := openTemp(t)
	before, err := s.Size()
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 1<<20)
	if err := s.Append(context.Background(), store.Append{ThreadID: "t", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "step", Data: big}}}); err != nil {
		t.Fatal(err)
	}
	after, err := s.Size()
	if err != nil {
		t.Fatal(err)
	}
	if after < before+1<<20 {
		t.Errorf("Size grew from %d to %d after appending 1 MiB", before, after)
	}
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	checkpointed, err := s.Size()
	if err != nil {
		t.Fatal(err)
	}
	if checkpointed < 1<<20 || checkpointed > after {
		t.Errorf("Size after Checkpoint = %d (before %d)", checkpointed, after)
	}
}

// TestListUsesIndex proves from the query plan that an inbox page walks an index
// in order: no full scan, no sort.
func TestListUsesIndex(t *testing.T) {
	s := openTemp(t)
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
		query, args, err := listQuery(c.q, 50)
		if err != nil {
			t.Fatal(err)
		}
		plan := explain(t, s, query, args...)
		if !strings.Contains(plan, "USING INDEX "+c.index) || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("List(%+v) does not walk %s in order:\n%s", c.q, c.index, plan)
		}
		if c.q.Cursor != "" && !strings.Contains(plan, "(updated_at,id)<(?,?)") {
			t.Errorf("List(%+v) does not seek to the cursor:\n%s", c.q, plan)
		}
	}
}

// TestHistoryWalksThePrimaryKeys checks that a page of history seeks into the
// primary keys of records and snapshots and walks them in order, so its cost
// does not depend on the thread's length.
func TestHistoryWalksThePrimaryKeys(t *testing.T) {
	s := openTemp(t)
	for name, query := range map[string]string{"page": historyPageSQL, "base": historyBaseSQL} {
		plan := explain(t, s, query, "t", 10, 5)
		if !strings.Contains(plan, "PRIMARY KEY (thread_id=? AND version<?)") && !strings.Contains(plan, "INDEX sqlite_autoindex_snapshots_1 (thread_id=? AND version<?)") ||
			strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("the %s query does not walk the primary key from the version:\n%s", name, plan)
		}
	}
}

// TestDocumentListingsUseTheirKeys checks that a listing of one thread's
// documents seeks into the primary key, by thread and kind, and sorts only
// those, and that a listing across threads walks documents_kind in order.
func TestDocumentListingsUseTheirKeys(t *testing.T) {
	s := openTemp(t)
	plan := explain(t, s, selThreadDocumentsSQL, "k", "t", 10, 0)
	if !strings.Contains(plan, "PRIMARY KEY (thread_id=? AND kind=?)") || strings.Contains(plan, "documents_kind") {
		t.Errorf("a thread's listing does not seek into the primary key by thread and kind:\n%s", plan)
	}
	plan = explain(t, s, selDocumentsSQL, "k", 10, 0)
	if !strings.Contains(plan, "USING INDEX documents_kind (kind=?)") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("a listing across threads does not walk documents_kind in order:\n%s", plan)
	}
}

func explain(t testing.TB, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.r.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "\n")
}

func TestWriterDoesNotCheckpoint(t *testing.T) {
	s := openTemp(t)
	if got := pragma(t, s, "wal_autocheckpoint"); got != "0" {
		t.Errorf("the writer's wal_autocheckpoint = %s, want 0 (the checkpointer does it)", got)
	}
}

// appendN makes threads new threads named prefix-NNN and appends steps records
// to each.
func appendN(t *testing.T, s *Store, prefix string, threads, steps int) {
	t.Helper()
	ctx := context.Background()
	for v := range int64(steps) {
		for i := range threads {
			if err := s.Append(ctx, store.Append{ThreadID: fmt.Sprintf("%s-%03d", prefix, i), Expect: v, Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
				Records: []store.Record{{Version: v + 1, Format: 1, Kind: "step", Data: make([]byte, 300)}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// walFrames runs a passive checkpoint and returns the log's length and how much
// of it is in the database file.
func walFrames(t *testing.T, s *Store) (logged, moved int) {
	t.Helper()
	var busy int
	if err := s.ckpt.db.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &moved); err != nil {
		t.Fatal(err)
	}
	return logged, moved
}

func TestCheckpointerCopiesTheLog(t *testing.T) {
	s := openTemp(t)
	s.ckpt.every = 1 << 62 // only the explicit checkpoint below
	appendN(t, s, "a", 20, 5)
	s.ckpt.checkpoint()
	if b, _ := s.ckpt.lastErr.Load().(errBox); b.err != nil {
		t.Fatal(b.err)
	}
	if logged, moved := walFrames(t, s); logged == 0 || moved != logged {
		t.Errorf("after a checkpoint the log has %d frames, %d copied; want all copied", logged, moved)
	}
	// Once the log is copied, the next append starts it over.
	appendN(t, s, "b", 1, 1)
	if logged, _ := walFrames(t, s); logged > 20 {
		t.Errorf("the log did not start over: %d frames", logged)
	}
}

// TestCheckpointerRestartsALongLog holds a reader on an old snapshot, so a
// passive checkpoint cannot catch up; past the limit the checkpointer must run a
// RESTART checkpoint that waits for the reader and lets the log start over.
func TestCheckpointerRestartsALongLog(t *testing.T) {
	s := openTemp(t)
	s.ckpt.every = 1 << 62
	s.ckpt.restartAt = 10
	appendN(t, s, "a", 5, 1)
	reader, err := s.r.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := reader.QueryRow("SELECT count(*) FROM threads").Scan(&n); err != nil { // takes the snapshot
		t.Fatal(err)
	}
	appendN(t, s, "b", 30, 1)
	s.ckpt.beforeRestart = func() { reader.Rollback() }
	s.ckpt.checkpoint()
	if b, _ := s.ckpt.lastErr.Load().(errBox); b.err != nil {
		t.Fatal(b.err)
	}
	if s.ckpt.restarts.Load() != 1 {
		t.Fatalf("restarts = %d, want 1", s.ckpt.restarts.Load())
	}
	appendN(t, s, "c", 1, 1)
	if logged, _ := walFrames(t, s); logged > 20 {
		t.Errorf("the log did not start over after RESTART: %d frames", logged)
	}
}

// TestExpiredUsesIndex checks that Expired walks the partial index of
// expiries in order, reading no thread without one.
func TestExpiredUsesIndex(t *testing.T) {
	s := openTemp(t)
	plan := explain(t, s, expiredSQL, int64(1), 100, `["refund"]`)
	if !strings.Contains(plan, "USING INDEX threads_expiry") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("Expired does not walk threads_expiry in order:\n%s", plan)
	}
}

// TestAClosedStoreIsOneFileHoldingEverything checks that Close copies the log
// into the database file and removes it: a file copied on its own after the
// store closed (a backup, a move) holds every commit.
func TestAClosedStoreIsOneFileHoldingEverything(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "interlude.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Append(ctx, store.Append{ThreadID: "t", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "step", Data: []byte(`{"v":1}`)}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + side); !os.IsNotExist(err) {
			t.Errorf("%s is left beside the closed store (stat: %v)", filepath.Base(path+side), err)
		}
	}
	moved := filepath.Join(t.TempDir(), "moved.db")
	copyFile(t, path, moved)
	again, err := Open(moved)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if l, err := again.Load(ctx, "t"); err != nil || len(l.Records) != 1 {
		t.Fatalf("the copied file lost the thread: %+v, %v", l, err)
	}
}
