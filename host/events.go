package host

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/options"
)

// Event is a thread's event as the hub keeps and delivers it: numbered, named
// and encoded (see WithHubEncoding).
type Event struct {
	// ID increases across the hub (or across the replicas sharing its log).
	ID int64
	// ThreadID is the thread.
	ThreadID string
	// Name says what happened: metadata, updates, messages, custom,
	// sub_task or end.
	Name string
	// Data is the event's JSON.
	Data json.RawMessage
}

// size is the memory an event is counted for.
func (ev Event) size() int64 { return int64(len(ev.Name)+len(ev.Data)) + hubEventOverhead }

// Encoding turns a run's event into the name and JSON data the hub keeps and
// delivers; it reports false for an event it leaves out.
type Encoding func(graph.Event) (name string, data []byte, ok bool)

// Hub fans the events of graph runs out to live listeners of one thread
// (Subscribe) or of every thread (SubscribeAll). Compile graphs with
// graph.WithEvents(hub.Publish) and give the hub to the host with WithHub.
//
// Each event gets an id, increasing across the hub (it starts from the hub's
// creation time in microseconds, so ids keep increasing across restarts). For
// a listener that resumes after an event it had, the hub keeps the newest
// events of the threads that published most recently, within a budget of
// bytes (32 MiB by default, WithHubBytes) and of counts (256 events for each
// of 1024 threads, WithHubBuffer and WithHubThreads); the threads that
// published least recently are forgotten first. An event larger than an
// eighth of the budget is not kept, and the thread's older events are
// forgotten with it, so that a replay never skips one.
//
// Publish never waits for a listener. A listener that falls behind, by 256
// events or by an eighth of the byte budget waiting to be read, is
// disconnected: its Next returns ErrFellBehind. Listeners of every thread get
// no replay and are likewise disconnected when behind. A Hub is safe for
// concurrent use.
type Hub struct {
	perThread   int
	seed        maphash.Seed
	seq         atomic.Int64
	closed      atomic.Bool
	subscribers atomic.Int64
	dropped     atomic.Uint64
	shards      [hubShards]hubShard
	kept        keptEvents
	encode      Encoding

	// Listeners of every thread; allN mirrors len(all) so that Publish skips
	// allMu while nobody listens to everything.
	allMu sync.Mutex
	all   map[*listener]struct{}
	allN  atomic.Int64

	// With an event log (WithHubLog): the log, and the end of the goroutine
	// that feeds the hub from it.
	elog       EventLog
	stopListen func()
}

const hubShards = 32

// DefaultHubBytes is the default budget of the events a Hub keeps for
// listeners that resume.
const DefaultHubBytes = 32 << 20

// hubEventOverhead is what a kept event costs beyond its name and data.
const hubEventOverhead = 64

// Errors that end a subscription (Subscription.Next) or refuse one.
var (
	// ErrFellBehind ends a listener that fell too far behind the events: it
	// subscribes again after the last event it had.
	ErrFellBehind = errors.New("this listener fell too far behind the thread's events and was disconnected; subscribe again after the last event received to resume")
	// ErrHubClosed refuses a listener of a closed hub.
	ErrHubClosed = errors.New("the event hub is closed")
	// ErrStreamEnded ends every listener when the hub closes, or when its log
	// may have missed events: a listener of one thread subscribes again after
	// the last event it had and catches up.
	ErrStreamEnded = errors.New("the event hub ended the stream; subscribe again after the last event received to resume")
)

// hubShard holds the listeners of the threads whose ids hash to it.
type hubShard struct {
	mu      sync.Mutex
	threads map[string]map[*listener]struct{}
}

type listener struct {
	ch     chan Event
	queued atomic.Int64 // bytes sent to ch and not received yet
	closed bool         // guarded by the shard's mutex (allMu for every thread's)
	slow   bool         // closed for falling behind; read once ch is closed
}

// offer sends ev to the listener unless it is too far behind, by count or by
// bytes (limit); it reports false if so.
func (l *listener) offer(ev Event, limit int64) bool {
	n := ev.size()
	if q := l.queued.Add(n); q > n && q > limit {
		l.queued.Add(-n)
		return false
	}
	select {
	case l.ch <- ev:
		return true
	default:
		l.queued.Add(-n)
		return false
	}
}

