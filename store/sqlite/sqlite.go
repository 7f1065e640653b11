// Package sqlite is the embedded Store: one SQLite file in WAL mode, through
// modernc.org/sqlite (pure Go, no cgo).
//
// The file holds three tables: threads (the indexed facts the inbox lists),
// records (each thread's append-only log, clustered by thread and version) and
// snapshots (every snapshot of each thread, by thread and version). Record and snapshot bytes are
// stored as given; the runtime decides their encoding and compression.
//
// Writes go through a single connection, since SQLite admits one writer at a time
// anyway: appends queue in the process instead of spinning on SQLITE_BUSY. Each
// Append is one BEGIN IMMEDIATE transaction that checks the thread's version,
// inserts the records and the snapshot and updates the thread's row, and is
// durable when it returns. Every commit runs under synchronous=NORMAL, without an
// fsync; a commit holding a durable append is followed by one fdatasync of the
// WAL (commit.go), before the append returns. An append marked
// store.Append.NoSync returns without waiting for that sync: it survives a crash
// of the process (the operating system holds the log's pages), and the next
// durable commit's sync makes it durable too. Such a NoSync append that keeps the thread's graph, status and
// earliest expiry (a step in the middle of a run) updates only the row's
// version and questions and leaves its updated_at (see store.Meta.UpdatedAt),
// so that it writes two pages, the row's and the record's, instead of also
// rewriting the three listing indexes that hold updated_at. Reads use a
// separate pool of read-only connections and never wait for the writer.
// Copying the WAL back into the database file (checkpointing) happens in the
// background, on a connection of its own, rather than inside the append that
// happens to fill the log (see checkpoint.go for how the log stays bounded).
//
// The schema is versioned by embedded migrations, recorded in schema_migrations and
// applied by Open. A file whose schema is newer than this build knows is refused
// with an error matching interlude.ErrUnknownFormat rather than guessed at.
//
// Another process may open the same file (busy_timeout covers the short waits for
// the write lock), but a file on a network file system is not safe: SQLite's WAL
// needs shared memory between the processes that use it.
package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

// Store is a store.Store kept in one SQLite file. It is safe for concurrent use.
type Store struct {
	path    string
	w       *sql.DB   // a pool of one connection, wc's
	wc      *sql.Conn // the writer's connection, held for the store's life: every write
	r       *sql.DB   // read-only pool
	ckpt    *checkpointer
	commits *committer
	stmts   []*sql.Stmt // every statement below, closed before the connections

	beginTx, commitTx, rollbackTx                                 *sql.Stmt // on wc: a group's transaction
	insThread, updThread, stepThread, curVersion, insRecord       *sql.Stmt // on wc
	putSnapshot                                                   *sql.Stmt // on wc
	delRecords, delSnapshot, delThread, delThreadDocuments        *sql.Stmt // on wc
	savepoint, release, rollbackTo                                *sql.Stmt // on wc: an append of a group
	insNotice, claimNotices, settleNotice                         *sql.Stmt // on wc
	putDocument, delDocument, delDocumentIf                       *sql.Stmt // on wc
	selDocument, selDocuments, selThreadDocuments                 *sql.Stmt // on r
	selLoad, selRecords, selMeta, selHead, selVersion, selExpired *sql.Stmt // on r
	selPage, selBase, selUnfinished                               *sql.Stmt // on r

	durable bool    // durable commits sync the log (WithSynchronous is not NORMAL)
	log     logSync // the log's fd and its sync

	closeOnce sync.Once
	closeErr  error
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.ExpiryIndex   = (*Store)(nil)
	_ store.RecoveryIndex = (*Store)(nil)
	_ store.Outbox        = (*Store)(nil)
	_ store.Documents     = (*Store)(nil)
	_ store.Copier        = (*Store)(nil)
)

type config struct {
	options.Problems

	synchronous string
	busyTimeout time.Duration
	readConns   int
}

// Option configures Open.
type Option func(*config)

