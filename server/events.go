package server

import (
	"bytes"
	"container/list"
	"encoding/json"
	"hash/maphash"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// Event payloads, shared by the run streams and the live thread events.

// metadataData opens a stream.
type metadataData struct {
	ThreadID   string `json:"thread_id"`
	Graph      string `json:"graph,omitempty"`
	RunID      string `json:"run_id,omitempty"`
	Checkpoint int64  `json:"checkpoint"`
}

// pauseData is the updates event of a pause.
type pauseData struct {
	Status     string                  `json:"status"`
	Node       string                  `json:"node"`
	Interrupt  *interlude.Interruption `json:"interrupt,omitempty"`
	Breakpoint *graph.Breakpoint       `json:"breakpoint,omitempty"`
}

// subTaskData reports a sub-task (an agent's tool call) that finished while its
// step may still wait: {"node", "path", "tool_call_id", "result"}.
type subTaskData struct {
	Node string `json:"node"`
	graph.SubTaskResult
}

// liveEndData closes a run in the live thread events, which carry no values.
type liveEndData struct {
	ThreadID   string              `json:"thread_id"`
	Status     interlude.RunStatus `json:"status"`
	Checkpoint int64               `json:"checkpoint"`
}

// payload encodes the events that read the same in a run stream and in the live
// thread events: updates, pauses, messages, custom data and finished sub-tasks. It reports false for
// metadata and end, which each caller words itself, and for data that cannot be
// encoded.
func payload(e graph.Event) (string, []byte, bool) {
	switch e.Type {
	case graph.EventUpdate:
		upd := e.Update
		if len(upd) == 0 {
			upd = json.RawMessage("{}")
		}
		node, _ := json.Marshal(e.Node)
		data := make([]byte, 0, len(node)+len(upd)+3)
		data = append(append(append(append(data, '{'), node...), ':'), upd...)
		return "updates", append(data, '}'), true
	case graph.EventInterrupt:
		if e.Interrupt == nil {
			return "", nil, false
		}
		q := shown(*e.Interrupt)
		data, err := json.Marshal(pauseData{Status: "interrupted", Node: e.Interrupt.Node, Interrupt: &q})
		return "updates", data, err == nil
	case graph.EventBreakpoint:
		data, err := json.Marshal(pauseData{Status: "interrupted", Node: e.Node, Breakpoint: e.Breakpoint})
		return "updates", data, err == nil
	case graph.EventMessage, graph.EventCustom:
		data, err := json.Marshal(e.Data)
		return string(e.Type), data, err == nil
	case graph.EventSubTask:
		if e.SubTask == nil {
			return "", nil, false
		}
		data, err := json.Marshal(subTaskData{Node: e.Node, SubTaskResult: *e.SubTask})
		return string(e.Type), data, err == nil
	}
	return "", nil, false
}

// EventHub fans the events of graph runs out to live listeners of
// GET /v1/threads/{id}/events and of GET /v1/events (every thread). Compile graphs
// with graph.WithEvents(hub.Publish) and pass the hub to the server with
// WithEventHub.
//
// Each event gets an id, increasing across the hub (it starts from the hub's
// creation time in microseconds, so ids keep increasing across restarts). For a
// listener reconnecting with Last-Event-ID, the hub keeps the newest events of
// the threads that published most recently, within a budget of bytes (32 MiB by
// default, WithHubBytes) and of counts (256 events for each of 1024 threads,
// WithHubBuffer and WithHubThreads); the threads that published least recently
// are forgotten first. An event larger than an eighth of the budget is not kept,
// and the thread's older events are forgotten with it, so that a replay never
// skips one: older events are gone and a reconnecting listener resumes from the
// oldest kept.
//
// Publish never waits for a listener. A listener that falls behind, by 256
// events or by an eighth of the byte budget waiting to be written, is
// disconnected: its stream ends with an error event of code slow_consumer, to
// reconnect with Last-Event-ID. Listeners of every thread get no replay and are
// likewise disconnected when behind. An EventHub is safe for concurrent use.
type EventHub struct {
	perThread   int
	seed        maphash.Seed
	seq         atomic.Int64
	closed      atomic.Bool
	subscribers atomic.Int64
	dropped     atomic.Uint64
	shards      [hubShards]hubShard
	kept        keptEvents

	// Listeners of every thread (GET /v1/events); allN mirrors len(all) so that
	// Publish skips allMu while nobody listens to everything.
	allMu sync.Mutex
	all   map[*subscription]struct{}
	allN  atomic.Int64

	// With an event log (WithHubLog): the log, and the end of the goroutine
	// that feeds the hub from it.
	elog       EventLog
	stopListen func()
}

const hubShards = 32

// DefaultHubBytes is the default budget of the events an EventHub keeps for
// reconnecting listeners.
const DefaultHubBytes = 32 << 20

// hubEventOverhead is what a kept event costs beyond its name and data.
const hubEventOverhead = 64

// hubShard holds the listeners of the threads whose ids hash to it.
type hubShard struct {
	mu      sync.Mutex
	threads map[string]map[*subscription]struct{}
}

type hubEvent struct {
	id   int64
	name string
	data []byte
}

// size is the memory an event is counted for.
func (ev hubEvent) size() int64 { return int64(len(ev.name)+len(ev.data)) + hubEventOverhead }

type subscription struct {
	ch     chan hubEvent
	queued atomic.Int64 // bytes sent to ch and not received yet
	closed bool         // guarded by the shard's mutex (allMu for every thread's)
	slow   bool         // closed for falling behind; read once ch is closed
}

// offer sends ev to the listener unless it is too far behind, by count or by
// bytes (limit); it reports false if so.
func (sub *subscription) offer(ev hubEvent, limit int64) bool {
	n := ev.size()
	if q := sub.queued.Add(n); q > n && q > limit {
		sub.queued.Add(-n)
		return false
	}
	select {
	case sub.ch <- ev:
		return true
	default:
		sub.queued.Add(-n)
		return false
	}
}

// received accounts for an event taken from the channel.
func (sub *subscription) received(ev hubEvent) { sub.queued.Add(-ev.size()) }

// keptEvents holds the newest events of recently active threads, for
// listeners that reconnect with Last-Event-ID, within a budget of bytes.
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
	evs  []hubEvent // oldest first
	size int64
}