// keptEvents holds the newest events of recently active threads, for
// listeners that resume, within a budget of bytes.
type keptEvents struct {
	mu         sync.Mutex
	budget     int64 // bytes
	size       int64
	perThread  int
	maxThreads int
	threads    map[string]*keptThread
	lru        list.List // *keptThread, most recently published first
}

type keptThread struct {
	id   string
	elem *list.Element
	evs  []Event // oldest first
	size int64
}

// add keeps ev as the thread's newest event, forgetting the events of the
// threads that published least recently to stay within the budget.
func (k *keptEvents) add(threadID string, ev Event) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.threads[threadID]
	if ev.size() > k.budget/8 {
		// Too large to keep; forget the older ones too, so that a replay
		// resumes after the gap rather than across it.
		if t != nil {
			k.remove(t)
		}
		return
	}
	if t == nil {
		t = &keptThread{id: threadID}
		t.elem = k.lru.PushFront(t)
		k.threads[threadID] = t
	} else {
		k.lru.MoveToFront(t.elem)
	}
	t.evs = append(t.evs, ev)
	t.size += ev.size()
	k.size += ev.size()
	if len(t.evs) > k.perThread {
		k.dropOldest(t)
	}
	for len(k.threads) > k.maxThreads {
		k.remove(k.lru.Back().Value.(*keptThread))
	}
	for k.size > k.budget {
		if old := k.lru.Back().Value.(*keptThread); old != t {
			k.remove(old)
		} else {
			k.dropOldest(t) // the only thread left
		}
	}
}

// dropOldest forgets the thread's oldest event. k.mu is held.
func (k *keptEvents) dropOldest(t *keptThread) {
	n := t.evs[0].size()
	t.evs[0] = Event{}
	t.evs = t.evs[1:]
	t.size -= n
	k.size -= n
	if len(t.evs) == 0 {
		k.remove(t)
	}
}

// remove forgets the thread's events. k.mu is held.
func (k *keptEvents) remove(t *keptThread) {
	k.lru.Remove(t.elem)
	delete(k.threads, t.id)
	k.size -= t.size
}

// after returns the kept events of the thread with an id above after.
func (k *keptEvents) after(threadID string, after int64) []Event {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.threads[threadID]
	if t == nil {
		return nil
	}
	var out []Event
	for _, ev := range t.evs {
		if ev.ID > after {
			out = append(out, ev)
		}
	}
	return out
}

// forget drops the thread's events.
func (k *keptEvents) forget(threadID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t := k.threads[threadID]; t != nil {
		k.remove(t)
	}
}

// usage returns the bytes and the number of events kept.
func (k *keptEvents) usage() (int64, int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, t := range k.threads {
		n += len(t.evs)
	}
	return k.size, n
}

// HubOption configures NewHub.
type HubOption func(*hubConfig)

type hubConfig struct {
	options.Problems
	perThread  int
	maxThreads int
	budget     int64
	encode     Encoding
	elog       EventLog
}

// WithHubBuffer sets how many recent events the hub keeps per thread for
// listeners that resume (default 256), which is also how many events a
// listener may fall behind before it is disconnected. n must be positive.
func WithHubBuffer(n int) HubOption {
	return func(c *hubConfig) {
		options.Set(&c.Problems, &c.perThread, n, n > 0, "host.WithHubBuffer", "%d events is not a buffer; give a positive number", n)
	}
}

// WithHubThreads sets for how many threads the hub keeps recent events (default
// 1024); the threads that published least recently are forgotten first. n
// must be positive.
func WithHubThreads(n int) HubOption {
	return func(c *hubConfig) {
		options.Set(&c.Problems, &c.maxThreads, n, n > 0, "host.WithHubThreads", "%d threads is not a number to keep; give a positive number", n)
	}
}

// WithHubBytes sets how many bytes of recent events the hub keeps for
// listeners that resume, across all threads (default DefaultHubBytes, 32 MiB).
// An event over an eighth of it is not kept, and a listener with more than an
// eighth of it waiting to be read is disconnected as too slow. n must be
// positive.
func WithHubBytes(n int64) HubOption {
	return func(c *hubConfig) {
		options.Set(&c.Problems, &c.budget, n, n > 0, "host.WithHubBytes", "%d bytes is not a budget; give a positive number of bytes", n)
	}
}

