// Package postgres is the Store for many server replicas sharing one Postgres
// database (PostgreSQL 13 or later), through pgx v5.
//
// A store lives in one Postgres schema ("interlude" unless WithSchema says
// otherwise) holding five tables: threads (the indexed facts the inbox lists),
// records (each thread's append-only log, keyed by thread and version),
// snapshots (every snapshot of each thread, keyed the same way), leases (which
// run holds which thread, see Store.Lease) and events (the event log replicas share, see
// EventLog). Record and snapshot bytes are stored as given; the runtime decides
// their encoding and compression.
//
// Several processes may share one store: the Store is a store.Leaser, so the
// graph runtime holds a thread's lease while it runs it, and once the lease of
// a run whose process died expires, its thread reads as its last record says
// (running if the run had more to do, which a server then finishes), or as
// failed if the run had committed nothing, until any process continues it (see
// Store.Lease for the rule). EventLog carries the events of
// runs to the listeners of every process.
//
// Each Append is a single SQL statement: it updates the thread's row only if
// the row is at the expected version (or inserts it, for a new thread), and
// inserts the records and the snapshot only if that succeeded. Two writers can
// never both win; the loser gets an error matching interlude.ErrConflict. Load is
// also one statement, so the facts, the snapshot and the records it returns
// always agree. Under load, the appends of different threads made while one
// is on its way to the database go together in the next round trip, as one
// transaction with one commit; leases are taken the same way. A round trip
// that would carry only a few statements first waits a moment for more
// (WithBatchWait). Append returns once its commit is durable, as it would alone,
// except an append marked store.Append.NoSync: it commits with
// synchronous_commit off, so it is visible to every replica at once and
// survives any crash of theirs, but a crash of the database server may lose it
// until a later durable commit, whose flush of the write-ahead log (which is
// written in order) makes it durable too. Such an append that keeps the
// thread's graph, status and earliest expiry (a step in the middle of a run)
// leaves its updated_at (see store.Meta.UpdatedAt), so that no indexed column
// changes and Postgres updates the row without adding entries to its five
// indexes.
//
// The schema is versioned by embedded migrations, applied by New (and Open) in
// one transaction under a Postgres advisory lock, so any number of replicas may
// start together on an empty database. A schema newer than this build knows is
// refused with an error matching interlude.ErrUnknownFormat.
package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

// DefaultSchema is the Postgres schema a store uses unless WithSchema names
// another.
const DefaultSchema = "interlude"

// Store is a store.Store kept in Postgres. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	fast   *pgxpool.Pool // leases and events: commits without waiting for the WAL flush
	owned  bool
	schema string
	sql    queries
	held   sync.Map                 // thread id → token of a lease this store holds
	events atomic.Pointer[EventLog] // the open event log, which gives up the leases (see lease.Release)
	// Appends share round trips and commits on pool, those marked NoSync and
	// leases on fast.
	appends, lazyAppends, leases *batcher
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

	schema    string
	batchWait time.Duration
}

// Option configures New and Open.
type Option func(*config)

// WithSchema keeps the store's tables in the named Postgres schema, created if
// missing (which needs the CREATE privilege on the database). Separate schemas
// are separate stores: tests use one each, and one database can host several
// deployments.
func WithSchema(name string) Option {
	return func(c *config) {
		if name == "" || len(name) > 63 || strings.ContainsRune(name, 0) {
			c.Refuse("postgres.WithSchema", "schema name %q is not usable; give 1 to 63 bytes", name)
			return
		}
		c.schema = name
	}
}

// DefaultBatchWait is how long, unless WithBatchWait says otherwise, a small
// batch of writes waits under load for more before it goes out.
const DefaultBatchWait = 500 * time.Microsecond

// WithBatchWait sets how long a small batch of writes (fewer than 16
// statements) waits for more before it goes out while the store is busy: the
// writes made meanwhile share its round trip and commit. A write to an idle
// store never waits. 0 turns the wait off, for the lowest latency on a database
// with time to spare; the default, DefaultBatchWait, suits a busy one, where
// fewer commits leave more CPU for the work.
func WithBatchWait(d time.Duration) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.batchWait, d, d >= 0, "postgres.WithBatchWait", "%v is negative; give 0 to turn the wait off", d)
	}
}