// add keeps ev as the thread's newest event, forgetting the events of the
// threads that published least recently to stay within the budget.
func (k *keptEvents) add(threadID string, ev hubEvent) {
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
	t.evs[0] = hubEvent{}
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
func (k *keptEvents) after(threadID string, after int64) []hubEvent {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.threads[threadID]
	if t == nil {
		return nil
	}
	var out []hubEvent
	for _, ev := range t.evs {
		if ev.id > after {
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

// HubOption configures NewEventHub.
type HubOption func(*EventHub)

// WithHubBuffer sets how many recent events the hub keeps per thread for
// reconnecting listeners (default 256), which is also how many events a
// listener may fall behind before it is disconnected.
func WithHubBuffer(n int) HubOption {
	return func(h *EventHub) {
		if n > 0 {
			h.perThread = n
		}
	}
}

// WithHubThreads sets for how many threads the hub keeps recent events (default
// 1024); the threads that published least recently are forgotten first.
func WithHubThreads(n int) HubOption {
	return func(h *EventHub) {
		if n > 0 {
			h.kept.maxThreads = n
		}
	}
}

// WithHubBytes sets how many bytes of recent events the hub keeps for
// reconnecting listeners, across all threads (default DefaultHubBytes, 32 MiB).
// An event over an eighth of it is not kept, and a listener with more than an
// eighth of it waiting to be written is disconnected as too slow.
func WithHubBytes(n int64) HubOption {
	return func(h *EventHub) {
		if n > 0 {
			h.kept.budget = n
		}
	}
}

// NewEventHub returns an empty hub.
func NewEventHub(opts ...HubOption) *EventHub {
	h := &EventHub{perThread: 256, seed: maphash.MakeSeed(), all: map[*subscription]struct{}{}}
	h.kept = keptEvents{budget: DefaultHubBytes, maxThreads: 1024, threads: map[string]*keptThread{}}
	for _, o := range opts {
		o(h)
	}
	h.kept.perThread = h.perThread
	h.seq.Store(time.Now().UnixMicro())
	for i := range h.shards {
		h.shards[i].threads = make(map[string]map[*subscription]struct{})
	}
	if h.elog != nil {
		h.startListening()
	}
	return h
}

// listenerLimit is how many bytes a listener may have waiting before it is
// disconnected as too slow.
func (h *EventHub) listenerLimit() int64 { return h.kept.budget / 8 }

func (h *EventHub) shard(threadID string) *hubShard {
	return &h.shards[maphash.String(h.seed, threadID)%hubShards]
}

// Publish records e and sends it to the thread's listeners. Pass it to
// graph.WithEvents. It does not block, except that with an event log
// (WithHubLog) a run's end event waits until the run's events are logged.
func (h *EventHub) Publish(e graph.Event) {
	if e.ThreadID == "" {
		return
	}
	var name string
	var data []byte
	switch e.Type {
	case graph.EventMetadata:
		name = "metadata"
		data, _ = json.Marshal(metadataData{ThreadID: e.ThreadID, Checkpoint: e.Checkpoint})
	case graph.EventEnd:
		name = "end"
		data, _ = json.Marshal(liveEndData{ThreadID: e.ThreadID, Status: e.Status, Checkpoint: e.Checkpoint})
	default:
		var ok bool
		if name, data, ok = payload(e); !ok {
			return
		}
	}
	if h.elog != nil {
		// The log numbers the event and hands it back to every replica's hub,
		// this one's included, through deliver.
		h.elog.Publish(e.ThreadID, name, data, e.Type == graph.EventEnd)
		return
	}
	h.fanOut(e.ThreadID, hubEvent{name: name, data: data})
}

// fanOut records ev and sends it to the thread's listeners, numbering it from
// the hub's sequence unless it has an id.
func (h *EventHub) fanOut(threadID string, ev hubEvent) {
	sh := h.shard(threadID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if ev.id == 0 {
		ev.id = h.seq.Add(1)
	}
	h.kept.add(threadID, ev)
	limit := h.listenerLimit()
	for sub := range sh.threads[threadID] {
		if !sub.offer(ev, limit) { // too far behind: let it reconnect with Last-Event-ID
			sub.slow = true
			h.drop(sh, threadID, sub)
			h.dropped.Add(1)
		}
	}
	// Still under the shard's lock, so that every listener sees a thread's events
	// in order.
	if h.allN.Load() > 0 {
		h.publishAll(threadID, ev)
	}
}

// allData is the data of an event in the feed of every thread.
type allData struct {
	ThreadID string          `json:"thread_id"`
	Data     json.RawMessage `json:"data"`
}

// publishAll sends ev of the thread to the listeners of every thread.
func (h *EventHub) publishAll(threadID string, ev hubEvent) {
	data, err := json.Marshal(allData{ThreadID: threadID, Data: ev.data})
	if err != nil {
		return
	}
	ev.data = data
	limit := h.listenerLimit()
	h.allMu.Lock()
	defer h.allMu.Unlock()
	for sub := range h.all {
		if !sub.offer(ev, limit) { // too far behind: let it reconnect and read the listing again
			sub.slow = true
			h.dropAll(sub)
			h.dropped.Add(1)
		}
	}
}

// dropAll ends a listener of every thread. allMu is held.
func (h *EventHub) dropAll(sub *subscription) {
	if !sub.closed {
		sub.closed = true
		close(sub.ch)
		delete(h.all, sub)
		h.allN.Add(-1)
		h.subscribers.Add(-1)
	}
}

// subscribeAll registers a listener of every thread's events. It returns nil once
// the hub is closed.
func (h *EventHub) subscribeAll() *subscription {
	h.allMu.Lock()
	defer h.allMu.Unlock()
	if h.closed.Load() {
		return nil
	}
	sub := &subscription{ch: make(chan hubEvent, h.perThread)}
	h.all[sub] = struct{}{}
	h.allN.Add(1)
	h.subscribers.Add(1)
	return sub
}

func (h *EventHub) unsubscribeAll(sub *subscription) {
	h.allMu.Lock()
	defer h.allMu.Unlock()
	h.dropAll(sub)
}

// drop ends a listener of the thread. The shard is locked.
func (h *EventHub) drop(sh *hubShard, threadID string, sub *subscription) {
	if sub.closed {
		return
	}
	sub.closed = true
	close(sub.ch)
	subs := sh.threads[threadID]
	delete(subs, sub)
	if len(subs) == 0 {
		delete(sh.threads, threadID)
	}
	h.subscribers.Add(-1)
}

// subscribe registers a listener of the thread and returns the kept events with an
// id above after (none when after is 0), and the hub's position: every event of
// the thread from now on has an id above it. It returns nil once the hub is
// closed.
func (h *EventHub) subscribe(threadID string, after int64) (*subscription, []hubEvent, int64) {
	sh := h.shard(threadID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if h.closed.Load() {
		return nil, nil, 0
	}
	var backlog []hubEvent
	if after > 0 {
		backlog = h.kept.after(threadID, after)
	}
	sub := &subscription{ch: make(chan hubEvent, h.perThread)}
	subs := sh.threads[threadID]
	if subs == nil {
		subs = map[*subscription]struct{}{}
		sh.threads[threadID] = subs
	}
	subs[sub] = struct{}{}
	h.subscribers.Add(1)
	// The thread's events are numbered under the shard's lock, which is held.
	return sub, backlog, h.seq.Load()
}

func (h *EventHub) unsubscribe(threadID string, sub *subscription) {
	sh := h.shard(threadID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h.drop(sh, threadID, sub)
}

// forget drops the events kept for a deleted thread, so that a new thread with the
// same id does not replay them.
func (h *EventHub) forget(threadID string) {
	sh := h.shard(threadID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	h.kept.forget(threadID)
}

// Close ends every live listener's stream and refuses new ones; events published
// afterwards are still kept. The server's graceful shutdown calls it (through
// Server.Drain) so that open event streams do not hold the shutdown up.
func (h *EventHub) Close() {
	h.closed.Store(true)
	if h.stopListen != nil {
		h.stopListen()
	}
	h.endStreams()
}

// endStreams ends every listener's stream. A listener of one thread reconnects
// with Last-Event-ID and catches up on what it missed.
func (h *EventHub) endStreams() {
	for i := range h.shards {
		sh := &h.shards[i]
		sh.mu.Lock()
		for id, subs := range sh.threads {
			for sub := range subs {
				h.drop(sh, id, sub)
			}
		}
		sh.mu.Unlock()
	}
	h.allMu.Lock()
	for sub := range h.all {
		h.dropAll(sub)
	}
	h.allMu.Unlock()
}

// keepAlive is how often an idle event stream sends a comment, so that proxies do
// not close it.
const keepAlive = 20 * time.Second

var errNoHub = &apiError{status: http.StatusNotImplemented, code: codeNotImplemented,
	message: "this server has no event hub: create one with server.NewEventHub, compile the graphs with graph.WithEvents(hub.Publish) and pass server.WithEventHub(hub)"}

var errShuttingDown = &apiError{status: http.StatusServiceUnavailable, code: codeUnavailable, message: "the server is shutting down"}

// handleEvents serves GET /v1/threads/{id}/events.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	id, err := pathID(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.hub == nil {
		s.writeError(w, r, errNoHub)
		return
	}
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("last_event_id")
	}
	var after int64
	if last != "" {
		if after, err = strconv.ParseInt(strings.TrimSpace(last), 10, 64); err != nil || after < 0 {
			s.writeError(w, r, badRequest("Last-Event-ID", "Last-Event-ID %q is not an event id from this stream", last))
			return
		}
	}
	if s.hub.elog != nil {
		s.listenLogged(w, r, id, last != "", after)
		return
	}
	sub, backlog, pos := s.hub.subscribe(id, after)
	if sub == nil {
		s.writeError(w, r, errShuttingDown)
		return
	}
	defer s.hub.unsubscribe(id, sub)
	ew := s.newEventWriter(w, true)
	ew.comment("subscribed to thread " + id)
	if last == "" {
		ew.position(pos)
	}
	for _, ev := range backlog {
		ew.sendID(ev.name, ev.data, ev.id)
	}
	follow(ew, r, sub, 0)
}

// slowConsumer is the error event that ends the stream of a listener that fell
// too far behind.
func slowConsumer(message string) []byte {
	data, _ := json.Marshal(errorObject{Code: codeSlowConsumer, Message: message})
	return data
}

// follow streams the subscription's events, skipping those with an id up to
// seen (already sent from a replay), until the listener leaves, falls behind or
// the hub closes. A listener that fell behind is told so, to reconnect with
// Last-Event-ID (or, following every thread, to read the listing again).
func follow(ew *eventWriter, r *http.Request, sub *subscription, seen int64) {
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for !ew.broken {
		select {
		case ev, ok := <-sub.ch:
			if !ok {
				if sub.slow {
					ew.send("error", slowConsumer("this listener fell too far behind the thread's events and was disconnected; reconnect with the Last-Event-ID of the last event received to resume"))
				}
				return
			}
			sub.received(ev)
			if ev.id <= seen {
				continue
			}
			ew.sendID(ev.name, ev.data, ev.id)
		case <-tick.C:
			ew.comment("keep-alive")
		case <-r.Context().Done():
			return
		}
	}
}

// handleAllEvents serves GET /v1/events: every thread's live events.
func (s *Server) handleAllEvents(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	if _, err := query(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.hub == nil {
		s.writeError(w, r, errNoHub)
		return
	}
	sub := s.hub.subscribeAll()
	if sub == nil {
		s.writeError(w, r, errShuttingDown)
		return
	}
	defer s.hub.unsubscribeAll(sub)
	if err := s.hub.ready(r.Context()); err != nil {
		s.writeError(w, r, err)
		return
	}
	ew := s.newEventWriter(w, true)
	ew.comment("subscribed to every thread")
	follow(ew, r, sub, 0)
}

// eventWriter writes a stream of events as NDJSON or SSE, flushing each. Each
// write must finish within the server's write timeout, or the stream ends: a
// client that stops reading is cut off.
type eventWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	sse     bool
	timeout time.Duration // for each write; 0 for none
	seq     int64
	broken  bool    // a write failed (in asynchronous mode, only the writer's goroutine reads it)
	buf     []byte  // reused by synchronous writes
	out     *outbox // set in asynchronous mode
}

func (s *Server) newEventWriter(w http.ResponseWriter, sse bool) *eventWriter {
	h := w.Header()
	if sse {
		h.Set("Content-Type", "text/event-stream")
	} else {
		h.Set("Content-Type", "application/x-ndjson")
	}
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	ew := &eventWriter{w: w, rc: http.NewResponseController(w), sse: sse, timeout: s.timeouts.Write}
	ew.deadline()
	w.WriteHeader(http.StatusOK)
	ew.flush()
	return ew
}

// deadline gives the next write the write timeout.
func (ew *eventWriter) deadline() {
	if ew.timeout > 0 {
		ew.rc.SetWriteDeadline(time.Now().Add(ew.timeout))
	}
}

func (ew *eventWriter) flush() {
	if err := ew.rc.Flush(); err != nil {
		ew.broken = true
	}
}

// send writes an event numbered by the stream's own sequence.
func (ew *eventWriter) send(name string, data []byte) {
	ew.seq++
	ew.sendID(name, data, ew.seq)
}

func (ew *eventWriter) sendID(name string, data []byte, id int64) {
	if ew.out != nil {
		ew.out.push(ew.format(nil, name, data, id), id)
		return
	}
	if ew.broken {
		return
	}
	ew.buf = ew.format(ew.buf[:0], name, data, id)
	ew.write(ew.buf)
}

// format appends the event to b.
func (ew *eventWriter) format(b []byte, name string, data []byte, id int64) []byte {
	if ew.sse {
		if bytes.IndexByte(data, '\n') >= 0 { // SSE data must be one line
			var c bytes.Buffer
			if json.Compact(&c, data) == nil {
				data = c.Bytes()
			}
		}
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, "\ndata: "...)
		b = append(b, data...)
		b = append(b, "\nid: "...)
		b = strconv.AppendInt(b, id, 10)
		return append(b, "\n\n"...)
	}
	b = append(b, `{"event":`...)
	b = strconv.AppendQuote(b, name)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, "}\n"...)
}

// write writes b and flushes it within the write timeout.
func (ew *eventWriter) write(b []byte) {
	ew.deadline()
	if _, err := ew.w.Write(b); err != nil {
		ew.broken = true
		return
	}
	ew.flush()
}

// position tells an SSE listener where its stream starts, as an id with no
// event: a listener that reconnects with it before any event arrives misses
// none published after it subscribed.
func (ew *eventWriter) position(id int64) { ew.block("id: " + strconv.FormatInt(id, 10)) }

// comment writes an SSE comment, which keeps the stream alive and says nothing.
func (ew *eventWriter) comment(text string) { ew.block(": " + text) }

// block writes one SSE block that carries no event.
func (ew *eventWriter) block(line string) {
	if ew.broken || !ew.sse {
		return
	}
	ew.write([]byte(line + "\n\n"))
}

// async makes the writer hand its events to a goroutine that writes them, so
// that whoever sends them never waits for the client. Events waiting to be
// written are bounded by limit bytes: a client that falls further behind is
// cut off, its stream ending (if it can still be written) with an error event
// of code slow_consumer saying message. Call finish once the last event is sent.
func (ew *eventWriter) async(limit int, message string) {
	ew.out = &outbox{ew: ew, limit: limit, message: message, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go ew.out.run()
}

// finish waits until the events sent are written, or the client is cut off.
func (ew *eventWriter) finish() {
	if ew.out == nil {
		return
	}
	ew.out.mu.Lock()
	ew.out.ended = true
	ew.out.mu.Unlock()
	ew.out.signal()
	<-ew.out.done
}

// outbox holds the events of an asynchronous eventWriter until its goroutine
// writes them.
type outbox struct {
	ew      *eventWriter
	limit   int
	message string
	wake    chan struct{}
	done    chan struct{}

	mu     sync.Mutex
	queue  [][]byte
	size   int
	ended  bool // finish was called: no more events come
	cut    bool // the client fell behind: nothing more is queued
	failed bool // a write failed: nothing more is written
}

// push queues an event, or cuts the client off if it is too far behind.
func (o *outbox) push(b []byte, id int64) {
	o.mu.Lock()
	switch {
	case o.cut || o.failed:
	case o.size > 0 && o.size+len(b) > o.limit:
		o.cut = true
		o.queue, o.size = [][]byte{o.ew.format(nil, "error", slowConsumer(o.message), id)}, 0
	default:
		o.queue = append(o.queue, b)
		o.size += len(b)
	}
	o.mu.Unlock()
	o.signal()
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// run writes the queued events until the stream ends.
func (o *outbox) run() {
	defer close(o.done)
	for {
		o.mu.Lock()
		batch, done := o.queue, o.ended || o.cut || o.failed
		o.queue, o.size = nil, 0
		o.mu.Unlock()
		if len(batch) == 0 {
			if done {
				return
			}
			<-o.wake
			continue
		}
		for _, b := range batch {
			o.ew.write(b)
			if o.ew.broken {
				o.mu.Lock()
				o.failed, o.queue = true, nil
				o.mu.Unlock()
				return
			}
		}
	}
}