// WithHubEncoding sets how the hub encodes a run's events. Package server sets
// the HTTP API's encoding (server.NewEventHub); the default names an event by
// its type and encodes the graph.Event as JSON.
func WithHubEncoding(enc Encoding) HubOption {
	return func(c *hubConfig) {
		options.Set(&c.Problems, &c.encode, enc, enc != nil, "host.WithHubEncoding", "the encoding is nil; leave the option out for the default JSON encoding")
	}
}

// encodeEvent is the default Encoding.
func encodeEvent(e graph.Event) (string, []byte, bool) {
	data, err := json.Marshal(e)
	return string(e.Type), data, err == nil
}

// NewHub returns an empty hub. It refuses a bad option value with an
// interlude.ErrInvalidRequest error that names the option.
func NewHub(opts ...HubOption) (*Hub, error) {
	cfg := hubConfig{perThread: 256, maxThreads: 1024, budget: DefaultHubBytes, encode: encodeEvent}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Err(); err != nil {
		return nil, err
	}
	h := &Hub{perThread: cfg.perThread, seed: maphash.MakeSeed(), all: map[*listener]struct{}{}, encode: cfg.encode, elog: cfg.elog}
	h.kept = keptEvents{budget: cfg.budget, maxThreads: cfg.maxThreads, perThread: cfg.perThread, threads: map[string]*keptThread{}}
	h.seq.Store(time.Now().UnixMicro())
	for i := range h.shards {
		h.shards[i].threads = make(map[string]map[*listener]struct{})
	}
	if h.elog != nil {
		h.startListening()
	}
	return h, nil
}

// Listeners returns how many listeners are subscribed.
func (h *Hub) Listeners() int64 { return h.subscribers.Load() }

// Listening reports whether an event of the thread may reach someone as it
// happens: a listener of this process, or, with an event log, of another.
// Give it to the graphs (graph.WithListeners) so that an answer nobody hears
// of at once need not wait for the disk on its own.
func (h *Hub) Listening(threadID string) bool {
	return h.elog != nil || h.subscribers.Load() > 0
}

// Dropped returns how many listeners were disconnected for falling behind.
func (h *Hub) Dropped() uint64 { return h.dropped.Load() }

// Logged reports whether the hub exchanges events through a log (WithHubLog).
func (h *Hub) Logged() bool { return h.elog != nil }

// listenerLimit is how many bytes a listener may have waiting before it is
// disconnected as too slow.
func (h *Hub) listenerLimit() int64 { return h.kept.budget / 8 }

func (h *Hub) shard(threadID string) *hubShard {
	return &h.shards[maphash.String(h.seed, threadID)%hubShards]
}

// Publish records e and sends it to the thread's listeners. Pass it to
// graph.WithEvents. It does not block, except that with an event log
// (WithHubLog) a run's end event waits until the run's events are logged.
func (h *Hub) Publish(e graph.Event) {
	if e.ThreadID == "" {
		return
	}
	name, data, ok := h.encode(e)
	if !ok {
		return
	}
	if h.elog != nil {
		// The log numbers the event and hands it back to every replica's hub,
		// this one's included, through fanOut.
		h.elog.Publish(e.ThreadID, name, data, e.Type == graph.EventEnd)
		return
	}
	h.fanOut(Event{ThreadID: e.ThreadID, Name: name, Data: data})
}