// WithSynchronous sets how durable appends reach the disk: "FULL" (the default:
// an append is on disk when it returns, by one fdatasync of the log after its
// commit), "EXTRA" (the same as FULL: in WAL mode SQLite's EXTRA adds nothing
// to FULL), or "NORMAL" (no sync). Every commit runs under SQLite's
// synchronous=NORMAL; appends marked store.Append.NoSync never wait for the
// sync, and the next durable commit's sync of the log covers them. Under
// NORMAL for every append, a power
// loss or OS crash (not a process crash) can lose the last appends, which for
// Interlude means pauses and answers people were told had been recorded.
// Choose it only if you accept that.
func WithSynchronous(mode string) Option {
	return func(c *config) {
		switch m := strings.ToUpper(strings.TrimSpace(mode)); m {
		case "FULL", "EXTRA", "NORMAL":
			c.synchronous = m
		default:
			c.Refuse("sqlite.WithSynchronous", "mode %q is not supported; use FULL, EXTRA or NORMAL", mode)
		}
	}
}

// WithBusyTimeout sets how long a connection waits for a lock held by another
// process using the same file before failing (default 5s).
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.busyTimeout, d, d >= 0, "sqlite.WithBusyTimeout", "%v is negative; use 0 or more", d)
	}
}

// WithReadConns sets the number of read-only connections (default: GOMAXPROCS,
// at least 4).
func WithReadConns(n int) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.readConns, n, n >= 1, "sqlite.WithReadConns", "%d read connections; use at least 1", n)
	}
}