// Open connects to the database at dsn (a postgres:// URL or key=value string,
// as pgx accepts, including pool settings such as pool_max_conns) and returns the
// store in it, bringing its schema up to date. Close closes the connection pool.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store: connect: %w", err)
	}
	s, err := New(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// New returns the store kept in pool's database, bringing its schema up to date.
// The pool stays the caller's: Close does not close it. The store opens a second
// pool like it, connecting as it needs, for its lease and event writes, which
// commit without waiting for the WAL to reach disk (synchronous_commit off);
// Close closes that one.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	cfg := config{schema: DefaultSchema, batchWait: DefaultBatchWait}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Err(); err != nil {
		return nil, err
	}
	if err := migrate(ctx, pool, cfg.schema); err != nil {
		return nil, err
	}
	fc := pool.Config()
	fc.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	fc.MinConns, fc.MinIdleConns = 0, 0
	fast, err := pgxpool.NewWithConfig(ctx, fc)
	if err != nil {
		return nil, fmt.Errorf("postgres store: connect: %w", err)
	}
	return &Store{pool: pool, fast: fast, schema: cfg.schema, sql: newQueries(pgx.Identifier{cfg.schema}.Sanitize()),
		appends: newBatcher(pool, cfg.batchWait), lazyAppends: newBatcher(fast, cfg.batchWait), leases: newBatcher(fast, cfg.batchWait)}, nil
}

// Schema returns the Postgres schema that holds the store's tables.
func (s *Store) Schema() string { return s.schema }

// Pool returns the connection pool the store uses.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// queries are the store's SQL statements, with the schema spliced in.
type queries struct {
	// appends[how][snapshot][outbox][documents]
	appends                            [3][2][2][2]string
	version, meta, head, load, records string
	history                            string
	delThread, delRecords, delSnap     string
	delLease, delEvents, delDocs       string
	lease, holder, renew, release      string
	expired                            string // marks and returns the expired leases not yet reported
	expiredQuestions                   string // the threads whose questions expired, for Store.Expired
	unfinished                         string // the threads whose run is unfinished, for Store.Unfinished
	claim                              string
	logEvents                          [2]string // [with the release of a lease]
	schema                             string    // quoted, for listQuery
}

// statusSQL is a thread's status as reported: a held lease reads as running,
// and an expired one as failed unless the thread's last record ended a run
// (interrupted, failed) or left the run more to do (running); see Store.Lease.
const statusSQL = `CASE WHEN l.expires_at IS NULL THEN t.status WHEN l.expires_at > now() THEN 'running'
	WHEN t.status IN ('interrupted', 'failed', 'running') THEN t.status ELSE 'failed' END`

