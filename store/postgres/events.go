package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// EventLog is the log of graph run events that the server replicas sharing a
// store exchange through its database, so that a listener connected to any
// replica sees the events of runs on every replica. It implements
// server.EventLog: pass it to server.NewEventHub with server.WithHubLog.
//
// Events are rows of the events table, numbered by its bigserial id; the id is
// the event's id on every replica (the SSE id a listener reconnects with).
// Publish queues an event and a writer goroutine inserts what is queued in one
// statement, then wakes the replicas with one small NOTIFY (whose payload limit
// of 8000 bytes never applies to the events themselves). Writers take an advisory
// lock around their insert, so ids become visible in increasing order: a reader
// that has seen id n has seen every event below it. Each replica's Listen keeps
// one connection that LISTENs and reads the new rows in id order; Read serves a
// listener catching up after a reconnect. Event writes, like lease writes, commit
// without waiting for the WAL flush: events are a live feed, not the record.
//
// Old events are trimmed, by every replica, every TrimEvery: those older than
// KeepFor, and all but the newest KeepEvents. A listener that reconnects later
// than that resumes from the oldest event kept.
type EventLog struct {
	s       *Store
	cfg     EventConfig
	channel string // the NOTIFY channel
	queue   chan queued
	stop    context.CancelFunc
	ctx     context.Context
	done    chan struct{} // the writer and the trimmer have ended
	closing sync.Once
	closed  atomic.Bool
	dropped atomic.Uint64
	start   int64 // the newest id when the log was opened: Listen delivers the events after it

	armMu     sync.Mutex
	listening bool          // Listen listens and knows where it is: Ready returns at once
	armed     chan struct{} // closed when Listen next starts listening, while a Ready waits
	arm       chan struct{} // wakes a Listen that stopped listening
}

// EventConfig tunes an EventLog; zero fields take their defaults.
type EventConfig struct {
	// KeepFor is how long events are kept (default one hour).
	KeepFor time.Duration
	// KeepEvents caps how many events are kept (default 1,000,000).
	KeepEvents int64
	// TrimEvery is how often each replica trims the log (default 10 seconds).
	TrimEvery time.Duration
	// Batch caps how many events one insert writes (default 512).
	Batch int
	// Linger is how long an event nobody waits for may wait for others before
	// it is written (default 5 milliseconds): a run's events then mostly go in
	// one write with its lease's release, which is written at once.
	Linger time.Duration
	// Poll bounds how long Listen waits for a notification before it reads the
	// log anyway (default 5 seconds); notifications make it read at once.
	Poll time.Duration
	// Logger reports connection trouble and trimming failures (default
	// slog.Default()).
	Logger *slog.Logger
}

// queued is an event to log or, with release set, a lease to give up.
type queued struct {
	threadID, name string
	data           []byte
	release        *lease
	flushed        chan struct{} // closed once written, for Publish with wait and releases
	err            *error        // set to the write's error, for releases
}