// Open opens (creating it if needed) the SQLite store in the file at path and
// brings its schema up to date.
func Open(path string, opts ...Option) (*Store, error) {
	cfg := config{synchronous: "FULL", busyTimeout: 5 * time.Second, readConns: max(4, runtime.GOMAXPROCS(0))}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Err(); err != nil {
		return nil, err
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite store: %q is not a usable file path; pass a plain path to a file (for a store in memory use store/memory)", path)
	}
	busy := cfg.busyTimeout.Milliseconds()

	// The writer never checkpoints; the checkpointer does (see checkpoint.go).
	// Its statement journal, which only undoes a savepoint inside a
	// transaction, stays in memory (temp_store).
	writer := fmt.Sprintf("%s?_busy_timeout=%d&_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=1&_txlock=immediate",
		path, busy)
	w, err := sql.Open("sqlite", writer+"&_pragma=wal_autocheckpoint(0)&_pragma=temp_store(memory)")
	if err != nil {
		return nil, fmt.Errorf("sqlite store: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{path: path, w: w, durable: cfg.synchronous != "NORMAL", log: logSync{path: path}}
	ctx := context.Background()
	if err := migrate(ctx, w, path, cfg.busyTimeout); err != nil {
		w.Close()
		return nil, err
	}
	if err := s.syncLog(); err != nil {
		w.Close()
		return nil, err
	}
	if s.wc, err = w.Conn(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite store: open %s: %w", path, err)
	}
	s.commits = newCommitter(s)

	r, err := sql.Open("sqlite", fmt.Sprintf("%s?_busy_timeout=%d&_query_only=1", path, busy))
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite store: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(cfg.readConns)
	r.SetMaxIdleConns(cfg.readConns)
	r.SetConnMaxLifetime(0)
	r.SetConnMaxIdleTime(0)
	s.r = r

	c, err := sql.Open("sqlite", writer)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite store: open %s: %w", path, err)
	}
	c.SetMaxOpenConns(1)
	c.SetMaxIdleConns(1)
	c.SetConnMaxLifetime(0)
	c.SetConnMaxIdleTime(0)
	s.ckpt = newCheckpointer(c, s.restartLog)

	wc := s.wc
	prep := []struct {
		db   preparer
		stmt **sql.Stmt
		sql  string
	}{
		{wc, &s.beginTx, `BEGIN IMMEDIATE`},
		{wc, &s.commitTx, `COMMIT`},
		{wc, &s.rollbackTx, `ROLLBACK`},
		{wc, &s.insThread, `INSERT INTO threads (id, graph, status, version, interrupts, created_at, updated_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`},
		{wc, &s.updThread, `UPDATE threads SET graph = ?, status = ?, version = ?, interrupts = ?, updated_at = ?, expires_at = ?
			WHERE id = ? AND version = ?`},
		// A step within a run: only the version and the questions change,
		// so the listing indexes (graph, status, updated_at) are left alone.
		{wc, &s.stepThread, `UPDATE threads SET version = ?, interrupts = ?
			WHERE id = ? AND version = ? AND graph = ? AND status = ? AND expires_at IS ?`},
		{wc, &s.curVersion, `SELECT version FROM threads WHERE id = ?`},
		{wc, &s.insRecord, `INSERT INTO records (thread_id, version, format, kind, data, created_at) VALUES (?, ?, ?, ?, ?, ?)`},
		{wc, &s.putSnapshot, `INSERT INTO snapshots (thread_id, version, format, data) VALUES (?, ?, ?, ?)
			ON CONFLICT (thread_id, version) DO UPDATE SET format = excluded.format, data = excluded.data`},
		{wc, &s.insNotice, `INSERT INTO outbox (id, thread_id, graph, type, interrupt_id, data, created_at, state, next_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?) ON CONFLICT (id) DO NOTHING`},
		// The claim walks the due index in order and stops at the limit; left
		// to itself, the planner (without statistics) takes the state index,
		// reading and sorting every pending notice on each claim, which
		// costs most when the dispatcher has the most to catch up on.
		{wc, &s.claimNotices, `UPDATE outbox SET owner = ?1, claimed_until = ?2, attempts = attempts + 1
			WHERE seq IN (SELECT seq FROM outbox INDEXED BY outbox_due WHERE state = 'pending' AND next_at <= ?3 AND (owner = '' OR claimed_until <= ?3)
				ORDER BY next_at, seq LIMIT ?4)
			RETURNING ` + noticeColumns},
		{wc, &s.settleNotice, `UPDATE outbox SET state = ?, next_at = ?, last_error = ?, delivered_to = ?, settled_at = ?, owner = '', claimed_until = 0
			WHERE id = ? AND owner = ? AND state = 'pending'`},
		{wc, &s.delRecords, `DELETE FROM records WHERE thread_id = ?`},
		{wc, &s.delSnapshot, `DELETE FROM snapshots WHERE thread_id = ?`},
		{wc, &s.delThread, `DELETE FROM threads WHERE id = ?`},
		{wc, &s.delThreadDocuments, `DELETE FROM documents WHERE thread_id = ?`},
		{wc, &s.putDocument, putDocumentSQL},
		{wc, &s.delDocument, delDocumentSQL},
		{wc, &s.delDocumentIf, delDocumentIfSQL},
		{wc, &s.savepoint, `SAVEPOINT one_append`},
		{wc, &s.release, `RELEASE one_append`},
		{wc, &s.rollbackTo, `ROLLBACK TO one_append`},
		{r, &s.selLoad, loadSQL},
		{r, &s.selRecords, `SELECT version, format, kind, data, created_at FROM records
			WHERE thread_id = ? AND version > ? AND version <= ? ORDER BY version LIMIT ?`},
		{r, &s.selPage, historyPageSQL},
		{r, &s.selBase, historyBaseSQL},
		{r, &s.selMeta, `SELECT graph, status, version, interrupts, created_at, updated_at FROM threads WHERE id = ?`},
		{r, &s.selHead, `SELECT graph, status, version, NULL, created_at, updated_at FROM threads WHERE id = ?`},
		{r, &s.selVersion, `SELECT version FROM threads WHERE id = ?`},
		{r, &s.selExpired, expiredSQL},
		{r, &s.selUnfinished, unfinishedSQL},
		{r, &s.selDocument, selDocumentSQL},
		{r, &s.selDocuments, selDocumentsSQL},
		{r, &s.selThreadDocuments, selThreadDocumentsSQL},
	}
	for _, p := range prep {
		if *p.stmt, err = p.db.PrepareContext(ctx, p.sql); err != nil {
			s.Close()
			return nil, fmt.Errorf("sqlite store: prepare statements for %s: %w", path, err)
		}
		s.stmts = append(s.stmts, *p.stmt)
	}
	return s, nil
}

// preparer prepares statements: the read pool or the writer's connection.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// Path returns the file the store was opened on.
func (s *Store) Path() string { return s.path }

// Append implements store.Store. Appends from concurrent callers are committed
// together (group commit, see commit.go): each keeps its own compare-and-set, and
// each returns only once its transaction is durable.
func (s *Store) Append(ctx context.Context, a store.Append) error {
	if err := storekit.CheckAppend(a); err != nil {
		return err
	}
	interrupts, err := storekit.EncodeInterrupts(a.Meta.Interrupts)
	if err != nil {
		return err
	}
	return s.commits.submit(ctx, &appendReq{ctx: ctx, a: a, interrupts: interrupts})
}

// apply writes one append inside the group's open transaction: the thread row's
// compare-and-set, the records and the snapshot. A failed compare-and-set
// (a conflict) changes nothing; after any other failure wrote is set: the
// append may have changed something only a rollback undoes.
func (s *Store) apply(ctx context.Context, req *appendReq) (wrote bool, err error) {
	a := req.a
	now := time.Now().UnixNano()
	updated := now
	if !a.Meta.UpdatedAt.IsZero() {
		updated = a.Meta.UpdatedAt.UnixNano()
	}
	last := a.Records[len(a.Records)-1].Version
	expires := storekit.ExpiryNanos(a.Meta) // nil: NULL
	// The compare-and-set: a new thread's row must not exist, an existing thread's
	// row must be at a.Expect.
	var res sql.Result
	if a.Expect == 0 {
		created := now
		if !a.Meta.CreatedAt.IsZero() {
			created = a.Meta.CreatedAt.UnixNano()
		}
		res, err = s.insThread.ExecContext(ctx, a.ThreadID, a.Meta.Graph, string(a.Meta.Status), last, req.interrupts, created, updated, expires)
	} else {
		res, err = s.updateThread(ctx, req, last, updated, expires)
	}
	if err != nil {
		return true, s.wrap("append to", a.ThreadID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		var actual int64
		if err := s.curVersion.QueryRowContext(ctx, a.ThreadID).Scan(&actual); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return true, s.wrap("append to", a.ThreadID, err)
		}
		return false, storekit.Conflict(a.ThreadID, a.Expect, actual)
	}
	ins := s.insRecord
	for _, r := range a.Records {
		created := now
		if !r.CreatedAt.IsZero() {
			created = r.CreatedAt.UnixNano()
		}
		if _, err = ins.ExecContext(ctx, a.ThreadID, r.Version, r.Format, r.Kind, nonNil(r.Data), created); err != nil {
			return true, s.wrap("append to", a.ThreadID, err)
		}
	}
	if sn := a.Snapshot; sn != nil {
		if _, err = s.putSnapshot.ExecContext(ctx, a.ThreadID, sn.Version, sn.Format, nonNil(sn.Data)); err != nil {
			return true, s.wrap("append to", a.ThreadID, err)
		}
	}
	if err := s.insertNotices(ctx, a, now); err != nil {
		return true, err
	}
	if err := s.writeDocuments(ctx, a, now); err != nil {
		return true, err
	}
	// Remembered even if the group is then undone: the narrow update checks it.
	if len(s.commits.listed) >= maxListed {
		clear(s.commits.listed)
	}
	s.commits.listed[a.ThreadID] = listingOf(a, last, expires)
	return false, nil
}

// updateThread is the compare-and-set of an append to an existing thread. An
// append marked NoSync that keeps the thread's graph, status and earliest
// expiry (a step in the middle of a run) changes only the row's version and
// questions and leaves its updated_at, so that no listing index is rewritten;
// any other append, or one that finds a change, sets every column.
func (s *Store) updateThread(ctx context.Context, req *appendReq, last, updated int64, expires *int64) (sql.Result, error) {
	a := req.a
	// Only an append the writer knows keeps the listing tries the narrow
	// update, which checks it again; others set every column at once.
	if prev, ok := s.commits.listed[a.ThreadID]; ok && a.NoSync && prev == listingOf(a, a.Expect, expires) {
		res, err := s.stepThread.ExecContext(ctx, last, req.interrupts, a.ThreadID, a.Expect, a.Meta.Graph, string(a.Meta.Status), expires)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return res, err
		}
	}
	return s.updThread.ExecContext(ctx, a.Meta.Graph, string(a.Meta.Status), last, req.interrupts, updated, expires, a.ThreadID, a.Expect)
}