// fanOut records ev and sends it to the thread's listeners, numbering it from
// the hub's sequence unless it has an id.
func (h *Hub) fanOut(ev Event) {
	sh := h.shard(ev.ThreadID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if ev.ID == 0 {
		ev.ID = h.seq.Add(1)
	}
	h.kept.add(ev.ThreadID, ev)
	limit := h.listenerLimit()
	for l := range sh.threads[ev.ThreadID] {
		if !l.offer(ev, limit) { // too far behind: let it resume after its last event
			l.slow = true
			h.drop(sh, ev.ThreadID, l)
			h.dropped.Add(1)
		}
	}
	// Still under the shard's lock, so that every listener sees a thread's events
	// in order.
	if h.allN.Load() > 0 {
		h.publishAll(ev)
	}
}

// publishAll sends ev to the listeners of every thread.
func (h *Hub) publishAll(ev Event) {
	limit := h.listenerLimit()
	h.allMu.Lock()
	defer h.allMu.Unlock()
	for l := range h.all {
		if !l.offer(ev, limit) { // too far behind: let it reconnect and read the listing again
			l.slow = true
			h.dropAll(l)
			h.dropped.Add(1)
		}
	}
}

// dropAll ends a listener of every thread. allMu is held.
func (h *Hub) dropAll(l *listener) {
	if !l.closed {
		l.closed = true
		close(l.ch)
		delete(h.all, l)
		h.allN.Add(-1)
		h.subscribers.Add(-1)
	}
}

// drop ends a listener of the thread. The shard is locked.
func (h *Hub) drop(sh *hubShard, threadID string, l *listener) {
	if l.closed {
		return
	}
	l.closed = true
	close(l.ch)
	subs := sh.threads[threadID]
	delete(subs, l)
	if len(subs) == 0 {
		delete(sh.threads, threadID)
	}
	h.subscribers.Add(-1)
}

// Subscription is a listener of live events: of one thread (Hub.Subscribe) or
// of every thread (Hub.SubscribeAll). Read it with Next and Close it when done.
type Subscription struct {
	hub      *Hub
	threadID string // "" for every thread
	l        *listener
	position int64
	backlog  []Event // events to deliver before the live ones
	seen     int64   // live events up to this id were delivered already, or precede the start
	replay   func(ctx context.Context) ([]Event, error)
	once     sync.Once
}

// Position is where the subscription starts: every event it will deliver
// live has an id above it, so a listener that resumes after it misses none
// published after it subscribed. It is 0 for a subscription that replays.
func (s *Subscription) Position() int64 { return s.position }

// Next returns the next event: first the replayed ones, then the live ones
// as they are published. It fails with ErrFellBehind when the listener fell
// too far behind, ErrStreamEnded when the hub ended every stream, ctx's error
// when ctx ends, or the log's error when a replay from the log fails.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		if len(s.backlog) == 0 && s.replay != nil {
			page, err := s.replay(ctx)
			if err != nil {
				return Event{}, err
			}
			if len(page) == 0 {
				s.replay = nil
			}
			s.backlog = page
		}
		if len(s.backlog) > 0 {
			ev := s.backlog[0]
			s.backlog = s.backlog[1:]
			s.seen = max(s.seen, ev.ID)
			return ev, nil
		}
		select {
		case ev, ok := <-s.l.ch:
			if !ok {
				if s.l.slow {
					return Event{}, ErrFellBehind
				}
				return Event{}, ErrStreamEnded
			}
			s.l.queued.Add(-ev.size())
			if ev.ID <= s.seen {
				continue // the replay delivered it
			}
			return ev, nil
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Close ends the subscription; later calls do nothing.
func (s *Subscription) Close() {
	s.once.Do(func() {
		h := s.hub
		if s.threadID == "" {
			h.allMu.Lock()
			h.dropAll(s.l)
			h.allMu.Unlock()
			return
		}
		sh := h.shard(s.threadID)
		sh.mu.Lock()
		h.drop(sh, s.threadID, s.l)
		sh.mu.Unlock()
	})
}

// SubscribeAll subscribes to every thread's events from now on (each Event
// names its thread). It fails with ErrHubClosed once the hub is closed, and
// with an error of code CodeUnavailable if the hub's log is not reachable.
func (h *Hub) SubscribeAll(ctx context.Context) (*Subscription, error) {
	h.allMu.Lock()
	if h.closed.Load() {
		h.allMu.Unlock()
		return nil, ErrHubClosed
	}
	l := &listener{ch: make(chan Event, h.perThread)}
	h.all[l] = struct{}{}
	h.allN.Add(1)
	h.subscribers.Add(1)
	h.allMu.Unlock()
	s := &Subscription{hub: h, l: l}
	if err := h.ready(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Subscribe subscribes to the thread's events. With replay set it first
// delivers the thread's events with an id above after: from the hub's log
// (WithHubLog) whatever it still keeps, otherwise the events the hub keeps in
// memory. It fails with ErrHubClosed once the hub is
// closed, and with an error of code CodeUnavailable if the hub's log is not
// reachable.
func (h *Hub) Subscribe(ctx context.Context, threadID string, replay bool, after int64) (*Subscription, error) {
	sh := h.shard(threadID)
	sh.mu.Lock()
	if h.closed.Load() {
		sh.mu.Unlock()
		return nil, ErrHubClosed
	}
	l := &listener{ch: make(chan Event, h.perThread)}
	subs := sh.threads[threadID]
	if subs == nil {
		subs = map[*listener]struct{}{}
		sh.threads[threadID] = subs
	}
	subs[l] = struct{}{}
	h.subscribers.Add(1)
	s := &Subscription{hub: h, threadID: threadID, l: l}
	if h.elog == nil {
		if replay {
			s.backlog = h.kept.after(threadID, after)
		}
		// The thread's events are numbered under the shard's lock, which is held.
		s.position = h.seq.Load()
		sh.mu.Unlock()
		return s, nil
	}
	sh.mu.Unlock()
	if err := h.ready(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if !replay {
		// Every event of the thread logged after this read has a higher id,
		// so a listener that resumes after it misses nothing.
		pos, err := h.elog.Last(ctx, threadID)
		if err != nil {
			s.Close()
			return nil, logUnreachable(err)
		}
		// An event at or below it can still arrive from the log's listener,
		// late; the stream skips it, as it skips what a replay delivered.
		s.position, s.seen = pos, pos
		return s, nil
	}
	// The replay reads the log a page at a time, the first one now, so that a
	// failing log refuses the subscription rather than ending it at once.
	s.seen = after
	s.replay = func(ctx context.Context) ([]Event, error) { return h.readLog(ctx, threadID, s.seen) }
	page, err := s.replay(ctx)
	if err != nil {
		s.Close()
		return nil, err
	}
	if len(page) == 0 {
		s.replay = nil
	}
	s.backlog = page
	return s, nil
}

// replayPage is how many logged events a replay reads at a time.
const replayPage = 64

// readLog reads a page of the thread's logged events with an id above after.
func (h *Hub) readLog(ctx context.Context, threadID string, after int64) ([]Event, error) {
	var page []Event
	errFull := errors.New("page full")
	err := h.elog.Read(ctx, threadID, after, func(id int64, name string, data []byte) error {
		page = append(page, Event{ID: id, ThreadID: threadID, Name: name, Data: data})
		if len(page) == replayPage {
			return errFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return nil, err
	}
	return page, nil
}

// Forget drops the events kept for a deleted thread, so that a new thread with
// the same id does not replay them.
func (h *Hub) Forget(threadID string) {
	sh := h.shard(threadID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h.kept.forget(threadID)
}

// Close ends every listener's stream (ErrStreamEnded) and refuses new ones;
// events published afterwards are still kept. A server's graceful shutdown
// calls it so that open event streams do not hold the shutdown up.
func (h *Hub) Close() {
	h.closed.Store(true)
	if h.stopListen != nil {
		h.stopListen()
	}
	h.endStreams()
}

// endStreams ends every listener's stream. A listener of one thread resumes
// after its last event and catches up on what it missed.
func (h *Hub) endStreams() {
	for i := range h.shards {
		sh := &h.shards[i]
		sh.mu.Lock()
		for id, subs := range sh.threads {
			for l := range subs {
				h.drop(sh, id, l)
			}
		}
		sh.mu.Unlock()
	}
	h.allMu.Lock()
	for l := range h.all {
		h.dropAll(l)
	}
	h.allMu.Unlock()
}

// logUnreachable is the error for a listener when the event log fails it.
func logUnreachable(err error) error {
	return &interlude.Error{Code: CodeUnavailable, Message: "the event log is not reachable right now; subscribe again shortly: " + err.Error()}
}

// CodeUnavailable is the code of the error refusing a listener while the
// hub's event log is not reachable.
const CodeUnavailable interlude.Code = "unavailable"
