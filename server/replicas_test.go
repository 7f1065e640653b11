package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// memLog is an in-memory host.EventLog shared by the "replicas" of a test, as
// a database would be. Holding it stops deliveries to listeners (but not
// Publish or Read), to make a listener's replay and its live events overlap;
// losing it makes every listener skip what it has not delivered, as a broken
// connection would.
type memLog struct {
	mu     sync.Mutex
	events []logged
	wake   []chan struct{}
	held   bool
	losses int // how many times listeners lost what they had not delivered
}

type logged struct {
	id           int64
	thread, name string
	data         []byte
}

func (l *memLog) Publish(threadID, name string, data []byte, wait bool) {
	l.mu.Lock()
	l.events = append(l.events, logged{id: int64(len(l.events) + 1), thread: threadID, name: name, data: data})
	wake := l.wake
	l.mu.Unlock()
	for _, w := range wake {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

func (l *memLog) Read(ctx context.Context, threadID string, after int64, fn func(id int64, name string, data []byte) error) error {
	l.mu.Lock()
	evs := append([]logged(nil), l.events...)
	l.mu.Unlock()
	for _, e := range evs {
		if e.thread == threadID && e.id > after {
			if err := fn(e.id, e.name, e.data); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *memLog) Ready(context.Context) error { return nil }

func (l *memLog) Last(_ context.Context, threadID string) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var last int64
	for _, e := range l.events {
		if e.thread == threadID {
			last = e.id
		}
	}
	return last, nil
}

func (l *memLog) Listen(ctx context.Context, _ func() bool, deliver func(id int64, threadID, name string, data []byte), lost func()) error {
	w := make(chan struct{}, 1)
	l.mu.Lock()
	l.wake = append(l.wake, w)
	next, losses := len(l.events), l.losses
	l.mu.Unlock()
	for {
		l.mu.Lock()
		var evs []logged
		gap := losses != l.losses
		if gap {
			next, losses = len(l.events), l.losses
		}
		if !l.held {
			evs = append(evs, l.events[next:]...)
			next = len(l.events)
		}
		l.mu.Unlock()
		if gap {
			lost()
		}
		for _, e := range evs {
			deliver(e.id, e.thread, e.name, e.data)
		}
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// lose makes every listener pass over the events it has not delivered, and
// report the loss, then lets deliveries go on.
func (l *memLog) lose() {
	l.mu.Lock()
	l.losses++
	l.mu.Unlock()
	l.hold(false)
}

// hold stops or restarts deliveries.
func (l *memLog) hold(on bool) {
	l.mu.Lock()
	l.held = on
	wake := l.wake
	l.mu.Unlock()
	for _, w := range wake {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// replica starts a server over st whose hub exchanges events through log.
func replica(t *testing.T, st store.Store, log host.EventLog) *client.Client {
	t.Helper()
	hub, err := server.NewEventHub(host.WithHubLog(log))
	if err != nil {
		t.Fatal(err)
	}
	refund, err := graphs.Refund(graph.WithStore(st), graph.WithEvents(hub.Publish))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.WithGraph(refund.Erase()), server.WithEventHub(hub), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	return clienttest.New(t, hs.URL)
}

// replayed subscribes to a thread's events with a Last-Event-ID and returns
// what arrives up to the next end event.
func replayed(t *testing.T, c *client.Client, threadID, lastEventID string) []client.Event {
	t.Helper()
	sub, err := c.Subscribe(context.Background(), threadID, lastEventID)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	return until(t, sub)
}

// pausedOnTwoReplicas starts two replicas sharing a store and log, and a
// refund run on a that pauses the thread for approval (events 1 to 3). It
// returns the replicas, the log and the pending interrupt's id.
func pausedOnTwoReplicas(t *testing.T, thread string) (a, b *client.Client, log *memLog, interruptID string) {
	t.Helper()
	st := memory.New()
	log = &memLog{}
	a, b = replica(t, st, log), replica(t, st, log)
	res, err := a.Invoke(context.Background(), client.InvokeRequest{Graph: "refund", ThreadID: thread, Input: map[string]any{"amount": 5}})
	if err != nil {
		t.Fatal(err)
	}
	return a, b, log, res.Interrupts[0].ID
}

func ids(evs []client.Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return strings.Join(out, ",")
}

func TestEventsThroughALogReachEveryReplicaWithTheLogsIDs(t *testing.T) {
	ctx := context.Background()
	st, log := memory.New(), &memLog{}
	a, b := replica(t, st, log), replica(t, st, log)

	// A listener on b sees the run on a, numbered by the log.
	sub, err := b.Subscribe(ctx, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "x", Input: map[string]any{"amount": 5}})
	if err != nil {
		t.Fatal(err)
	}
	first := until(t, sub)
	sub.Close()
	if names(first) != "metadata,updates,end" || ids(first) != "1,2,3" {
		t.Fatalf("b's listener got %s with ids %s; want metadata,updates,end with ids 1,2,3", names(first), ids(first))
	}

	// While nobody listens, b answers; a listener reconnecting to a with the
	// last id it got catches up from the log.
	if _, err := b.Resume(ctx, "x", res.Interrupts[0].ID, map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	second := replayed(t, a, "x", "3")
	if names(second) != "metadata,updates,end" || ids(second) != "4,5,6" {
		t.Fatalf("after 3: %s with ids %s; want metadata,updates,end with ids 4,5,6", names(second), ids(second))
	}
	sameJSON(t, "end", second[2].Data, `{"thread_id":"x","status":"completed","checkpoint":3}`)

	// Last-Event-ID 0 replays everything the log keeps.
	all := replayed(t, b, "x", "0")
	if ids(all) != "1,2,3" {
		t.Fatalf("from 0, up to the first end: ids %s", ids(all))
	}
}

func TestAReplayOverlappingLiveEventsSendsEachOnce(t *testing.T) {
	ctx := context.Background()
	a, b, log, interruptID := pausedOnTwoReplicas(t, "y")
	// The answer's events are logged but not yet delivered to any hub when the
	// listener reconnects: its replay reads them from the log, and the hub
	// delivers them again once the log lets go.
	log.hold(true)
	if _, err := b.Resume(ctx, "y", interruptID, map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	sub, err := a.Subscribe(ctx, "y", "3")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	log.hold(false)
	// A third run (a fresh input) brings live events after the replayed ones.
	if _, err := b.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "y", Input: map[string]any{"amount": 7}}); err != nil {
		t.Fatal(err)
	}
	var got []client.Event
	for ev, err := range sub.Events() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
		if len(got) == 6 {
			break
		}
	}
	if ids(got) != "4,5,6,7,8,9" {
		t.Fatalf("events after 3: ids %s (%s); want 4 to 9, each once", ids(got), names(got))
	}
	for i, ev := range got {
		if want := fmt.Sprint(i + 4); ev.ID != want {
			t.Fatalf("event %d has id %s, want %s", i, ev.ID, want)
		}
	}
}

// TestAListenerWhoseLogLostEventsReconnectsAndCatchesUp checks the hard case of
// a loss: the listener has had no event yet, so it reconnects with the position
// its stream opened at.
func TestAListenerWhoseLogLostEventsReconnectsAndCatchesUp(t *testing.T) {
	ctx := context.Background()
	a, b, log, interruptID := pausedOnTwoReplicas(t, "z")
	// Bounded, so that a stream that never ends fails the test.
	subCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	sub, err := b.Subscribe(subCtx, "z", "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// The answer's events are logged, and b's log loses them before they
	// reach its listener: b ends the stream rather than go on with a gap.
	log.hold(true)
	if _, err := a.Resume(ctx, "z", interruptID, map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	log.lose()
	for ev, err := range sub.Events() {
		t.Fatalf("after the loss the stream went on: %+v, %v", ev, err)
	}
	// The stream opened at the thread's newest event, 3: reconnecting from
	// there catches up.
	if sub.LastEventID() != "3" {
		t.Fatalf("the stream's position was %q, want 3", sub.LastEventID())
	}
	second := replayed(t, b, "z", sub.LastEventID())
	if names(second) != "metadata,updates,end" || ids(second) != "4,5,6" {
		t.Fatalf("after reconnecting: %s with ids %s; want metadata,updates,end with ids 4,5,6", names(second), ids(second))
	}
}

// expiringStore is a store whose runs' leases expire when the test says, as a
// shared store's do when the process holding one dies.
type expiringStore struct {
	store.Store
	expired chan store.ExpiredLease
	reads   interlude.ThreadStatus // what Meta reports, as a shared store does once a lease expired; "" for what is stored
}

func (s *expiringStore) ExpiredLeases(ctx context.Context) ([]store.ExpiredLease, error) {
	select {
	case e := <-s.expired:
		return []store.ExpiredLease{e}, nil
	default:
		return nil, nil
	}
}

func (s *expiringStore) Meta(ctx context.Context, threadID string) (*store.Meta, error) {
	m, err := s.Store.Meta(ctx, threadID)
	if err == nil && s.reads != "" {
		m.Status = s.reads
	}
	return m, err
}

// TestListenersHearHowAThreadReadsOnceItsRunDiedWithItsProcess checks the lease
// watch's announcement: a run that died between steps ended failed, and one
// that died after committing its pause ended interrupted, its questions still
// pending.
func TestListenersHearHowAThreadReadsOnceItsRunDiedWithItsProcess(t *testing.T) {
	for _, c := range []struct {
		name  string
		reads interlude.ThreadStatus
		want  string
	}{
		{"between steps", interlude.ThreadFailed, "failed"},
		{"after its pause", "", "interrupted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &expiringStore{expired: make(chan store.ExpiredLease, 1), reads: c.reads}
			e := newEnv(t, setup{wrap: func(inner store.Store) store.Store { st.Store = inner; return st },
				opts: []server.Option{server.WithLeaseWatch(5 * time.Millisecond)}})
			ctx := context.Background()
			e.start("refund", "r", `{"amount":5}`)
			sub, err := e.client().Subscribe(ctx, "r", "")
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			st.expired <- store.ExpiredLease{ThreadID: "r", Version: 1}
			evs := until(t, sub)
			end := evs[len(evs)-1]
			var data struct {
				ThreadID   string `json:"thread_id"`
				Status     string `json:"status"`
				Checkpoint int64  `json:"checkpoint"`
			}
			if err := json.Unmarshal(end.Data, &data); err != nil || data.ThreadID != "r" || data.Status != c.want || data.Checkpoint != 1 {
				t.Fatalf("end event %s (%v), want thread r %s at checkpoint 1", end.Data, err, c.want)
			}
		})
	}
}
