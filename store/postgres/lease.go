package postgres

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
	"github.com/jackc/pgx/v5"
)

var (
	_ store.Leaser       = (*Store)(nil)
	_ store.LeaseWatcher = (*Store)(nil)
)

// lease is a held thread lease.
type lease struct {
	s        *Store
	threadID string
	owner    string
	token    int64
	ttl      time.Duration
	graph    string // the thread's graph and version when the lease was taken
	version  int64
	loaded   *store.Loaded // the thread as loaded with the lease, if asked
}

// Thread implements store.Lease.
func (l *lease) Thread() (string, int64) { return l.graph, l.version }

// Loaded implements store.Lease.
func (l *lease) Loaded() *store.Loaded { return l.loaded }

// Lease implements store.Leaser. If another owner holds an unexpired lease, it
// fails with an error matching interlude.ErrThreadBusy that names the holder.
//
// A run holds its thread's lease (a row of the leases table) for as long as it
// runs, renewing it before it expires; the graph runtime takes it around every
// run (graph.WithLease). Taking a lease is one atomic upsert that succeeds only if
// the thread has no lease, its lease has expired, or the same owner holds it; the
// database's clock decides expiry, so the replicas' clocks do not matter. A
// replica that dies mid-run leaves its lease behind, and once it expires any
// replica may take the thread over: the run that died committed nothing for the
// step it was running, so the thread continues from its last committed record.
//
// Status rule: a thread whose lease is held reads as running, in Meta, Load and
// List alike. A thread whose lease expired without being released (its process
// died) reads as its last record says if that record ended a run (interrupted,
// with its questions, or failed) or left the run more to do (running: answers
// whose step is unfinished, or a step after which nodes were due; a server
// finishes the run, see store.RecoveryIndex); otherwise the process died before
// its run committed anything, and the thread reads as failed until a run takes
// its lease over: a plain continue runs on from the last committed record. The lease, not the record, says so, so no
// write is needed when a process dies.
//
// Taking a lease also reads the thread's graph and version (Lease.Thread), in
// the same statement, and, if the request asks, loads the thread unless the
// caller's copy is current (Lease.Loaded), in the same round trip: a run learns
// whose thread it is and gets its state without another trip.
//
// Lease writes commit without waiting for the WAL to reach disk
// (synchronous_commit off on the store's second pool): a lease lost in a database
// crash is harmless, because every append is a durable compare-and-set, and an
// append's flush makes the earlier lease writes durable too.
func (s *Store) Lease(ctx context.Context, req store.LeaseRequest) (store.Lease, error) {
	threadID := req.ThreadID
	if threadID == "" {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "a lease needs a thread id"}
	}
	if req.TTL <= 0 {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("a lease needs a positive time to live, not %s", req.TTL)}
	}
	l := &lease{s: s, threadID: threadID, owner: req.Owner, token: newToken(), ttl: req.TTL}
	// A lease released between the refused upsert and the look at its holder
	// leaves nothing to name: try again.
	for range 3 {
		taken, err := s.take(ctx, req, l)
		if err != nil {
			return nil, s.wrap("lease", threadID, err)
		}
		if taken {
			s.held.Store(threadID, l.token)
			return l, nil
		}
		var (
			holder string
			left   float64
		)
		err = s.fast.QueryRow(ctx, s.sql.holder, threadID).Scan(&holder, &left)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, s.wrap("lease", threadID, err)
		}
		if left > 0 {
			return nil, busy(threadID, holder, time.Duration(left*float64(time.Second)))
		}
	}
	return nil, busy(threadID, "another run", 0)
}

