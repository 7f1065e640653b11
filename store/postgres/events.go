package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// EventLog is the log of graph run events that the server replicas sharing a
// store exchange through its database, so that a listener connected to any
// replica sees the events of runs on every replica. It implements
// host.EventLog: pass it to the hub with host.WithHubLog.
//
// Events are rows of the events table, numbered by its bigserial id; the id is
// the event's id on every replica (the SSE id a listener reconnects with).
// Each thread's ids rise in the order its events are published, and become
// visible in that order, as long as its runs hold its lease (as every run on a
// shared store does) or wait on their last event: a run's events are written
// before or with the release of its lease, and the thread's next run, on any
// replica, writes its own only after it takes the lease. So a reader that has
// seen a thread's event n has seen all of the thread's events below n, with no
// lock that orders the writers of different threads. (A run that lost its
// lease to another may have its last events logged after the new run's.)
//
// Publish buffers the events of a thread whose lease the store holds: they go
// with the lease's release, in the same statement, or, for a run that lasts,
// every Linger with the other threads' buffered events, in one statement. Those
// statements share round trips and commits with the store's lease claims. Each
// wakes the replicas with one small NOTIFY naming its transaction and its range
// of ids (the payload limit of 8000 bytes never applies to the events
// themselves). Each replica's Listen keeps one connection that LISTENs and
// reads exactly the rows each notification names; Read serves a listener
// catching up after a reconnect. Event writes, like lease writes, commit
// without waiting for the WAL flush: events are a live feed, not the record.
//
// Old events are trimmed, by every replica, every TrimEvery: those older than
// KeepFor, and all but the newest KeepEvents. A listener that reconnects later
// than that resumes from the oldest event kept.
type EventLog struct {
	s       *Store
	cfg     EventConfig
	channel string // the NOTIFY channel
	stop    context.CancelFunc
	ctx     context.Context
	done    chan struct{} // the flusher and the trimmer have ended
	closing sync.Once
	closed  atomic.Bool // set under mu
	dropped atomic.Uint64

	mu      sync.Mutex
	pending map[string]*backlog // events published and not yet sent, per thread
	count   int                 // events in pending
	size    int                 // their bytes
	kick    chan struct{}       // the flusher has events to write
	full    chan struct{}       // the flusher should write them now

	armMu     sync.Mutex
	listening bool          // Listen listens: Ready returns at once
	armed     chan struct{} // closed when Listen next starts listening, while a Ready waits
	arm       chan struct{} // wakes a Listen that stopped listening
}

// backlog is a thread's events waiting to be written, in the order published.
type backlog struct {
	names []string
	datas [][]byte
}

// flushBytes is how many bytes of events may wait to be written before the
// flusher writes them without waiting out Linger.
const flushBytes = 1 << 20

// EventConfig tunes an EventLog; zero fields take their defaults.
type EventConfig struct {
	// KeepFor is how long events are kept (default one hour).
	KeepFor time.Duration
	// KeepEvents caps how many events are kept (default 1,000,000).
	KeepEvents int64
	// TrimEvery is how often each replica trims the log (default 10 seconds).
	TrimEvery time.Duration
	// Batch is how many events may wait to be written before they are written
	// without waiting out Linger (default 512).
	Batch int
	// Linger is how long an event nobody waits for may wait for others before
	// it is written (default 5 milliseconds): a short run's events then mostly
	// go in one statement with its lease's release.
	Linger time.Duration
	// Poll bounds how long Listen waits for a notification before it checks
	// whether anybody still listens (default 5 seconds).
	Poll time.Duration
	// Logger reports connection trouble, lost events and trimming failures
	// (default slog.Default()).
	Logger *slog.Logger
}