func newQueries(schema string) queries {
	var q queries
	for how := range q.appends {
		for _, snap := range []bool{false, true} {
			for _, outbox := range []bool{false, true} {
				for _, docs := range []bool{false, true} {
					q.appends[how][b2i(snap)][b2i(outbox)][b2i(docs)] = appendSQL(schema, appendHow(how), snap, outbox, docs)
				}
			}
		}
	}
	q.logEvents = [2]string{eventsSQL(schema, false), eventsSQL(schema, true)}
	q.version = `SELECT version FROM ` + schema + `.threads WHERE id = $1`
	q.meta = `SELECT t.graph, ` + statusSQL + `, t.version, t.interrupts, t.created_at, t.updated_at
	FROM ` + schema + `.threads t LEFT JOIN ` + schema + `.leases l ON l.thread_id = t.id WHERE t.id = $1`
	q.head = `SELECT t.graph, ` + statusSQL + `, t.version, NULL::json, t.created_at, t.updated_at
	FROM ` + schema + `.threads t LEFT JOIN ` + schema + `.leases l ON l.thread_id = t.id WHERE t.id = $1`
	q.load = loadSQL(schema, statusSQL, true)
	q.expiredQuestions = `SELECT t.id, t.graph, ` + statusSQL + `, t.version, t.interrupts, t.created_at, t.updated_at
	FROM ` + schema + `.threads t LEFT JOIN ` + schema + `.leases l ON l.thread_id = t.id
	WHERE t.expires_at <= $1 AND ($3::text[] IS NULL OR t.graph = ANY($3::text[])) ORDER BY t.expires_at LIMIT $2`
	q.unfinished = `SELECT t.id, t.graph, t.status, t.version, t.interrupts, t.created_at, t.updated_at
	FROM ` + schema + `.threads t WHERE t.status = 'running' AND ($2::text[] IS NULL OR t.graph = ANY($2::text[]))
	AND NOT EXISTS (SELECT 1 FROM ` + schema + `.leases l WHERE l.thread_id = t.id AND l.expires_at > now())
	ORDER BY t.updated_at, t.id LIMIT $1`
	q.records = `SELECT version, format, kind, data, created_at FROM ` + schema + `.records
		WHERE thread_id = $1 AND version > $2 AND version <= $3 ORDER BY version LIMIT $4`
	q.history = historySQL(schema)
	q.delThread = `DELETE FROM ` + schema + `.threads WHERE id = $1`
	q.delRecords = `DELETE FROM ` + schema + `.records WHERE thread_id = $1`
	q.delSnap = `DELETE FROM ` + schema + `.snapshots WHERE thread_id = $1`
	q.delLease = `DELETE FROM ` + schema + `.leases WHERE thread_id = $1 AND expires_at <= now()`
	q.delEvents = `DELETE FROM ` + schema + `.events WHERE thread_id = $1`
	q.delDocs = `DELETE FROM ` + schema + `.documents WHERE thread_id = $1`
	q.schema = schema
	leaseSQL(&q, schema)
	return q
}

// loadSQL is the query of a Load, reporting status as the given expression
// (which may use the thread's lease as l, if joinLease).
func loadSQL(schema, status string, joinLease bool) string {
	lease := ""
	if joinLease {
		lease = `
	LEFT JOIN ` + schema + `.leases l ON l.thread_id = t.id`
	}
	return `SELECT t.graph, ` + status + `, t.version, t.interrupts, t.created_at, t.updated_at,
		s.version, s.format, s.data, r.versions, r.formats, r.kinds, r.datas, r.created
	FROM ` + schema + `.threads t
	LEFT JOIN LATERAL (
		SELECT version, format, data FROM ` + schema + `.snapshots
		WHERE thread_id = t.id ORDER BY version DESC LIMIT 1
	) s ON true` + lease + `
	CROSS JOIN LATERAL (
		SELECT array_agg(x.version), array_agg(x.format), array_agg(x.kind), array_agg(x.data), array_agg(x.created_at)
		FROM (SELECT version, format, kind, data, created_at FROM ` + schema + `.records
			WHERE thread_id = t.id AND version > COALESCE(s.version, 0) AND version <= t.version
			ORDER BY version) x
	) r (versions, formats, kinds, datas, created)
	WHERE t.id = $1`
}

// historySQL is the single statement of a History, so that its parts agree:
// rows of part 0 are the page (the newest $3 records before version $2), of part
// 1 the newest snapshot before the page, of part 2 the records between the two,
// and of part 3 the thread's row, whose presence tells an empty page from an
// unknown thread. Each part walks a primary key backwards or forwards from the
// page's bound.
func historySQL(schema string) string {
	return `WITH page AS (
	SELECT version, format, kind, data, created_at FROM ` + schema + `.records
	WHERE thread_id = $1 AND version < $2 ORDER BY version DESC LIMIT $3
), lo AS (
	SELECT min(version) AS v FROM page
), base AS (
	SELECT s.version, s.format, s.data FROM ` + schema + `.snapshots s, lo
	WHERE s.thread_id = $1 AND s.version < lo.v ORDER BY s.version DESC LIMIT 1
)
SELECT 0, version, format, kind, data, created_at FROM page
UNION ALL
SELECT 1, version, format, '', data, 0 FROM base
UNION ALL
SELECT 2, r.version, r.format, r.kind, r.data, r.created_at FROM ` + schema + `.records r, lo
WHERE r.thread_id = $1 AND r.version > COALESCE((SELECT version FROM base), 0) AND r.version < lo.v
UNION ALL
SELECT 3, version, 0, '', NULL, 0 FROM ` + schema + `.threads WHERE id = $1`
}