// take tries to take the lease l, and loads the thread with it if req asks, in
// one statement. It reports false if another owner's lease runs.
func (s *Store) take(ctx context.Context, req store.LeaseRequest, l *lease) (bool, error) {
	var row loadRow
	var err error
	if req.Load {
		var created int64 // matches no thread when the copy's creation time is unknown
		if !req.CachedCreatedAt.IsZero() {
			created = req.CachedCreatedAt.UnixNano()
		}
		err = s.leases.queryRow(ctx, req.ThreadID, s.sql.claim, []any{req.ThreadID, req.Owner, l.token, req.TTL.Microseconds(), req.Cached, created}, row.dest()...)
	} else {
		err = s.leases.queryRow(ctx, req.ThreadID, s.sql.lease, []any{req.ThreadID, req.Owner, l.token, req.TTL.Microseconds()}, &row.graph, &row.version)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if row.graph != nil && row.version != nil {
		l.graph, l.version = *row.graph, *row.version
	}
	// A thread that cannot be read (an unknown format, say) is left for the
	// run's own Load to report, with the lease held as usual.
	l.loaded, _ = row.loaded(req.ThreadID)
	return true, nil
}

func busy(threadID, holder string, left time.Duration) error {
	msg := fmt.Sprintf("thread %q is being run by %s", threadID, holder)
	if left > 0 {
		msg += fmt.Sprintf(" (its lease runs for %s more unless renewed)", left.Round(time.Millisecond))
	}
	return &interlude.Error{Code: interlude.CodeThreadBusy, Message: msg + "; try again when that run ends"}
}

// Renew implements store.Lease. It fails with an error matching
// interlude.ErrThreadBusy if the lease was lost: another run took it over after it
// expired, or it was released.
func (l *lease) Renew(ctx context.Context) error {
	tag, err := l.s.fast.Exec(ctx, l.s.sql.renew, l.threadID, l.token, l.ttl.Microseconds())
	if err != nil {
		return l.s.wrap("renew the lease on", l.threadID, err)
	}
	if tag.RowsAffected() == 0 {
		return &interlude.Error{Code: interlude.CodeThreadBusy, Message: fmt.Sprintf(
			"the lease of %s on thread %q was lost: it expired and another run took the thread over; this run stops without committing more", l.owner, l.threadID)}
	}
	return nil
}

// Release implements store.Lease. Releasing a lease that was lost is not an
// error, and leaves the new holder's lease alone.
//
// With the store's event log open, the thread's events published while the
// lease was held and not yet written go in the same statement as the release:
// a run's events are logged no later than its lease is given up, so another
// run of the thread, on any replica, logs its own after them, and the run pays
// one round trip for both (EventLog.Publish does not wait for a thread whose
// lease is held here). The release shares its round trip with the store's
// other lease writes.
func (l *lease) Release(ctx context.Context) error {
	l.s.held.CompareAndDelete(l.threadID, l.token)
	if ev := l.s.events.Load(); ev != nil {
		if sent, err := ev.release(ctx, l); sent {
			if err != nil {
				return l.s.wrap("release the lease on", l.threadID, err)
			}
			return nil
		}
	}
	var released int64
	if err := l.s.leases.queryRow(ctx, l.threadID, l.s.sql.release, []any{l.threadID, l.token}, &released); err != nil {
		return l.s.wrap("release the lease on", l.threadID, err)
	}
	return nil
}

// ExpiredLeases implements store.LeaseWatcher: one statement marks the expired
// leases not yet reported and returns them, so that of the replicas asking at
// once, each expiry goes to one.
func (s *Store) ExpiredLeases(ctx context.Context) ([]store.ExpiredLease, error) {
	rows, err := s.fast.Query(ctx, s.sql.expired)
	if err != nil {
		return nil, fmt.Errorf("postgres store: find expired leases: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.ExpiredLease, error) {
		var e store.ExpiredLease
		err := row.Scan(&e.ThreadID, &e.Version)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: find expired leases: %w", err)
	}
	return out, nil
}

// holds reports whether this store holds the thread's lease.
func (s *Store) holds(threadID string) bool {
	_, ok := s.held.Load(threadID)
	return ok
}

func newToken() int64 {
	var b [8]byte
	rand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:]))
}

// leaseSQL returns the lease statements for schema (already quoted).
func leaseSQL(q *queries, schema string) {
	// The upsert takes the lease if it is free, expired or the owner's own; it
	// touches no row when another owner's lease runs.
	upsert := `INSERT INTO ` + schema + `.leases AS l (thread_id, owner, token, expires_at)
	VALUES ($1, $2, $3, now() + $4::bigint * interval '1 microsecond')
	ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at, announced = false
	WHERE l.expires_at <= now() OR l.owner = excluded.owner`
	q.lease = `WITH t AS (SELECT graph, version FROM ` + schema + `.threads WHERE id = $1)
	` + upsert + `
	RETURNING (SELECT graph FROM t), (SELECT version FROM t)`
	// The claim is the lease and, unless the thread is at version $5 and was
	// created at $6 (the caller's copy), the thread as Load reads it: running, as
	// its lease is now held. It has no row when the lease was not taken.
	q.claim = `WITH cur AS (SELECT graph, version FROM ` + schema + `.threads WHERE id = $1),
	took AS (` + upsert + ` RETURNING 1)
	SELECT cur.graph, x.status, cur.version, x.interrupts, x.created_at, x.updated_at,
		x.snap_version, x.snap_format, x.snap_data, x.versions, x.formats, x.kinds, x.datas, x.created
	FROM took LEFT JOIN cur ON true
	LEFT JOIN LATERAL (` + loadSQL(schema, `'running'::text`, false) + ` AND (t.version <> $5 OR t.created_at <> $6)
	) x (graph, status, version, interrupts, created_at, updated_at, snap_version, snap_format, snap_data, versions, formats, kinds, datas, created) ON true`
	q.holder = `SELECT owner, extract(epoch FROM expires_at - now())::float8 FROM ` + schema + `.leases WHERE thread_id = $1`
	q.renew = `UPDATE ` + schema + `.leases SET expires_at = now() + $3::bigint * interval '1 microsecond', announced = false WHERE thread_id = $1 AND token = $2`
	q.expired = `UPDATE ` + schema + `.leases l SET announced = true WHERE l.expires_at <= now() AND NOT l.announced
	RETURNING l.thread_id, COALESCE((SELECT t.version FROM ` + schema + `.threads t WHERE t.id = l.thread_id), 0)`
	q.release = `WITH d AS (DELETE FROM ` + schema + `.leases WHERE thread_id = $1 AND token = $2 RETURNING 1) SELECT count(*) FROM d`
}
