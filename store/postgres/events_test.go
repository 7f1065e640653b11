package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// heard collects what a Listen delivers, and counts its losses.
type heard struct {
	mu   sync.Mutex
	evs  []heardEvent
	lost int
}

type heardEvent struct {
	id           int64
	thread, name string
	data         string
}

func (h *heard) deliver(id int64, thread, name string, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.evs = append(h.evs, heardEvent{id, thread, name, string(data)})
}

func (h *heard) lose() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lost++
}

func (h *heard) losses() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost
}

// real returns what was heard, without the probes.
func (h *heard) real() []heardEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []heardEvent
	for _, e := range h.evs {
		if e.thread != "probe" {
			out = append(out, e)
		}
	}
	return out
}

func (h *heard) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.evs)
}

// listen runs l.Listen until the test ends and returns once it delivers:
// it publishes probe events until one arrives (Listen starts from the newest
// event, so what is published before it starts is not heard).
func listen(t *testing.T, l *EventLog) *heard {
	t.Helper()
	return listenWanted(t, l, func() bool { return true })
}

// listenWanted is listen with Listen's wanted.
func listenWanted(t *testing.T, l *EventLog, wanted func() bool) *heard {
	t.Helper()
	h := &heard{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Listen(ctx, wanted, h.deliver, h.lose) }()
	t.Cleanup(func() { cancel(); <-done })
	if !poll(func() bool {
		l.Publish("probe", "probe", nil, true)
		return h.count() > 0
	}) {
		t.Fatal("Listen delivered none of the probe events")
	}
	return h
}

// poll checks cond until it holds, for at most 10 seconds.
func poll(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond) // polling observable state, not waiting for it
	}
	return cond()
}