// appendHow is how an append writes the thread's row.
type appendHow int

const (
	// updateRow sets every column of the row.
	updateRow appendHow = iota
	// insertRow writes the row of a new thread.
	insertRow
	// stepRow, for an append marked NoSync, leaves updated_at as it was if
	// the graph, status and earliest expiry stay: no indexed column changes,
	// so the update is heap-only.
	stepRow
)

// appendSQL is the single statement of an Append. The CTE t is the
// compare-and-set on the thread's row; the records and the snapshot are written
// only for the row t returns, so a refused append writes nothing. It returns how
// many rows t touched: 1, or 0 for a conflict. The documents' puts and
// deletes, like the records, are written only for the row t returns.
func appendSQL(schema string, how appendHow, snapshot, outbox, docs bool) string {
	var b strings.Builder
	switch how {
	case insertRow:
		b.WriteString(`WITH t AS (
	INSERT INTO ` + schema + `.threads (id, graph, status, version, interrupts, created_at, updated_at, expires_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $13)
	ON CONFLICT (id) DO NOTHING
	RETURNING id
)`)
	case stepRow:
		b.WriteString(`WITH t AS (
	UPDATE ` + schema + `.threads SET graph = $2, status = $3, version = $4, interrupts = $5, expires_at = $13,
		updated_at = CASE WHEN graph = $2 AND status = $3 AND expires_at IS NOT DISTINCT FROM $13 THEN updated_at ELSE $7 END
	WHERE id = $1 AND version = $6
	RETURNING id
)`)
	default:
		b.WriteString(`WITH t AS (
	UPDATE ` + schema + `.threads SET graph = $2, status = $3, version = $4, interrupts = $5, updated_at = $7, expires_at = $13
	WHERE id = $1 AND version = $6
	RETURNING id
)`)
	}
	b.WriteString(`, r AS (
	INSERT INTO ` + schema + `.records (thread_id, version, format, kind, data, created_at)
	SELECT t.id, x.version, x.format, x.kind, x.data, x.created_at
	FROM t, unnest($8::bigint[], $9::integer[], $10::text[], $11::bytea[], $12::bigint[]) AS x (version, format, kind, data, created_at)
)`)
	if snapshot {
		b.WriteString(`, s AS (
	INSERT INTO ` + schema + `.snapshots (thread_id, version, format, data)
	SELECT t.id, $14::bigint, $15::integer, $16::bytea FROM t
	ON CONFLICT (thread_id, version) DO UPDATE SET format = excluded.format, data = excluded.data
)`)
	}
	if outbox {
		// The notices' parameters follow the snapshot's, if any.
		p := 14
		if snapshot {
			p = 17
		}
		arg := func(i int, typ string) string { return fmt.Sprintf("$%d::%s", p+i, typ) }
		b.WriteString(`, o AS (
	INSERT INTO ` + schema + `.outbox (id, thread_id, graph, type, interrupt_id, data, created_at, state, next_at)
	SELECT x.id, t.id, x.graph, x.type, x.interrupt_id, x.data, x.created_at, 'pending', x.created_at
	FROM t, unnest(` + arg(0, "text[]") + `, ` + arg(1, "text[]") + `, ` + arg(2, "text[]") + `, ` + arg(3, "text[]") + `, ` + arg(4, "bytea[]") + `, ` + arg(5, "bigint[]") + `)
		AS x (id, graph, type, interrupt_id, data, created_at)
	ON CONFLICT (id) DO NOTHING
)`)
	}
	if docs {
		// The documents' parameters come last.
		p := 14
		if snapshot {
			p += 3
		}
		if outbox {
			p += 6
		}
		arg := func(i int, typ string) string { return fmt.Sprintf("$%d::%s", p+i, typ) }
		b.WriteString(`, dp AS (
	INSERT INTO ` + schema + `.documents (thread_id, kind, key, data, created_at, updated_at)
	SELECT t.id, x.kind, x.key, x.data, x.created_at, x.updated_at
	FROM t, unnest(` + arg(0, "text[]") + `, ` + arg(1, "text[]") + `, ` + arg(2, "bytea[]") + `, ` + arg(3, "bigint[]") + `, ` + arg(4, "bigint[]") + `)
		AS x (kind, key, data, created_at, updated_at)
	ON CONFLICT (thread_id, kind, key) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at
), dd AS (
	DELETE FROM ` + schema + `.documents d
	USING t, unnest(` + arg(5, "text[]") + `, ` + arg(6, "text[]") + `, ` + arg(7, "bytea[]") + `, ` + arg(8, "boolean[]") + `)
		AS x (kind, key, data, if_unchanged)
	WHERE d.thread_id = t.id AND d.kind = x.kind AND d.key = x.key AND (NOT x.if_unchanged OR d.data = x.data)
)`)
	}
	b.WriteString(`
SELECT count(*) FROM t`)
	return b.String()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Append implements store.Store.
func (s *Store) Append(ctx context.Context, a store.Append) error {
	if err := storekit.CheckAppend(a); err != nil {
		return err
	}
	interrupts, err := storekit.EncodeInterrupts(a.Meta.Interrupts)
	if err != nil {
		return err
	}
	now := time.Now().UnixNano()
	updated := now
	if !a.Meta.UpdatedAt.IsZero() {
		updated = a.Meta.UpdatedAt.UnixNano()
	}
	n := len(a.Records)
	var (
		versions = make([]int64, n)
		formats  = make([]int32, n)
		kinds    = make([]string, n)
		datas    = make([][]byte, n)
		created  = make([]int64, n)
	)
	size := len(interrupts) // the bytes the statement carries, for the batcher
	for i, r := range a.Records {
		versions[i], formats[i], kinds[i], datas[i] = r.Version, int32(r.Format), r.Kind, nonNil(r.Data)
		size += len(r.Data)
		created[i] = now
		if !r.CreatedAt.IsZero() {
			created[i] = r.CreatedAt.UnixNano()
		}
	}
	sixth := a.Expect // the expected version, or for a new thread its creation time
	if a.Expect == 0 {
		sixth = now
		if !a.Meta.CreatedAt.IsZero() {
			sixth = a.Meta.CreatedAt.UnixNano()
		}
	}
	args := []any{a.ThreadID, a.Meta.Graph, string(a.Meta.Status), versions[n-1], interrupts, sixth, updated,
		versions, formats, kinds, datas, created, storekit.ExpiryNanos(a.Meta)}
	if sn := a.Snapshot; sn != nil {
		args = append(args, sn.Version, int32(sn.Format), nonNil(sn.Data))
		size += len(sn.Data)
	}
	if len(a.Outbox) > 0 {
		var notices noticeArgs
		size += notices.fill(a.Outbox, now)
		args = append(args, notices.ids, notices.graphs, notices.types, notices.interrupts, notices.datas, notices.created)
	}
	if len(a.Documents) > 0 {
		var docs documentArgs
		size += docs.fill(a.Documents, now)
		args = append(args, docs.putKinds, docs.putKeys, docs.putDatas, docs.putCreated, docs.putUpdated,
			docs.delKinds, docs.delKeys, docs.delDatas, docs.delIfUnchanged)
	}
	how := updateRow
	switch {
	case a.Expect == 0:
		how = insertRow
	case a.NoSync:
		how = stepRow
	}
	query := s.sql.appends[how][b2i(a.Snapshot != nil)][b2i(len(a.Outbox) > 0)][b2i(len(a.Documents) > 0)]
	var won int64
	b := s.appends
	if a.NoSync {
		b = s.lazyAppends
	}
	if err := b.do(&call{ctx: ctx, threadID: a.ThreadID, query: query, args: args, dest: []any{&won}, size: size}); err != nil {
		return s.wrap("append to", a.ThreadID, err)
	}
	if won != 1 {
		actual, err := s.Version(ctx, a.ThreadID)
		if err != nil {
			return err
		}
		return storekit.Conflict(a.ThreadID, a.Expect, actual)
	}
	return nil
}

// Load implements store.Store.
func (s *Store) Load(ctx context.Context, threadID string) (*store.Loaded, error) {
	var row loadRow
	err := s.pool.QueryRow(ctx, s.sql.load, threadID).Scan(row.dest()...)
	if err := s.found("load", threadID, err); err != nil {
		return nil, err
	}
	return row.loaded(threadID)
}

// found turns the error of a one-row read into the store's: NotFound when the
// thread has no row.
func (s *Store) found(op, threadID string, err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return storekit.NotFound(threadID)
	}
	if err != nil {
		return s.wrap(op, threadID, err)
	}
	return nil
}