// listing is what a thread's row holds for the listing indexes, as the writer
// last wrote it.
type listing struct {
	version       int64
	graph, status string
	expires       int64
	expiring      bool
}

func listingOf(a store.Append, version int64, expires *int64) listing {
	l := listing{version: version, graph: a.Meta.Graph, status: string(a.Meta.Status)}
	if expires != nil {
		l.expires, l.expiring = *expires, true
	}
	return l
}

// maxListed bounds how many threads' listings the writer remembers.
const maxListed = 4096

// loadSQL reads a thread in one statement, so in one read transaction of
// SQLite's: a first row (kind 0) with the thread's facts and its newest
// snapshot, if any, then a row (kind 1) for each record after that snapshot up
// to the thread's version. Each part walks a primary key.
const loadSQL = `SELECT 0, t.graph, t.status, t.version, t.interrupts, t.created_at, t.updated_at, s.version, s.format, s.data
		FROM threads t LEFT JOIN snapshots s ON s.thread_id = t.id
			AND s.version = (SELECT max(version) FROM snapshots WHERE thread_id = t.id)
		WHERE t.id = ?1
	UNION ALL
	SELECT 1, r.kind, NULL, r.version, NULL, r.created_at, NULL, NULL, r.format, r.data
		FROM records r
		WHERE r.thread_id = ?1
			AND r.version > coalesce((SELECT max(version) FROM snapshots WHERE thread_id = ?1), 0)
			AND r.version <= (SELECT version FROM threads WHERE id = ?1)`