// replicaStore returns another store over s's schema, as another replica has.
func replicaStore(t *testing.T, s *Store) *Store {
	t.Helper()
	o, err := Open(context.Background(), testDSN(t), WithSchema(s.schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func newLog(t *testing.T, s *Store, cfg EventConfig) *EventLog {
	t.Helper()
	l, err := s.EventLog(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// byThread returns the data of each thread's events, in the order heard.
func byThread(evs []heardEvent) map[string][]string {
	out := make(map[string][]string)
	for _, e := range evs {
		out[e.thread] = append(out[e.thread], e.data)
	}
	return out
}

// idsRisePerThread fails the test unless each thread's ids rise in the order
// heard.
func idsRisePerThread(t *testing.T, who string, evs []heardEvent) {
	t.Helper()
	last := make(map[string]int64)
	for _, e := range evs {
		if e.id <= last[e.thread] {
			t.Fatalf("%s heard thread %s's event %d after its event %d", who, e.thread, e.id, last[e.thread])
		}
		last[e.thread] = e.id
	}
}

func TestEventLogReachesEveryReplicaInEachThreadsOrder(t *testing.T) {
	s := openTest(t)
	a, b := newLog(t, s, EventConfig{}), newLog(t, replicaStore(t, s), EventConfig{})
	ha, hb := listen(t, a), listen(t, b)
	// Each thread's events come from one replica at a time: a thread moves to
	// the other replica only once its last event there is logged, as a lease
	// hands it over.
	const threads, turns, perTurn = 3, 6, 5
	want := make(map[string][]string)
	var wg sync.WaitGroup
	for th := range threads {
		thread := fmt.Sprintf("t%d", th)
		for turn := range turns {
			for k := range perTurn {
				want[thread] = append(want[thread], fmt.Sprintf("%d.%d", turn, k))
			}
		}
		wg.Go(func() {
			for turn := range turns {
				from := []*EventLog{a, b}[(turn+th)%2]
				for k := range perTurn {
					from.Publish(thread, "updates", fmt.Appendf(nil, "%d.%d", turn, k), k == perTurn-1)
				}
			}
		})
	}
	wg.Wait()
	const n = threads * turns * perTurn
	if !poll(func() bool { return len(ha.real()) >= n && len(hb.real()) >= n }) {
		t.Fatalf("heard %d and %d of %d events", len(ha.real()), len(hb.real()), n)
	}
	for who, h := range map[string]*heard{"a": ha, "b": hb} {
		evs := h.real()
		if len(evs) != n {
			t.Fatalf("replica %s heard %d events, want %d", who, len(evs), n)
		}
		idsRisePerThread(t, "replica "+who, evs)
		if got := byThread(evs); !maps.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("replica %s heard each thread's events as\n%v\nwant\n%v", who, got, want)
		}
	}
}

// TestEventLogListenersMissNothingUnderConcurrentWriters checks that a
// listener hears every event written, by four replicas' writers at once, each
// once, and each thread's in order.
func TestEventLogListenersMissNothingUnderConcurrentWriters(t *testing.T) {
	s := openTest(t)
	var logs []*EventLog
	for i := range 4 {
		st := s
		if i > 0 {
			st = replicaStore(t, s)
		}
		logs = append(logs, newLog(t, st, EventConfig{Batch: 7}))
	}
	h := listen(t, logs[0])
	var wg sync.WaitGroup
	const perWriter = 150
	for i, l := range logs {
		for w := range 3 {
			wg.Go(func() {
				for k := range perWriter {
					l.Publish(fmt.Sprintf("t-%d-%d", i, w), "updates", []byte(strconv.Itoa(k)), k%10 == 9)
				}
			})
		}
	}
	wg.Wait()
	const total = 4 * 3 * perWriter
	var inTable []int64
	rows, err := s.pool.Query(context.Background(), `SELECT id FROM `+pgx.Identifier{s.schema}.Sanitize()+`.events WHERE thread_id <> 'probe' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	if inTable, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		t.Fatal(err)
	}
	if len(inTable) != total {
		t.Fatalf("%d events in the table, want %d", len(inTable), total)
	}
	if !poll(func() bool { return len(h.real()) >= total }) {
		t.Fatalf("the listener heard %d of %d events", len(h.real()), total)
	}
	evs := h.real()
	idsRisePerThread(t, "the listener", evs)
	var got []int64
	for _, e := range evs {
		got = append(got, e.id)
	}
	slices.Sort(got)
	if !slices.Equal(got, inTable) {
		t.Fatalf("the listener heard %d events, not exactly the table's %d, each once", len(got), len(inTable))
	}
	for thread, data := range byThread(evs) {
		for k, d := range data {
			if d != strconv.Itoa(k) {
				t.Fatalf("thread %s's events were heard as %v", thread, data)
			}
		}
	}
}

// TestAThreadsEventsKeepTheirOrderAcrossReplicas checks the rule the log's
// order rests on: a thread's runs, on whichever replica, write their events
// before or with their lease's release, so the thread's ids rise in the order
// its runs published them, for listeners and for Read alike, while other
// threads' events are written all the while.
func TestAThreadsEventsKeepTheirOrderAcrossReplicas(t *testing.T) {
	s := openTest(t)
	stores := []*Store{s, replicaStore(t, s), replicaStore(t, s)}
	var logs []*EventLog
	for _, st := range stores {
		logs = append(logs, newLog(t, st, EventConfig{Linger: time.Millisecond}))
	}
	h := listen(t, logs[2])
	ctx, stop := context.WithCancel(context.Background())
	var noise sync.WaitGroup
	for i, l := range logs {
		noise.Go(func() {
			for k := 0; ctx.Err() == nil; k++ {
				l.Publish(fmt.Sprintf("noise-%d", i), "updates", nil, k%20 == 19)
			}
		})
	}
	var want []string
	for run := range 30 {
		st := stores[run%len(stores)]
		held := mustLease(t, st, "t", fmt.Sprint("replica-", run%len(stores)))
		for k := range 4 {
			d := fmt.Sprintf("%d.%d", run, k)
			want = append(want, d)
			logs[run%len(stores)].Publish("t", "updates", []byte(d), k == 3)
			if k == 1 && run%2 == 0 {
				logs[run%len(stores)].flush() // a run that lasts: its first events go before its release
			}
		}
		if err := held.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	noise.Wait()
	if !poll(func() bool { return len(byThread(h.real())["t"]) >= len(want) }) {
		t.Fatalf("the listener heard %d of the thread's %d events", len(byThread(h.real())["t"]), len(want))
	}
	idsRisePerThread(t, "the listener", h.real())
	if got := byThread(h.real())["t"]; !slices.Equal(got, want) {
		t.Fatalf("the listener heard the thread's events as\n%v\nwant\n%v", got, want)
	}
	var read []string
	if err := logs[1].Read(context.Background(), "t", 0, func(_ int64, _ string, data []byte) error {
		read = append(read, string(data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(read, want) {
		t.Fatalf("Read gives the thread's events as\n%v\nwant\n%v", read, want)
	}
}

func TestEventLogRead(t *testing.T) {
	s := openTest(t)
	l := newLog(t, s, EventConfig{})
	for i := range 6 {
		l.Publish("t", fmt.Sprintf("e%d", i), []byte(fmt.Sprint(i)), false)
		l.Publish("u", "other", nil, false)
	}
	l.Publish("t", "last", nil, true)
	var all []int64
	var names []string
	if err := l.Read(context.Background(), "t", 0, func(id int64, name string, data []byte) error {
		all, names = append(all, id), append(names, name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(names) != "[e0 e1 e2 e3 e4 e5 last]" {
		t.Fatalf("Read from 0: %v", names)
	}
	for thread, want := range map[string]int64{"t": all[len(all)-1], "none": 0} {
		if last, err := l.Last(context.Background(), thread); err != nil || last != want {
			t.Fatalf("Last(%q) = %d, %v; want %d", thread, last, err, want)
		}
	}
	names = nil
	stop := errors.New("enough")
	err := l.Read(context.Background(), "t", all[2], func(id int64, name string, data []byte) error {
		names = append(names, name)
		if len(names) == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || fmt.Sprint(names) != "[e3 e4]" {
		t.Fatalf("Read after the third, stopping at two: %v, %v", names, err)
	}
}

func TestEventLogTrim(t *testing.T) {
	s := openTest(t)
	l := newLog(t, s, EventConfig{KeepEvents: 5, TrimEvery: time.Hour})
	for i := range 20 {
		l.Publish("t", fmt.Sprint(i), nil, i == 19)
	}
	ctx := context.Background()
	if err := l.Trim(ctx); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		var out []string
		l.Read(ctx, "t", 0, func(_ int64, name string, _ []byte) error { out = append(out, name); return nil })
		return out
	}
	if got := names(); fmt.Sprint(got) != "[15 16 17 18 19]" {
		t.Fatalf("after trimming to 5: %v", got)
	}
	// Old events go whatever the count.
	if _, err := s.pool.Exec(ctx, `UPDATE `+pgx.Identifier{s.schema}.Sanitize()+`.events SET created_at = now() - interval '2 hours' WHERE name IN ('15', '16')`); err != nil {
		t.Fatal(err)
	}
	if err := l.Trim(ctx); err != nil {
		t.Fatal(err)
	}
	if got := names(); fmt.Sprint(got) != "[17 18 19]" {
		t.Fatalf("after trimming events over an hour old: %v", got)
	}
}

func TestEventLogCloseWritesWhatWasQueued(t *testing.T) {
	s := openTest(t)
	l := newLog(t, s, EventConfig{Batch: 16})
	for i := range 300 {
		l.Publish("t", "updates", fmt.Appendf(nil, "%d", i), false)
	}
	l.Close()
	l.Publish("t", "late", nil, true) // dropped, without blocking
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+pgx.Identifier{s.schema}.Sanitize()+`.events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 300 || l.Dropped() != 1 {
		t.Fatalf("after Close: %d events logged, %d dropped; want 300 and 1", n, l.Dropped())
	}
}

// TestEventLogListenerReportsALossAndReconnects checks a listener whose
// connection breaks: it reports that it may have missed events, listens again,
// and Read gives what it missed.
func TestEventLogListenerReportsALossAndReconnects(t *testing.T) {
	s := openTest(t)
	l := newLog(t, s, EventConfig{})
	h := listen(t, l)
	l.Publish("t", "before", nil, true)
	if !poll(func() bool { return len(h.real()) == 1 }) {
		t.Fatal("the first event was not heard")
	}
	before := h.real()[0].id
	ctx := context.Background()
	var cut int
	if err := s.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name LIKE '%' || $1 AND (query LIKE '%' || $2 || '%' OR query LIKE '%' || $3 || '%')`, ListenerName, l.channel, s.schema).Scan(&cut); err != nil {
		t.Fatal(err)
	}
	if cut != 1 {
		t.Fatalf("terminated %d listener connections, want 1", cut)
	}
	l.Publish("t", "gap", nil, true)
	if !poll(func() bool { return h.losses() == 1 }) {
		t.Fatalf("the listener reported %d losses after its connection broke, want 1", h.losses())
	}
	if err := l.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		l.Publish("t", fmt.Sprint(i), nil, true)
	}
	if !poll(func() bool { evs := h.real(); return len(evs) > 0 && evs[len(evs)-1].name == "4" }) {
		t.Fatalf("after the reconnect the listener heard %v", h.real())
	}
	var names []string
	for _, e := range h.real() {
		if e.name != "gap" { // logged while the listener was away: it may or may not have been heard
			names = append(names, e.name)
		}
	}
	if fmt.Sprint(names) != "[before 0 1 2 3 4]" {
		t.Fatalf("heard %v", names)
	}
	names = nil
	if err := l.Read(ctx, "t", before, func(_ int64, name string, _ []byte) error {
		names = append(names, name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(names) != "[gap 0 1 2 3 4]" {
		t.Fatalf("Read after the last event heard before the loss: %v", names)
	}
}

// warnings counts the warnings a log handler gets.
type warnings struct{ n atomic.Int64 }

func (w *warnings) Enabled(context.Context, slog.Level) bool { return true }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		w.n.Add(1)
	}
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

func TestEventLogListenerOutlastsIdleWaits(t *testing.T) {
	s := openTest(t)
	w := &warnings{}
	l := newLog(t, s, EventConfig{Poll: 20 * time.Millisecond, Logger: slog.New(w)})
	h := listen(t, l)
	// Let several waits time out on an idle connection: it stays usable.
	var waits int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE '%' || $1 AND query LIKE '%' || $2 || '%'`, ListenerName, s.schema).Scan(&waits); err != nil || waits != 1 {
		t.Fatalf("%d listener connections (%v), want 1", waits, err)
	}
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // idle on purpose: the waits must time out
	}
	l.Publish("t", "after", nil, true)
	if !poll(func() bool { return len(h.real()) == 1 }) {
		t.Fatal("the event after the idle waits was not heard")
	}
	if w.n.Load() != 0 {
		t.Fatalf("%d warnings: the listener reconnected", w.n.Load())
	}
}

// TestEventLogListenerWithoutListenersDeliversOnceWanted checks a replica that
// nobody listens to: it may pass over the events logged meanwhile, but once a
// listener comes and Ready returns, every event logged from then on arrives,
// in order, once.
func TestEventLogListenerWithoutListenersDeliversOnceWanted(t *testing.T) {
	s := openTest(t)
	l, err := s.EventLog(context.Background(), EventConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var wanted atomic.Bool
	wanted.Store(true)
	h := listenWanted(t, l, wanted.Load)
	wanted.Store(false)
	for i := range 50 {
		l.Publish("before", "e", []byte(strconv.Itoa(i)), true)
	}
	wanted.Store(true)
	if err := l.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		l.Publish("after", "e", []byte(strconv.Itoa(i)), i == 49)
	}
	if !poll(func() bool {
		evs := h.real()
		return len(evs) > 0 && evs[len(evs)-1].thread == "after" && evs[len(evs)-1].data == "49"
	}) {
		t.Fatalf("the events logged after a listener came did not all arrive: %d heard", len(h.real()))
	}
	var after []string
	var prev int64
	for _, e := range h.real() {
		if e.id <= prev {
			t.Fatalf("event %d heard after %d", e.id, prev)
		}
		prev = e.id
		if e.thread == "after" {
			after = append(after, e.data)
		}
	}
	for i, d := range after {
		if d != strconv.Itoa(i) {
			t.Fatalf("events logged once wanted, as heard: %v; want 0 to 49 in order", after)
		}
	}
	if len(after) != 50 {
		t.Fatalf("heard %d of the 50 events logged once wanted", len(after))
	}
}

// TestLeaseReleasedWithTheRunsEvents checks a release with the event log open:
// once Release returns, the thread's events published before it are logged and
// another owner may take the thread.
func TestLeaseReleasedWithTheRunsEvents(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	l, err := s.EventLog(ctx, EventConfig{Linger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	logged := func() int {
		t.Helper()
		var n int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{s.schema}.Sanitize()+`.events WHERE thread_id = 't'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	held := mustLease(t, s, "t", "a")
	for i := range 3 {
		l.Publish("t", "e", []byte(strconv.Itoa(i)), i == 2) // the last would wait without the lease
	}
	if n := logged(); n != 0 {
		t.Fatalf("%d of the thread's events were logged before its release; want them written with it", n)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := logged(); n != 3 {
		t.Fatalf("after Release, %d of the thread's 3 events are logged", n)
	}
	mustLease(t, s, "t", "b").Release(ctx)
	// Closed, the log no longer carries releases: they go straight to the table.
	l.Close()
	again := mustLease(t, s, "t", "c")
	if err := again.Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustLease(t, s, "t", "d").Release(ctx)
}

// TestALongRunsEventsAreLoggedWhileItRuns checks that the events of a thread
// whose lease is held do not wait for the release: listeners on other replicas
// get them within Linger.
func TestALongRunsEventsAreLoggedWhileItRuns(t *testing.T) {
	s := openTest(t)
	l := newLog(t, s, EventConfig{Linger: 10 * time.Millisecond})
	h := listen(t, newLog(t, replicaStore(t, s), EventConfig{}))
	held := mustLease(t, s, "t", "a")
	defer held.Release(context.Background())
	l.Publish("t", "progress", nil, false)
	if !poll(func() bool { return len(h.real()) == 1 }) {
		t.Fatal("the event of a run still holding its lease never reached the other replica")
	}
}

// TestEventLogStopsListeningWhileNobodyListens checks that a replica without
// listeners holds no LISTEN, so the database sends it nothing per event, and
// that Ready makes it listen again.
func TestEventLogStopsListeningWhileNobodyListens(t *testing.T) {
	s := openTest(t)
	l := newLog(t, s, EventConfig{})
	var wanted atomic.Bool
	wanted.Store(true)
	h := listenWanted(t, l, wanted.Load)
	ctx := context.Background()
	// The listener connection's last statement tells whether it listens.
	lastStatement := func() string {
		var q string
		if err := s.pool.QueryRow(ctx, `SELECT query FROM pg_stat_activity
			WHERE application_name LIKE '%' || $1 AND (query LIKE '%' || $2 || '%' OR query LIKE '%' || $3 || '%')`, ListenerName, l.channel, s.schema).Scan(&q); err != nil {
			return err.Error()
		}
		return q
	}
	wanted.Store(false)
	l.Publish("t", "wake", nil, true) // the notification wakes it to notice
	if !poll(func() bool { return strings.HasPrefix(lastStatement(), "UNLISTEN") }) {
		t.Fatalf("with nobody listening, the listener's last statement is %q; want UNLISTEN", lastStatement())
	}
	heard := len(h.real())
	wanted.Store(true)
	if err := l.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if q := lastStatement(); !strings.HasPrefix(q, "SELECT") && !strings.HasPrefix(q, "LISTEN") {
		t.Fatalf("after Ready the listener's last statement is %q", q)
	}
	l.Publish("t", "after", nil, true)
	if !poll(func() bool { evs := h.real(); return len(evs) > heard && evs[len(evs)-1].name == "after" }) {
		t.Fatalf("after Ready the listener heard %v", h.real()[heard:])
	}
}