// loadRow is a row of loadSQL's columns. In a claim (see Store.Lease) the
// thread's columns are NULL when it was not loaded, and graph and version when
// it does not exist.
type loadRow struct {
	graph, status                      *string
	version, created, updated, snapVer *int64
	snapFormat                         *int32
	interrupts, snapData               []byte
	versions, createdAt                []int64
	formats                            []int32
	kinds                              []string
	datas                              [][]byte
}

func (r *loadRow) dest() []any {
	return []any{&r.graph, &r.status, &r.version, &r.interrupts, &r.created, &r.updated,
		&r.snapVer, &r.snapFormat, &r.snapData, &r.versions, &r.formats, &r.kinds, &r.datas, &r.createdAt}
}

// loaded returns the thread the row holds, or nil if it holds none.
func (r *loadRow) loaded(threadID string) (*store.Loaded, error) {
	if r.graph == nil || r.status == nil || r.version == nil || r.created == nil || r.updated == nil {
		return nil, nil
	}
	out := &store.Loaded{Meta: store.Meta{ThreadID: threadID, Graph: *r.graph, Status: interlude.ThreadStatus(*r.status), Version: *r.version,
		CreatedAt: storekit.FromUnixNano(*r.created), UpdatedAt: storekit.FromUnixNano(*r.updated)}}
	var err error
	if out.Meta.Interrupts, err = storekit.DecodeInterrupts("postgres", threadID, r.interrupts); err != nil {
		return nil, err
	}
	if r.snapVer != nil {
		if err := storekit.CheckFormat(threadID, *r.snapVer, int(*r.snapFormat)); err != nil {
			return nil, err
		}
		out.Snapshot = &store.Snapshot{Version: *r.snapVer, Format: int(*r.snapFormat), Data: r.snapData}
	}
	if len(r.versions) > 0 {
		out.Records = make([]store.Record, len(r.versions))
	}
	for i, v := range r.versions {
		if err := storekit.CheckFormat(threadID, v, int(r.formats[i])); err != nil {
			return nil, err
		}
		out.Records[i] = store.Record{Version: v, Format: int(r.formats[i]), Kind: r.kinds[i], Data: r.datas[i], CreatedAt: storekit.FromUnixNano(r.createdAt[i])}
	}
	// The records are aggregated from a scan in version order, which
	// Postgres follows without promising to: make sure.
	slices.SortFunc(out.Records, func(a, b store.Record) int { return cmp.Compare(a.Version, b.Version) })
	return out, nil
}