// Load implements store.Store. It reads the facts, the snapshot and the
// records in one statement, so they agree even while appends go on, in one
// round trip to the database.
func (s *Store) Load(ctx context.Context, threadID string) (*store.Loaded, error) {
	ctx, err := byKey(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.selLoad.QueryContext(ctx, threadID)
	if err != nil {
		return nil, s.wrap("load", threadID, err)
	}
	out, err := scanLoad(threadID, rows)
	if err != nil {
		return nil, s.wrap("load", threadID, err)
	}
	if out == nil {
		return nil, storekit.NotFound(threadID)
	}
	return out, nil
}

// scanLoad reads the rows of loadSQL; it returns nil when they hold no thread.
func scanLoad(threadID string, rows *sql.Rows) (*store.Loaded, error) {
	defer rows.Close()
	var (
		out    *store.Loaded
		recs   []store.Record
		sorted = true
	)
	for rows.Next() {
		var (
			kind                int
			text, status        sql.NullString
			version, created    int64
			interrupts, data    []byte
			updated             sql.NullInt64
			snapVer, snapFormat sql.NullInt64
		)
		if err := rows.Scan(&kind, &text, &status, &version, &interrupts, &created, &updated, &snapVer, &snapFormat, &data); err != nil {
			return nil, err
		}
		if kind == 1 {
			r := store.Record{Version: version, Format: int(snapFormat.Int64), Kind: text.String, Data: data, CreatedAt: storekit.FromUnixNano(created)}
			if err := storekit.CheckFormat(threadID, r.Version, r.Format); err != nil {
				return nil, err
			}
			if n := len(recs); n > 0 && recs[n-1].Version > r.Version {
				sorted = false
			}
			recs = append(recs, r)
			continue
		}
		out = &store.Loaded{}
		m := &out.Meta
		m.ThreadID, m.Graph, m.Status, m.Version = threadID, text.String, interlude.ThreadStatus(status.String), version
		m.CreatedAt, m.UpdatedAt = storekit.FromUnixNano(created), storekit.FromUnixNano(updated.Int64)
		var err error
		if m.Interrupts, err = storekit.DecodeInterrupts("sqlite", threadID, interrupts); err != nil {
			return nil, err
		}
		if snapVer.Valid {
			if err := storekit.CheckFormat(threadID, snapVer.Int64, int(snapFormat.Int64)); err != nil {
				return nil, err
			}
			out.Snapshot = &store.Snapshot{Version: snapVer.Int64, Format: int(snapFormat.Int64), Data: data}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, nil
	}
	if !sorted {
		slices.SortFunc(recs, func(a, b store.Record) int { return cmp.Compare(a.Version, b.Version) })
	}
	out.Records = recs
	return out, nil
}

// byKey returns the context for a read of one thread by its key (Load, Meta,
// Version): ctx, checked to be live, without its cancellation. Such a read
// takes microseconds, while a cancellable context costs two goroutines per
// statement (database/sql's and the driver's, each watching it), more than
// the read itself.
func byKey(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// Version implements store.Store.
func (s *Store) Version(ctx context.Context, threadID string) (int64, error) {
	ctx, err := byKey(ctx)
	if err != nil {
		return 0, err
	}
	var v int64
	err = s.selVersion.QueryRowContext(ctx, threadID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, s.wrap("read the version of", threadID, err)
	}
	return v, nil
}

// Records implements store.Store.
func (s *Store) Records(ctx context.Context, threadID string, after, before int64, limit int) ([]store.Record, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.selRecords.QueryContext(ctx, threadID, after, before, limit)
	if err != nil {
		return nil, s.wrap("read the records of", threadID, err)
	}
	out, err := scanRecords(threadID, rows)
	if err != nil {
		return nil, s.wrap("read the records of", threadID, err)
	}
	if len(out) == 0 {
		// Nothing in range: an empty answer for a known thread, NotFound otherwise.
		if v, err := s.Version(ctx, threadID); err != nil {
			return nil, err
		} else if v == 0 {
			return nil, storekit.NotFound(threadID)
		}
	}
	return out, nil
}

// historyPageSQL reads a thread's newest records before a version, newest
// first, at most a number of them; historyBaseSQL its newest snapshot before a
// version. Both walk a primary key backwards from the version.
const (
	historyPageSQL = `SELECT version, format, kind, data, created_at FROM records
		WHERE thread_id = ? AND version < ? ORDER BY version DESC LIMIT ?`
	historyBaseSQL = `SELECT version, format, data FROM snapshots
		WHERE thread_id = ? AND version < ? ORDER BY version DESC LIMIT 1`
)

// History implements store.Store. It reads in one read transaction, walking the
// primary keys of records and snapshots backwards from the page's bound, so it
// reads the page, one snapshot and the records between them.
func (s *Store) History(ctx context.Context, threadID string, before int64, limit int) (*store.HistoryPage, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	if limit <= 0 {
		limit = -1
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.wrap("read the history of", threadID, err)
	}
	defer tx.Rollback()
	out := &store.HistoryPage{}
	rows, err := tx.StmtContext(ctx, s.selPage).QueryContext(ctx, threadID, before, limit)
	if err != nil {
		return nil, s.wrap("read the history of", threadID, err)
	}
	if out.Records, err = scanRecords(threadID, rows); err != nil {
		return nil, s.wrap("read the history of", threadID, err)
	}
	if len(out.Records) == 0 {
		// An empty page for a known thread, NotFound otherwise.
		var v int64
		err := tx.StmtContext(ctx, s.selVersion).QueryRowContext(ctx, threadID).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, storekit.NotFound(threadID)
		}
		if err != nil {
			return nil, s.wrap("read the history of", threadID, err)
		}
		return out, nil
	}
	oldest := out.Records[len(out.Records)-1].Version
	var base store.Snapshot
	err = tx.StmtContext(ctx, s.selBase).QueryRowContext(ctx, threadID, oldest).Scan(&base.Version, &base.Format, &base.Data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, s.wrap("read the history of", threadID, err)
	default:
		if err := storekit.CheckFormat(threadID, base.Version, base.Format); err != nil {
			return nil, err
		}
		out.Base = &base
	}
	if base.Version < oldest-1 {
		rows, err := tx.StmtContext(ctx, s.selRecords).QueryContext(ctx, threadID, base.Version, oldest-1, -1)
		if err != nil {
			return nil, s.wrap("read the history of", threadID, err)
		}
		if out.Lead, err = scanRecords(threadID, rows); err != nil {
			return nil, s.wrap("read the history of", threadID, err)
		}
	}
	return out, nil
}

// Meta implements store.Store.
func (s *Store) Meta(ctx context.Context, threadID string) (*store.Meta, error) {
	return s.meta(ctx, s.selMeta, threadID)
}

// Head implements store.Header: the threads row without its interrupts.
func (s *Store) Head(ctx context.Context, threadID string) (*store.Meta, error) {
	return s.meta(ctx, s.selHead, threadID)
}

// meta reads a thread's row with sel, selMeta or selHead.
func (s *Store) meta(ctx context.Context, sel *sql.Stmt, threadID string) (*store.Meta, error) {
	ctx, err := byKey(ctx)
	if err != nil {
		return nil, err
	}
	m, err := scanMeta(sel.QueryRowContext(ctx, threadID), threadID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, storekit.NotFound(threadID)
	}
	if err != nil {
		return nil, s.wrap("read", threadID, err)
	}
	return m, nil
}

// listQuery returns the SQL and arguments for q's page, fetching one row more
// than the page to know whether another follows.
func listQuery(q store.Query, limit int) (string, []any, error) {
	var (
		b     strings.Builder
		conds []string
		args  []any
	)
	b.WriteString("SELECT id, graph, status, version, interrupts, created_at, updated_at FROM threads")
	if q.Status != "" {
		conds = append(conds, "status = ?")
		args = append(args, string(q.Status))
	}
	if q.Graph != "" {
		conds = append(conds, "graph = ?")
		args = append(args, q.Graph)
	}
	if q.Cursor != "" {
		c, err := storekit.DecodeCursor(q.Cursor)
		if err != nil {
			return "", nil, err
		}
		conds = append(conds, "(updated_at, id) < (?, ?)")
		args = append(args, c.UpdatedAt.UnixNano(), c.ThreadID)
	}
	if len(conds) > 0 {
		b.WriteString(" WHERE ")
		b.WriteString(strings.Join(conds, " AND "))
	}
	b.WriteString(" ORDER BY updated_at DESC, id DESC LIMIT ?")
	args = append(args, limit+1)
	return b.String(), args, nil
}

// List implements store.Store. With a status, or a graph and a status, it walks
// an index in order and reads only the page; a listing by graph alone, or of
// everything, sorts the matching threads.
func (s *Store) List(ctx context.Context, q store.Query) (*store.Page, error) {
	limit := storekit.PageLimit(q)
	query, args, err := listQuery(q, limit)
	if err != nil {
		return nil, err
	}
	threads, err := scanMetas(s.r.QueryContext(ctx, query, args...))
	if err != nil {
		return nil, fmt.Errorf("sqlite store: list threads: %w", err)
	}
	return storekit.NewPage(threads, limit), nil
}

// expiredSQL lists the threads whose first question expires at or before a
// time (unix nanoseconds), earliest first, at most a number of them, of the
// graphs named in a JSON array (all of them when it is NULL).
const expiredSQL = `SELECT id, graph, status, version, interrupts, created_at, updated_at FROM threads
	WHERE expires_at <= ?1 AND (?3 IS NULL OR graph IN (SELECT value FROM json_each(?3)))
	ORDER BY expires_at LIMIT ?2`

// Expired implements store.ExpiryIndex. It walks the index of the threads'
// earliest expiries (schema version 2) from the start, so it reads only the
// threads it returns.
func (s *Store) Expired(ctx context.Context, now time.Time, graphs []string, limit int) ([]store.Meta, error) {
	limit = storekit.ExpiredLimit(limit)
	names, err := graphNames(graphs)
	if err != nil {
		return nil, err
	}
	threads, err := scanMetas(s.selExpired.QueryContext(ctx, storekit.UnixNano(now), limit, names))
	if err != nil {
		return nil, fmt.Errorf("sqlite store: list the threads whose questions expired: %w", err)
	}
	return threads, nil
}

// unfinishedSQL lists the threads whose stored status is running, least
// recently updated first, at most a number of them, of the graphs named in a
// JSON array (all of them when it is NULL).
const unfinishedSQL = `SELECT id, graph, status, version, interrupts, created_at, updated_at FROM threads
	WHERE status = 'running' AND (?2 IS NULL OR graph IN (SELECT value FROM json_each(?2)))
	ORDER BY updated_at, id LIMIT ?1`

// Unfinished implements store.RecoveryIndex. It walks the listing index of
// the running threads (threads_inbox) from its oldest end, so it reads only
// the threads it returns. One process uses the store, so every thread stored
// as running is listed: the caller tells its own live runs apart.
func (s *Store) Unfinished(ctx context.Context, graphs []string, limit int) ([]store.Meta, error) {
	names, err := graphNames(graphs)
	if err != nil {
		return nil, err
	}
	threads, err := scanMetas(s.selUnfinished.QueryContext(ctx, storekit.UnfinishedLimit(limit), names))
	if err != nil {
		return nil, fmt.Errorf("sqlite store: list the threads whose run is unfinished: %w", err)
	}
	return threads, nil
}

// scanMetas scans the rows of a listing, which start with the thread's id.
func scanMetas(rows *sql.Rows, err error) ([]store.Meta, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return storekit.ScanMetas(rows, "sqlite")
}

// Delete implements store.Store. The deletion joins the group commit of the
// appends (commit.go), as a durable write.
func (s *Store) Delete(ctx context.Context, threadID string) error {
	return s.commits.submit(ctx, &appendReq{ctx: ctx, a: store.Append{ThreadID: threadID}, write: func(ctx context.Context) error {
		for _, st := range []*sql.Stmt{s.delRecords, s.delSnapshot, s.delThread, s.delThreadDocuments} {
			if _, err := st.ExecContext(ctx, threadID); err != nil {
				return s.wrap("delete", threadID, err)
			}
		}
		return nil
	}})
}

// Checkpoint copies the write-ahead log into the database file and truncates
// the log (PRAGMA wal_checkpoint(TRUNCATE)). The store checkpoints on its own in
// the background as the log grows; call this before copying the file or
// measuring its size. Appends wait while it runs.
func (s *Store) Checkpoint() error {
	var busy, logged, moved int
	err := s.exclusive(context.Background(), func(ctx context.Context) error {
		return s.wc.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &moved)
	})
	if err != nil {
		return fmt.Errorf("sqlite store: checkpoint %s: %w", s.path, err)
	}
	if busy != 0 {
		return fmt.Errorf("sqlite store: checkpoint %s could not finish while other connections were reading or writing; try again", s.path)
	}
	return nil
}

// restartLog runs a RESTART checkpoint on the writer's connection, between two
// groups, so that appends queue behind it in the process instead of polling
// for SQLite's lock in busy-handler sleeps (see checkpoint.go).
func (s *Store) restartLog() (busy, logged, moved int, err error) {
	err = s.exclusive(context.Background(), func(ctx context.Context) error {
		return s.wc.QueryRowContext(ctx, "PRAGMA wal_checkpoint(RESTART)").Scan(&busy, &logged, &moved)
	})
	return busy, logged, moved, err
}

// exclusive runs fn on the writer's connection (s.wc) outside any
// transaction, between two groups of the group commit.
func (s *Store) exclusive(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.commits.submit(ctx, &appendReq{ctx: ctx, solo: fn})
}

// begin starts a group's transaction on the writer's connection. Should an
// earlier transaction have been left open (a ROLLBACK that failed), it is
// rolled back and the BEGIN tried again.
func (s *Store) begin(ctx context.Context) error {
	if _, err := s.beginTx.ExecContext(ctx); err == nil {
		return nil
	} else if s.rollback(ctx) != nil {
		return err
	}
	_, err := s.beginTx.ExecContext(ctx)
	return err
}

// rollback rolls back the group's transaction. It fails harmlessly when SQLite
// has rolled the transaction back already (after some I/O errors).
func (s *Store) rollback(ctx context.Context) error {
	_, err := s.rollbackTx.ExecContext(ctx)
	return err
}

// Size returns the bytes the store occupies on disk: the database file and its
// write-ahead log.
func (s *Store) Size() (int64, error) {
	var total int64
	for _, p := range []string{s.path, s.path + "-wal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("sqlite store: size: %w", err)
		}
		total += fi.Size()
	}
	return total, nil
}