// EventLog opens the store's event log and starts its flusher and its trimmer,
// which run until Close. Events go to the store's schema, so separate schemas
// are separate logs.
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
	if err := s.pool.Ping(ctx); err != nil {
		return nil, fmt.Errorf("postgres event log: reach the database: %w", err)
	}
	run, stop := context.WithCancel(context.Background())
	l := &EventLog{s: s, cfg: cfg, channel: notifyChannel(s.schema), ctx: run, stop: stop, done: make(chan struct{}),
		pending: make(map[string]*backlog), kick: make(chan struct{}, 1), full: make(chan struct{}, 1), arm: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	wg.Go(l.flushLoop)
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
// listener receives. Without wait it buffers the event and returns; with wait
// it returns once the event, and the thread's events published before it, are
// in the log (or could not be written), so a run that waits on its last event
// has all its events logged before another run of the thread, on any replica,
// logs its own. If the store holds the thread's lease, Publish does not wait:
// the lease's release writes the thread's events, which gives the same order
// for one round trip less. Events published after Close are dropped.
func (l *EventLog) Publish(threadID, name string, data []byte, wait bool) {
	l.mu.Lock()
	if l.closed.Load() {
		l.mu.Unlock()
		l.dropped.Add(1)
		return
	}
	b := l.pending[threadID]
	if b == nil {
		b = &backlog{}
		l.pending[threadID] = b
	}
	b.names, b.datas = append(b.names, name), append(b.datas, nonNil(data))
	l.count++
	l.size += len(name) + len(data)
	if wait && !l.s.holds(threadID) {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		defer cancel()
		l.send(l.takeThread(ctx, threadID, b, nil))
		return
	}
	first, full := l.count == 1, l.count >= l.cfg.Batch || l.size >= flushBytes
	l.mu.Unlock()
	if first {
		signal(l.kick)
	}
	if full {
		signal(l.full)
	}
}

// writeTimeout bounds a write of events that no caller's context bounds.
const writeTimeout = 10 * time.Second

// signal wakes whoever waits on ch, unless a wake-up is already pending.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// submitted is a write of events submitted to the store's lease batcher.
type submitted struct {
	c      *call
	lead   bool
	events int
}

// takeThread removes the thread's backlog b from pending and submits its write,
// with the lease's release if ls is set. It is called with mu held, which it
// releases, so a thread's events are written in the order published.
func (l *EventLog) takeThread(ctx context.Context, threadID string, b *backlog, ls *lease) submitted {
	delete(l.pending, threadID)
	l.count -= len(b.names)
	size := 0
	for i, d := range b.datas {
		size += len(b.names[i]) + len(d)
	}
	l.size -= size
	threads := make([]string, len(b.names))
	for i := range threads {
		threads[i] = threadID
	}
	query, args := l.logEvents(threads, b.names, b.datas, ls)
	return l.submitLocked(&call{ctx: ctx, threadID: threadID, query: query, args: args, dest: []any{nil}, size: size}, len(b.names))
}

// submitLocked submits c, a write of n events, to the store's lease batcher
// and releases mu, which the caller holds: writes are submitted in the order
// their events were taken from pending.
func (l *EventLog) submitLocked(c *call, n int) submitted {
	sub := submitted{c: c, lead: l.s.leases.submit(c), events: n}
	l.mu.Unlock()
	return sub
}

// send waits for a submitted write and counts its events as dropped if it
// failed, which it returns.
func (l *EventLog) send(sub submitted) error {
	err := l.s.leases.await(sub.c, sub.lead)
	if err != nil {
		l.dropped.Add(uint64(sub.events))
		l.cfg.Logger.Error("postgres event log: events lost", "events", sub.events, "err", err)
	}
	return err
}

// release gives the lease up in the same statement as the thread's buffered
// events, and waits for that write. sent is false if there were no events to
// write, or the log is closed: the caller then releases the lease itself.
func (l *EventLog) release(ctx context.Context, ls *lease) (sent bool, err error) {
	l.mu.Lock()
	b := l.pending[ls.threadID]
	if b == nil || l.closed.Load() {
		l.mu.Unlock()
		return false, nil
	}
	return true, l.send(l.takeThread(ctx, ls.threadID, b, ls))
}

// Dropped counts the events that could not be logged: published after Close,
// or lost to a write that failed.
func (l *EventLog) Dropped() uint64 { return l.dropped.Load() }

// flushLoop writes the buffered events of every thread once the first of them
// has waited Linger, or at once when many wait, until Close; it then writes
// what is left.
func (l *EventLog) flushLoop() {
	for {
		select {
		case <-l.kick:
		case <-l.ctx.Done():
			l.flush()
			return
		}
		t := time.NewTimer(l.cfg.Linger)
		select {
		case <-t.C:
		case <-l.full:
		case <-l.ctx.Done():
		}
		t.Stop()
		l.flush()
	}
}

// flush writes the buffered events of every thread in one statement.
func (l *EventLog) flush() {
	l.mu.Lock()
	if l.count == 0 {
		l.mu.Unlock()
		return
	}
	keys := make([]string, 0, len(l.pending))
	threads := make([]string, 0, l.count)
	names := make([]string, 0, l.count)
	datas := make([][]byte, 0, l.count)
	for thread, b := range l.pending {
		keys = append(keys, thread)
		for range b.names {
			threads = append(threads, thread)
		}
		names, datas = append(names, b.names...), append(datas, b.datas...)
	}
	clear(l.pending)
	size := l.size
	l.count, l.size = 0, 0
	// Not l.ctx: the last flush runs after Close cancels it.
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	query, args := l.logEvents(threads, names, datas, nil)
	l.send(l.submitLocked(&call{ctx: ctx, threads: keys, query: query, args: args, dest: []any{nil}, size: size}, len(names)))
}

// logEvents returns the arguments of the statement that writes events, each
// of threads[i] with names[i] and datas[i], in that order, and gives up the
// lease ls if set; and the statement itself, from the store's queries.
func (l *EventLog) logEvents(threads, names []string, datas [][]byte, ls *lease) (string, []any) {
	args := []any{threads, names, datas, l.channel}
	if ls == nil {
		return l.s.sql.logEvents[0], args
	}
	return l.s.sql.logEvents[1], append(args, ls.threadID, ls.token)
}

// eventsSQL is the statement that writes events: thread ids, names and data
// in three arrays ($1-$3), in that order; with release set it also gives up
// the lease of thread $5 taken with token $6. It then notifies channel $4 with
// its transaction's id and the range of ids it wrote, so that listeners read
// exactly its rows once it commits.
func eventsSQL(schema string, release bool) string {
	query := `WITH ins AS (
			INSERT INTO ` + schema + `.events (thread_id, name, data)
			SELECT x.thread_id, x.name, x.data
			FROM unnest($1::text[], $2::text[], $3::bytea[]) WITH ORDINALITY AS x (thread_id, name, data, n)
			ORDER BY x.n
			RETURNING id
		)`
	if release {
		query += `, released AS (DELETE FROM ` + schema + `.leases WHERE thread_id = $5 AND token = $6)`
	}
	return query + `
		SELECT pg_notify($4, pg_current_xact_id()::xid::text || ' ' || min(id) || ' ' || max(id)) FROM ins`
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

// Last returns the id of the thread's newest logged event, or 0 if it has
// none. The thread's events logged afterwards have higher ids.
func (l *EventLog) Last(ctx context.Context, threadID string) (int64, error) {
	var id int64
	if err := l.s.pool.QueryRow(ctx, `SELECT COALESCE(max(id), 0) FROM `+l.s.sql.schema+`.events WHERE thread_id = $1`, threadID).Scan(&id); err != nil {
		return 0, fmt.Errorf("postgres event log: read the newest event of thread %q: %w", threadID, err)
	}
	return id, nil
}

// Listen calls deliver with every event logged while it listens, by any
// replica, until ctx ends; it then returns ctx's error. Each thread's events
// come in id order. It keeps one connection of its own, LISTENing for the
// writers' notifications, each of which names the rows one statement wrote.
//
// If that connection breaks, the notifications sent meanwhile are lost, so
// Listen calls lost before it reconnects: whoever it delivers to then knows it
// may have missed events and can catch up with Read.
//
// Listen LISTENs only while wanted reports true. Once nobody listens on this
// replica it stops (UNLISTEN), so the database neither signals it nor sends it
// anything per event, and the events logged meanwhile are passed over. A
// listener that arrives calls Ready, which starts it again.
func (l *EventLog) Listen(ctx context.Context, wanted func() bool, deliver func(id int64, threadID, name string, data []byte), lost func()) error {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		listened, err := l.listen(ctx, wanted, deliver)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if listened {
			lost()
		}
		l.cfg.Logger.Warn("postgres event log: listening failed; reconnecting", "err", err, "in", wait)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
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
	signal(l.arm)
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

// written is what a notification says: one statement's transaction (as xid
// text) and the lowest and highest id it wrote.
type written struct {
	xid    string
	lo, hi int64
}

// parseWritten reads a notification's payload.
func parseWritten(payload string) (written, bool) {
	f := strings.Fields(payload)
	if len(f) != 3 {
		return written{}, false
	}
	lo, err1 := strconv.ParseInt(f[1], 10, 64)
	hi, err2 := strconv.ParseInt(f[2], 10, 64)
	if _, err := strconv.ParseUint(f[0], 10, 32); err != nil || err1 != nil || err2 != nil {
		return written{}, false
	}
	return written{xid: f[0], lo: lo, hi: hi}, true
}

// listen is one connection's life in Listen. listened reports whether it was
// listening when it ended, so that notifications may have been lost.
func (l *EventLog) listen(ctx context.Context, wanted func() bool, deliver func(id int64, threadID, name string, data []byte)) (listened bool, err error) {
	cfg := l.s.pool.Config().ConnConfig.Copy()
	if app := cfg.RuntimeParams["application_name"]; app != "" {
		cfg.RuntimeParams["application_name"] = app + " " + ListenerName
	} else {
		cfg.RuntimeParams["application_name"] = ListenerName
	}
	// Notifications arrive while the connection reads anything; they queue
	// here, and each read takes all that arrived.
	var (
		mu    sync.Mutex
		notes []written
	)
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		if w, ok := parseWritten(n.Payload); ok {
			mu.Lock()
			notes = append(notes, w)
			mu.Unlock()
		}
	}
	takeNotes := func() []written {
		mu.Lock()
		defer mu.Unlock()
		out := notes
		notes = nil
		return out
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	defer l.setListening(false) // until the next connection listens
	channel := pgx.Identifier{l.channel}.Sanitize()
	on := false // LISTEN is in effect on conn
	for {
		if !l.stillWanted(wanted) {
			if on {
				if _, err := conn.Exec(ctx, "UNLISTEN "+channel); err != nil {
					return true, err
				}
				on = false
				takeNotes() // nobody here waits for them
			}
			select {
			case <-l.arm:
			case <-ctx.Done():
				return false, ctx.Err()
			}
			continue
		}
		if !on {
			// Every statement that commits once LISTEN has taken effect
			// notifies this connection.
			if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
				return false, err
			}
			on = true
			l.setListening(true)
		}
		if ws := takeNotes(); len(ws) > 0 {
			if err := l.readWritten(ctx, conn, ws, deliver); err != nil {
				return true, err
			}
			continue
		}
		// A bound on the wait, so that a replica whose listeners left stops
		// listening. A timeout leaves the connection usable.
		wctx, cancel := context.WithTimeout(ctx, l.cfg.Poll)
		err := conn.PgConn().WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
			return true, err
		}
	}
}

// readWritten delivers the rows that the notified statements ws wrote, in id
// order: ws arrive in commit order, and a thread's ids rise in commit order,
// so each thread's events are delivered in order.
func (l *EventLog) readWritten(ctx context.Context, conn *pgx.Conn, ws []written, deliver func(id int64, threadID, name string, data []byte)) error {
	const most = 256 // notifications read at once
	for len(ws) > 0 {
		n := min(len(ws), most)
		xids, los, his := make([]string, n), make([]int64, n), make([]int64, n)
		for i, w := range ws[:n] {
			xids[i], los[i], his[i] = w.xid, w.lo, w.hi
		}
		ws = ws[n:]
		rows, err := conn.Query(ctx, `SELECT e.id, e.thread_id, e.name, e.data
			FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS w (xid, lo, hi)
			JOIN `+l.s.sql.schema+`.events e ON e.id BETWEEN w.lo AND w.hi AND e.xmin = w.xid::xid
			ORDER BY e.id`, xids, los, his)
		if err != nil {
			return err
		}
		var (
			id           int64
			thread, name string
			data         []byte
		)
		if _, err := pgx.ForEachRow(rows, []any{&id, &thread, &name, &data}, func() error {
			deliver(id, thread, name, data)
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
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

// Close writes the events buffered so far, stops the flusher and the trimmer, and
// drops events published afterwards. Listen runs on until its own context ends.
func (l *EventLog) Close() error {
	l.closing.Do(func() {
		// Under mu, so that an event published from now on is dropped rather
		// than left behind by the last flush.
		l.mu.Lock()
		l.closed.Store(true)
		l.mu.Unlock()
		l.s.events.CompareAndSwap(l, nil)
		l.stop()
	})
	<-l.done
	return nil
}