// Version implements store.Store.
func (s *Store) Version(ctx context.Context, threadID string) (int64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, s.sql.version, threadID).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
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
	lim := int64(limit)
	if limit <= 0 {
		lim = math.MaxInt64
	}
	rows, err := s.pool.Query(ctx, s.sql.records, threadID, after, before, lim)
	if err != nil {
		return nil, s.wrap("read the records of", threadID, err)
	}
	defer rows.Close()
	var out []store.Record
	for rows.Next() {
		var r store.Record
		var format int32
		var created int64
		if err := rows.Scan(&r.Version, &format, &r.Kind, &r.Data, &created); err != nil {
			return nil, s.wrap("read the records of", threadID, err)
		}
		r.Format, r.CreatedAt = int(format), storekit.FromUnixNano(created)
		if err := storekit.CheckFormat(threadID, r.Version, r.Format); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
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

// History implements store.Store, in one statement (historySQL).
func (s *Store) History(ctx context.Context, threadID string, before int64, limit int) (*store.HistoryPage, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	lim := int64(limit)
	if limit <= 0 {
		lim = math.MaxInt64
	}
	rows, err := s.pool.Query(ctx, s.sql.history, threadID, before, lim)
	if err != nil {
		return nil, s.wrap("read the history of", threadID, err)
	}
	defer rows.Close()
	out := &store.HistoryPage{}
	known := false
	for rows.Next() {
		var (
			part    int32
			r       store.Record
			format  int32
			created int64
		)
		if err := rows.Scan(&part, &r.Version, &format, &r.Kind, &r.Data, &created); err != nil {
			return nil, s.wrap("read the history of", threadID, err)
		}
		if part == 3 {
			known = true
			continue
		}
		r.Format, r.CreatedAt = int(format), storekit.FromUnixNano(created)
		if err := storekit.CheckFormat(threadID, r.Version, r.Format); err != nil {
			return nil, err
		}
		switch part {
		case 0:
			out.Records = append(out.Records, r)
		case 1:
			out.Base = &store.Snapshot{Version: r.Version, Format: r.Format, Data: r.Data}
		case 2:
			out.Lead = append(out.Lead, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("read the history of", threadID, err)
	}
	if !known {
		return nil, storekit.NotFound(threadID)
	}
	// The parts are unions of scans in key order, which Postgres follows
	// without promising to: make sure.
	slices.SortFunc(out.Records, func(a, b store.Record) int { return cmp.Compare(b.Version, a.Version) })
	slices.SortFunc(out.Lead, func(a, b store.Record) int { return cmp.Compare(a.Version, b.Version) })
	return out, nil
}

// Meta implements store.Store.
func (s *Store) Meta(ctx context.Context, threadID string) (*store.Meta, error) {
	return s.meta(ctx, s.sql.meta, threadID)
}

// Head implements store.Header: the threads row without its interrupts.
func (s *Store) Head(ctx context.Context, threadID string) (*store.Meta, error) {
	return s.meta(ctx, s.sql.head, threadID)
}

// meta reads a thread's row with query, sql.meta or sql.head.
func (s *Store) meta(ctx context.Context, query, threadID string) (*store.Meta, error) {
	m, err := scanMeta(s.pool.QueryRow(ctx, query, threadID), threadID)
	if err := s.found("read", threadID, err); err != nil {
		return nil, err
	}
	return m, nil
}

// listQuery returns the SQL and arguments for q's page, fetching one row more
// than the page to know whether another follows.
//
// Every listing walks one index of threads in order. Without a status it joins
// each thread to its lease, if any, for the reported status. With a status it
// keeps the threads with that stored status and no lease (an anti-join probing
// the small leases table); for running and failed it adds, in a second branch,
// the threads whose lease is held or expired, found from the leases table.
func (s *Store) listQuery(q store.Query, limit int) (string, []any, error) {
	var (
		conds []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q.Graph != "" {
		conds = append(conds, "t.graph = "+arg(q.Graph))
	}
	if q.Cursor != "" {
		c, err := storekit.DecodeCursor(q.Cursor)
		if err != nil {
			return "", nil, err
		}
		conds = append(conds, "(t.updated_at, t.id) < ("+arg(c.UpdatedAt.UnixNano())+", "+arg(c.ThreadID)+")")
	}
	schema := s.sql.schema
	lim := arg(limit + 1)
	const order = " ORDER BY t.updated_at DESC, t.id DESC LIMIT "
	where := func(extra ...string) string {
		all := append(extra, conds...)
		if len(all) == 0 {
			return ""
		}
		return " WHERE " + strings.Join(all, " AND ")
	}
	cols := func(status string) string {
		return "SELECT t.id, t.graph, " + status + " AS status, t.version, t.interrupts, t.created_at, t.updated_at FROM " + schema + ".threads t"
	}
	if q.Status == "" {
		return cols(statusSQL) + " LEFT JOIN " + schema + ".leases l ON l.thread_id = t.id" + where() + order + lim, args, nil
	}
	status := arg(string(q.Status))
	// The threads whose record says the status and whose lease, if any, does
	// not override it (statusSQL): a held lease overrides every status, an
	// expired one only idle.
	overriding := " AND l.expires_at > now()"
	if q.Status == interlude.ThreadIdle {
		overriding = ""
	}
	stored := cols("t.status") + where("t.status = "+status,
		"NOT EXISTS (SELECT 1 FROM "+schema+".leases l WHERE l.thread_id = t.id"+overriding+")") + order + lim
	var leased string
	switch q.Status {
	case interlude.ThreadRunning:
		leased = "l.expires_at > now()"
	case interlude.ThreadFailed:
		leased = "l.expires_at <= now() AND t.status = 'idle'"
	default:
		return stored, args, nil
	}
	leased = cols(status+"::text") + " JOIN " + schema + ".leases l ON l.thread_id = t.id" + where(leased) + order + lim
	return "(" + stored + ") UNION ALL (" + leased + ") ORDER BY updated_at DESC, id DESC LIMIT " + lim, args, nil
}

// List implements store.Store. Each kind of listing walks an index in order and
// reads only the page; a listing by graph alone uses the index of all threads
// and skips the other graphs' threads.
func (s *Store) List(ctx context.Context, q store.Query) (*store.Page, error) {
	limit := storekit.PageLimit(q)
	query, args, err := s.listQuery(q, limit)
	if err != nil {
		return nil, err
	}
	threads, err := scanMetas(s.pool.Query(ctx, query, args...))
	if err != nil {
		return nil, fmt.Errorf("postgres store: list threads: %w", err)
	}
	return storekit.NewPage(threads, limit), nil
}

// Expired implements store.ExpiryIndex. It walks the index of the threads'
// earliest expiries (schema version 5) from the start, so it reads only the
// threads it returns; their status is reported as Meta reports it.
func (s *Store) Expired(ctx context.Context, now time.Time, graphs []string, limit int) ([]store.Meta, error) {
	limit = storekit.ExpiredLimit(limit)
	var names any // NULL: every graph
	if len(graphs) > 0 {
		names = graphs
	}
	threads, err := scanMetas(s.pool.Query(ctx, s.sql.expiredQuestions, storekit.UnixNano(now), limit, names))
	if err != nil {
		return nil, fmt.Errorf("postgres store: list the threads whose questions expired: %w", err)
	}
	return threads, nil
}

// Unfinished implements store.RecoveryIndex. It walks the listing index of the
// running threads (threads_inbox) from its oldest end and leaves out those a
// live run holds, so that a replica finishes only threads whose run died; it
// reads only the threads it returns, and the leases of the running ones.
func (s *Store) Unfinished(ctx context.Context, graphs []string, limit int) ([]store.Meta, error) {
	var names any // NULL: every graph
	if len(graphs) > 0 {
		names = graphs
	}
	threads, err := scanMetas(s.pool.Query(ctx, s.sql.unfinished, storekit.UnfinishedLimit(limit), names))
	if err != nil {
		return nil, fmt.Errorf("postgres store: list the threads whose run is unfinished: %w", err)
	}
	return threads, nil
}

// scanMetas scans the rows of a listing, which start with the thread's id.
func scanMetas(rows pgx.Rows, err error) ([]store.Meta, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return storekit.ScanMetas(rows, "postgres")
}

// Delete implements store.Store. It removes the thread's row first, in one
// transaction with its records, snapshot and logged events, so an append racing
// with it either lands before (and is deleted too) or conflicts. A lease held by
// a live run stays until that run ends; an expired one goes.
func (s *Store) Delete(ctx context.Context, threadID string) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range []string{s.sql.delThread, s.sql.delRecords, s.sql.delSnap, s.sql.delLease, s.sql.delEvents, s.sql.delDocs} {
			if _, err := tx.Exec(ctx, q, threadID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.wrap("delete", threadID, err)
	}
	return nil
}

// Close implements store.Store. It closes the pool if Open made it, and the
// store's own pool for leases and events.
func (s *Store) Close() error {
	s.fast.Close()
	if s.owned {
		s.pool.Close()
	}
	return nil
}

func (s *Store) wrap(op, threadID string, err error) error {
	var ie *interlude.Error
	if errors.As(err, &ie) {
		return err
	}
	return fmt.Errorf("postgres store: %s thread %q: %w", op, threadID, err)
}

// scanMeta scans a threads row (storekit.ScanMeta). With threadID "" the row
// starts with the id.
func scanMeta(row storekit.Scanner, threadID string) (*store.Meta, error) {
	return storekit.ScanMeta(row, "postgres", threadID)
}

// nonNil turns nil into an empty slice: the data columns are NOT NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