// EventLog opens the store's event log and starts its writer and its trimmer,
// which run until Close. Events go to the store's schema, so separate schemas
// are separate logs. Listen delivers the events logged after EventLog returns.
func (s *Store) EventLog(ctx context.Context, cfg EventConfig) (*EventLog, error) {
	if cfg.KeepFor <= 0 {
		cfg.KeepFor = time.Hour
	}
	if cfg.KeepEvents <= 0 {
		cfg.KeepEvents = 1_000_000
	}
	if cfg.TrimEvery <= 0 {
		cfg.TrimEvery = 10 * time.Second
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 512
	}
	if cfg.Linger <= 0 {
		cfg.Linger = 5 * time.Millisecond
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var start int64
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(max(id), 0) FROM `+s.sql.schema+`.events`).Scan(&start); err != nil {
		return nil, fmt.Errorf("postgres event log: read its end: %w", err)
	}
	run, stop := context.WithCancel(context.Background())
	l := &EventLog{s: s, cfg: cfg, channel: notifyChannel(s.schema), queue: make(chan queued, 8192),
		ctx: run, stop: stop, done: make(chan struct{}), start: start, arm: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	wg.Go(l.write)
	wg.Go(l.trimLoop)
	go func() { wg.Wait(); close(l.done) }()
	s.events.Store(l)
	return l, nil
}

// notifyChannel names the schema's NOTIFY channel (at most 63 bytes, as
// channel names must be).
func notifyChannel(schema string) string {
	h := fnv.New64a()
	h.Write([]byte(schema))
	return fmt.Sprintf("interlude_events_%016x", h.Sum64())
}

// Publish appends an event of a thread to the log: name and data are what a
// listener receives. Without wait it queues the event and returns; with wait it
// returns once the event, and every event published before it, is in the log
// (or could not be written), so a run that waits on its last event has all its
// events logged before another run of the thread, on any replica, logs its own.
// If the store holds the thread's lease, Publish does not wait: the lease's
// release will be written after the event, in the same transaction or a later
// one, which gives the same order for one round trip less. Events published
// after Close are dropped.
func (l *EventLog) Publish(threadID, name string, data []byte, wait bool) {
	if l.closed.Load() {
		l.dropped.Add(1)
		return
	}
	if wait && l.s.holds(threadID) {
		wait = false
	}
	q := queued{threadID: threadID, name: name, data: nonNil(data)}
	if wait {
		q.flushed = make(chan struct{})
	}
	select {
	case l.queue <- q:
	case <-l.ctx.Done():
		l.dropped.Add(1)
		return
	}
	if wait {
		select {
		case <-q.flushed:
		case <-l.done:
		}
	}
}

// release gives the lease up through the writer, after the events queued
// before it, and waits for that write. sent is false if the log is closed: the
// caller then releases the lease itself.
func (l *EventLog) release(ls *lease) (err error, sent bool) {
	if l.closed.Load() {
		return nil, false
	}
	q := queued{threadID: ls.threadID, release: ls, flushed: make(chan struct{}), err: &err}
	select {
	case l.queue <- q:
	case <-l.ctx.Done():
		return nil, false
	}
	select {
	case <-q.flushed:
		return err, true
	case <-l.done:
		return nil, false // closed before the write: release it directly
	}
}

// Dropped counts the events that could not be logged: published after Close,
// or lost to a write that kept failing.
func (l *EventLog) Dropped() uint64 { return l.dropped.Load() }

// write inserts queued events in batches until Close, then flushes what is left.
func (l *EventLog) write() {
	batch := make([]queued, 0, l.cfg.Batch)
	for {
		var q queued
		select {
		case q = <-l.queue:
		case <-l.ctx.Done():
			// Close: write what was queued before it.
			for {
				select {
				case q := <-l.queue:
					batch = append(batch, q)
					if len(batch) == l.cfg.Batch {
						l.flush(batch)
						batch = batch[:0]
					}
					continue
				default:
				}
				break
			}
			if len(batch) > 0 {
				l.flush(batch)
			}
			return
		}
		batch = append(batch, q)
		l.gather(&batch, q.flushed != nil)
		l.flush(batch)
		clear(batch)
		batch = batch[:0]
	}
}

// gather adds to batch what is queued. Unless someone waits for the batch
// (urgent), it also waits up to Linger for something that is waited for,
// collecting what arrives meanwhile.
func (l *EventLog) gather(batch *[]queued, urgent bool) {
	var linger <-chan time.Time
	if !urgent {
		t := time.NewTimer(l.cfg.Linger)
		defer t.Stop()
		linger = t.C
	}
	for len(*batch) < l.cfg.Batch {
		if urgent {
			select {
			case q := <-l.queue:
				*batch = append(*batch, q)
				continue
			default:
				return
			}
		}
		select {
		case q := <-l.queue:
			*batch = append(*batch, q)
			urgent = q.flushed != nil
		case <-linger:
			return
		case <-l.ctx.Done():
			return
		}
	}
}

// flush writes a batch, trying a few times, and releases the publishers that
// wait on it.
func (l *EventLog) flush(batch []queued) {
	defer func() {
		for _, q := range batch {
			if q.flushed != nil {
				close(q.flushed)
			}
		}
	}()
	var (
		threads, names []string
		datas          [][]byte
		released       []string
		tokens         []int64
	)
	for _, q := range batch {
		if q.release != nil {
			released, tokens = append(released, q.threadID), append(tokens, q.release.token)
			continue
		}
		threads, names, datas = append(threads, q.threadID), append(names, q.name), append(datas, q.data)
	}
	var err error
	for attempt := range 5 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 100 * time.Millisecond) // back off from a failing database
		}
		// Not l.ctx: the last batch is written after Close cancels it.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = l.insert(ctx, threads, names, datas, released, tokens)
		cancel()
		if err == nil {
			return
		}
	}
	for _, q := range batch {
		if q.err != nil {
			*q.err = err
		}
	}
	if n := len(threads); n > 0 {
		l.dropped.Add(uint64(n))
		l.cfg.Logger.Error("postgres event log: events lost", "events", n, "err", err)
	}
}

// insert writes events, and gives up leases after them, in one transaction, in
// one round trip: the advisory lock orders the writers of every replica, so ids
// become visible in increasing order; the NOTIFY, which carries the batch's
// last id, is delivered when the transaction commits.
func (l *EventLog) insert(ctx context.Context, threads, names []string, datas [][]byte, released []string, tokens []int64) error {
	ident := l.s.sql.schema
	release := `DELETE FROM ` + ident + `.leases l USING unnest($%d::text[], $%d::bigint[]) AS r (thread_id, token)
		WHERE l.thread_id = r.thread_id AND l.token = r.token`
	if len(threads) == 0 {
		_, err := l.s.fast.Exec(ctx, fmt.Sprintf(release, 1, 2), released, tokens)
		return err
	}
	// One statement, so one implicit transaction, on the pool whose commits do
	// not wait for the WAL flush. The lock is taken before the first row gets
	// its id: every row comes out of the join with the lock's one row, and the
	// sort before the insert reads them all. The releases, if any, ride along.
	query := `WITH ins AS (
			INSERT INTO ` + ident + `.events (thread_id, name, data)
			SELECT x.thread_id, x.name, x.data
			FROM (SELECT pg_advisory_xact_lock($5)) AS lock,
				unnest($1::text[], $2::text[], $3::bytea[]) WITH ORDINALITY AS x (thread_id, name, data, n)
			ORDER BY x.n
			RETURNING id
		)`
	args := []any{threads, names, datas, l.channel, eventLockKey(l.s.schema)}
	if len(released) > 0 {
		query += `, released AS (` + fmt.Sprintf(release, 6, 7) + `)`
		args = append(args, released, tokens)
	}
	_, err := l.s.fast.Exec(ctx, query+`
		SELECT pg_notify($4, max(id)::text) FROM ins`, args...)
	return err
}

func eventLockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("interlude/store/postgres events " + schema))
	return int64(h.Sum64())
}

// Read calls fn with the thread's events whose id is above after, oldest first,
// until fn returns an error (which Read returns) or none are left.
func (l *EventLog) Read(ctx context.Context, threadID string, after int64, fn func(id int64, name string, data []byte) error) error {
	const page = 1000
	for {
		rows, err := l.s.pool.Query(ctx, `SELECT id, name, data FROM `+l.s.sql.schema+`.events
			WHERE thread_id = $1 AND id > $2 ORDER BY id LIMIT $3`, threadID, after, page)
		if err != nil {
			return fmt.Errorf("postgres event log: read the events of thread %q: %w", threadID, err)
		}
		var (
			id   int64
			name string
			data []byte
			n    int
		)
		_, err = pgx.ForEachRow(rows, []any{&id, &name, &data}, func() error {
			n++
			after = id
			return fn(id, name, data)
		})
		if err != nil {
			return err
		}
		if n < page {
			return nil
		}
	}
}

// Listen calls deliver with every event logged since the EventLog was opened,
// by any replica, in id order, until ctx ends; it then returns ctx's error. It
// keeps one connection of its own, LISTENing for the writers' notifications; if
// that connection breaks it reconnects and carries on from the last event
// delivered, so nothing is skipped unless it was trimmed meanwhile. deliver runs
// on Listen's goroutine and must not block for long.
//
// Listen LISTENs only while wanted reports true. Once nobody listens on this
// replica it stops (UNLISTEN), so the database neither signals it nor sends it
// anything per event, and the events logged meanwhile are passed over. A
// listener that arrives calls Ready, which starts it again.
func (l *EventLog) Listen(ctx context.Context, wanted func() bool, deliver func(id int64, threadID, name string, data []byte)) error {
	pos := &position{last: l.start, current: true}
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		err := l.listen(ctx, pos, wanted, deliver)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		l.cfg.Logger.Warn("postgres event log: listening failed; reconnecting", "err", err, "in", wait)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// position is where Listen is in the log.
type position struct {
	last    int64 // the last id delivered or passed over
	current bool  // no event after last has been passed over unread
}

// Ready returns once Listen delivers every event logged from now on,
// starting it again if it stopped because nobody listened. Call it when a
// listener arrives, after wanted reports true, and before telling the listener
// it is subscribed. It fails if ctx ends first (while the database cannot be
// reached, say).
func (l *EventLog) Ready(ctx context.Context) error {
	l.armMu.Lock()
	if l.listening {
		l.armMu.Unlock()
		return nil
	}
	if l.armed == nil {
		l.armed = make(chan struct{})
	}
	armed := l.armed
	l.armMu.Unlock()
	select {
	case l.arm <- struct{}{}:
	default:
	}
	select {
	case <-armed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("postgres event log: not listening yet: %w", ctx.Err())
	}
}

// setListening records whether Listen listens, releasing the Ready calls
// waiting for it.
func (l *EventLog) setListening(on bool) {
	l.armMu.Lock()
	defer l.armMu.Unlock()
	l.listening = on
	if on && l.armed != nil {
		close(l.armed)
		l.armed = nil
	}
}

// stillWanted reports whether anybody listens; if nobody does, it marks Listen
// as not listening in the same step, so that a Ready racing with it waits for
// Listen to start again.
func (l *EventLog) stillWanted(wanted func() bool) bool {
	l.armMu.Lock()
	defer l.armMu.Unlock()
	if wanted() {
		return true
	}
	l.listening = false
	return false
}

// ListenerName is the application_name of the connections Listen keeps, as
// pg_stat_activity shows them (after the store's own application_name, if it
// has one).
const ListenerName = "interlude event listener"

// listen is one connection's life in Listen.
func (l *EventLog) listen(ctx context.Context, pos *position, wanted func() bool, deliver func(id int64, threadID, name string, data []byte)) error {
	cfg := l.s.pool.Config().ConnConfig.Copy()
	if app := cfg.RuntimeParams["application_name"]; app != "" {
		cfg.RuntimeParams["application_name"] = app + " " + ListenerName
	} else {
		cfg.RuntimeParams["application_name"] = ListenerName
	}
	// Notifications say "read again": many that arrive during one read make
	// one more read, not one each.
	wake := make(chan struct{}, 1)
	cfg.OnNotification = func(*pgconn.PgConn, *pgconn.Notification) {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	defer l.setListening(false) // until the next connection listens
	channel := pgx.Identifier{l.channel}.Sanitize()
	on := false // LISTEN is in effect on conn
	for {
		if !l.stillWanted(wanted) {
			if on {
				if _, err := conn.Exec(ctx, "UNLISTEN "+channel); err != nil {
					return err
				}
				on = false
			}
			pos.current = false
			select {
			case <-l.arm:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		if !on {
			if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
				return err
			}
			on = true
			if !pos.current {
				// Nobody here waited for what was logged while not listening:
				// go on from the end of the log, read after LISTEN took effect.
				if err := conn.QueryRow(ctx, `SELECT COALESCE(max(id), 0) FROM `+l.s.sql.schema+`.events`).Scan(&pos.last); err != nil {
					return err
				}
				pos.current = true
			}
			l.setListening(true)
		}
		// Read everything new, then wait for a notification. Reading after
		// LISTEN took effect means no event committed since is missed.
		if err := l.readNew(ctx, conn, &pos.last, deliver); err != nil {
			return err
		}
		select {
		case <-wake: // notified during the read
			continue
		default:
		}
		// A bound on the wait, so that a lost notification (there should be
		// none) delays events by seconds, not forever, and so that a replica
		// whose listeners left stops listening. A timeout leaves the
		// connection usable.
		wctx, cancel := context.WithTimeout(ctx, l.cfg.Poll)
		err := conn.PgConn().WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
			return err
		}
		select {
		case <-wake:
		default:
		}
	}
}

// readNew delivers the events logged after last, in pages, moving last on.
func (l *EventLog) readNew(ctx context.Context, conn *pgx.Conn, last *int64, deliver func(id int64, threadID, name string, data []byte)) error {
	const page = 1000
	for {
		rows, err := conn.Query(ctx, `SELECT id, thread_id, name, data FROM `+l.s.sql.schema+`.events WHERE id > $1 ORDER BY id LIMIT $2`, *last, page)
		if err != nil {
			return err
		}
		var (
			id           int64
			thread, name string
			data         []byte
			n            int
		)
		_, err = pgx.ForEachRow(rows, []any{&id, &thread, &name, &data}, func() error {
			n++
			*last = id
			deliver(id, thread, name, data)
			return nil
		})
		if err != nil || n < page {
			return err
		}
	}
}

// trimLoop trims the log every TrimEvery until Close.
func (l *EventLog) trimLoop() {
	t := time.NewTicker(l.cfg.TrimEvery)
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
			if err := l.Trim(l.ctx); err != nil && l.ctx.Err() == nil {
				l.cfg.Logger.Warn("postgres event log: trimming failed", "err", err)
			}
		}
	}
}

// Trim deletes the events older than KeepFor and all but the newest KeepEvents,
// and the leases that expired more than KeepFor ago on threads that were never
// written (their runs died before the first commit). The log's trimmer calls it
// every TrimEvery.
func (l *EventLog) Trim(ctx context.Context) error {
	ident := l.s.sql.schema
	keepFor := l.cfg.KeepFor.Microseconds()
	// The first event new enough is found by walking the ids upwards from the
	// oldest, past exactly the events to delete.
	if _, err := l.s.pool.Exec(ctx, `DELETE FROM `+ident+`.events WHERE id < GREATEST(
			(SELECT max(id) FROM `+ident+`.events) - $1 + 1,
			COALESCE((SELECT id FROM `+ident+`.events WHERE created_at >= now() - $2::bigint * interval '1 microsecond' ORDER BY id LIMIT 1),
				(SELECT max(id) + 1 FROM `+ident+`.events)))`, l.cfg.KeepEvents, keepFor); err != nil {
		return fmt.Errorf("postgres event log: trim events: %w", err)
	}
	if _, err := l.s.pool.Exec(ctx, `DELETE FROM `+ident+`.leases l
		WHERE l.expires_at < now() - $1::bigint * interval '1 microsecond'
		AND NOT EXISTS (SELECT 1 FROM `+ident+`.threads t WHERE t.id = l.thread_id)`, keepFor); err != nil {
		return fmt.Errorf("postgres event log: trim leases: %w", err)
	}
	return nil
}

// Close writes the events queued so far, stops the writer and the trimmer, and
// drops events published afterwards. Listen runs on until its own context ends.
func (l *EventLog) Close() error {
	l.closing.Do(func() {
		l.closed.Store(true)
		l.s.events.CompareAndSwap(l, nil)
		l.stop()
	})
	<-l.done
	return nil
}