// Close implements store.Store. It stops the checkpointer and closes the read
// pool, then the writer, which checkpoints the log into the database file.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.commits != nil {
			s.commits.close()
		}
		if s.ckpt != nil {
			errs = append(errs, s.ckpt.close())
		}
		// A statement left open keeps its connection from closing for good,
		// and the last connection to close is the one that copies the log
		// into the database file and removes it.
		for _, st := range s.stmts {
			errs = append(errs, st.Close())
		}
		if s.r != nil {
			errs = append(errs, s.r.Close())
		}
		if s.wc != nil {
			errs = append(errs, s.wc.Close())
		}
		errs = append(errs, s.w.Close(), s.log.close())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

func (s *Store) wrap(op, threadID string, err error) error {
	var ie *interlude.Error
	if errors.As(err, &ie) {
		return err
	}
	return fmt.Errorf("sqlite store: %s thread %q: %w", op, threadID, err)
}

// scanMeta scans a threads row (storekit.ScanMeta). With threadID "" the row
// starts with the id.
func scanMeta(row storekit.Scanner, threadID string) (*store.Meta, error) {
	return storekit.ScanMeta(row, "sqlite", threadID)
}

func scanRecords(threadID string, rows *sql.Rows) ([]store.Record, error) {
	defer rows.Close()
	var out []store.Record
	for rows.Next() {
		var r store.Record
		var created int64
		if err := rows.Scan(&r.Version, &r.Format, &r.Kind, &r.Data, &created); err != nil {
			return nil, err
		}
		if err := storekit.CheckFormat(threadID, r.Version, r.Format); err != nil {
			return nil, err
		}
		r.CreatedAt = storekit.FromUnixNano(created)
		out = append(out, r)
	}
	return out, rows.Err()
}

// nonNil turns nil into an empty slice: the data columns are NOT NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// graphNames is the SQL argument naming the graphs a listing keeps: a JSON array
// of their names, or NULL for every graph.
func graphNames(graphs []string) (any, error) {
	if len(graphs) == 0 {
		return nil, nil
	}
	data, err := json.Marshal(graphs)
	if err != nil {
		return nil, err
	}
	return string(data), nil
}
