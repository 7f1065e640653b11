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
	Status     string            `json:"status"`
	Node       string            `json:"node"`
	Interrupt  *wireInterrupt    `json:"interrupt,omitempty"`
	Breakpoint *graph.Breakpoint `json:"breakpoint,omitempty"`
}

// subTaskData reports a sub-task (an agent's tool call) that finished while its
// step may still wait: {"node", "path", "tool_call_id", "result"}.
type subTaskData struct {
	Node string `json:"node"`
	graph.SubTaskResult
}

// liveEndData closes a run in the live thread events, which carry no values.
type liveEndData struct {
	ThreadID   string       `json:"thread_id"`
	Status     graph.Status `json:"status"`
	Checkpoint int64        `json:"checkpoint"`
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
		q := toWire(*e.Interrupt, false)
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
// each thread in a ring buffer: by default 256 events for each of the 1024 threads
// that published most recently (see WithHubBuffer and WithHubThreads); older
// events are gone and a reconnecting listener resumes from the oldest kept. A
// listener that falls 256 events behind is disconnected, to reconnect with
// Last-Event-ID. Listeners of every thread get no replay and are likewise
// disconnected when 256 events behind. An EventHub is safe for concurrent use.
type EventHub struct {
	perThread   int
	perShard    int
	seed        maphash.Seed
	seq         atomic.Int64
	closed      atomic.Bool
	subscribers atomic.Int64
	dropped     atomic.Uint64
	shards      [hubShards]hubShard

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

type hubShard struct {
	mu      sync.Mutex
	threads map[string]*threadLog
	lru     list.List // *threadLog, most recently used first
}

type threadLog struct {
	id   string
	elem *list.Element
	ring []hubEvent
	head int // index of the oldest event
	subs map[*subscription]struct{}
}

type hubEvent struct {
	id   int64
	name string
	data []byte
}

type subscription struct {
	ch     chan hubEvent
	closed bool // guarded by the shard's mutex
}

// HubOption configures NewEventHub.
type HubOption func(*EventHub)

// WithHubBuffer sets how many recent events the hub keeps per thread for
// reconnecting listeners (default 256).
func WithHubBuffer(n int) HubOption {
	return func(h *EventHub) {
		if n > 0 {
			h.perThread = n
		}
	}
}

// WithHubThreads sets for how many threads the hub keeps recent events (default
// 1024); the threads that published least recently are forgotten first, unless
// someone listens to them.
func WithHubThreads(n int) HubOption {
	return func(h *EventHub) {
		if n > 0 {
			h.perShard = (n + hubShards - 1) / hubShards
		}
	}
}

// NewEventHub returns an empty hub.
func NewEventHub(opts ...HubOption) *EventHub {
	h := &EventHub{perThread: 256, perShard: 1024 / hubShards, seed: maphash.MakeSeed(), all: map[*subscription]struct{}{}}
	for _, o := range opts {
		o(h)
	}
	h.seq.Store(time.Now().UnixMicro())
	for i := range h.shards {
		h.shards[i].threads = make(map[string]*threadLog)
	}
	if h.elog != nil {
		h.startListening()
	}
	return h
}

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
	tl := h.log(sh, threadID)
	if ev.id == 0 {
		ev.id = h.seq.Add(1)
	}
	if len(tl.ring) < h.perThread {
		tl.ring = append(tl.ring, ev)
	} else {
		tl.ring[tl.head] = ev
		tl.head = (tl.head + 1) % len(tl.ring)
	}
	for sub := range tl.subs {
		select {
		case sub.ch <- ev:
		default: // too far behind: let it reconnect with Last-Event-ID
			h.drop(tl, sub)
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
	h.allMu.Lock()
	defer h.allMu.Unlock()
	for sub := range h.all {
		select {
		case sub.ch <- ev:
		default: // too far behind: let it reconnect and read the listing again
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

// log returns the thread's log, creating it (and forgetting the least recently
// used thread nobody listens to) if needed. The shard is locked.
func (h *EventHub) log(sh *hubShard, id string) *threadLog {
	if tl := sh.threads[id]; tl != nil {
		sh.lru.MoveToFront(tl.elem)
		return tl
	}
	tl := &threadLog{id: id, subs: map[*subscription]struct{}{}}
	tl.elem = sh.lru.PushFront(tl)
	sh.threads[id] = tl
	for e := sh.lru.Back(); e != nil && len(sh.threads) > h.perShard; {
		prev := e.Prev()
		if old := e.Value.(*threadLog); old != tl && len(old.subs) == 0 {
			sh.lru.Remove(e)
			delete(sh.threads, old.id)
		}
		e = prev
	}
	return tl
}

func (h *EventHub) drop(tl *threadLog, sub *subscription) {
	if !sub.closed {
		sub.closed = true
		close(sub.ch)
		delete(tl.subs, sub)
		h.subscribers.Add(-1)
	}
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
	tl := h.log(sh, threadID)
	var backlog []hubEvent
	if after > 0 {
		for i := range tl.ring {
			if ev := tl.ring[(tl.head+i)%len(tl.ring)]; ev.id > after {
				backlog = append(backlog, ev)
			}
		}
	}
	sub := &subscription{ch: make(chan hubEvent, h.perThread)}
	tl.subs[sub] = struct{}{}
	h.subscribers.Add(1)
	// The thread's events are numbered under the shard's lock, which is held.
	return sub, backlog, h.seq.Load()
}

func (h *EventHub) unsubscribe(threadID string, sub *subscription) {
	sh := h.shard(threadID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if tl := sh.threads[threadID]; tl != nil {
		h.drop(tl, sub)
	}
}

// forget drops the events kept for a deleted thread, so that a new thread with the
// same id does not replay them.
func (h *EventHub) forget(threadID string) {
	sh := h.shard(threadID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if tl := sh.threads[threadID]; tl != nil {
		tl.ring, tl.head = nil, 0
		if len(tl.subs) == 0 {
			sh.lru.Remove(tl.elem)
			delete(sh.threads, threadID)
		}
	}
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
		for _, tl := range sh.threads {
			for sub := range tl.subs {
				h.drop(tl, sub)
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
	ew := newEventWriter(w, true)
	ew.comment("subscribed to thread " + id)
	if last == "" {
		ew.position(pos)
	}
	for _, ev := range backlog {
		ew.sendID(ev.name, ev.data, ev.id)
	}
	follow(ew, r, sub, 0)
}

// follow streams the subscription's events, skipping those with an id up to
// seen (already sent from a replay), until the listener leaves, falls behind or
// the hub closes.
func follow(ew *eventWriter, r *http.Request, sub *subscription, seen int64) {
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for !ew.broken {
		select {
		case ev, ok := <-sub.ch:
			if !ok {
				return
			}
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
	ew := newEventWriter(w, true)
	ew.comment("subscribed to every thread")
	follow(ew, r, sub, 0)
}

// eventWriter writes a stream of events as NDJSON or SSE, flushing each.
type eventWriter struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	sse    bool
	seq    int64
	broken bool
	buf    []byte
}

func newEventWriter(w http.ResponseWriter, sse bool) *eventWriter {
	h := w.Header()
	if sse {
		h.Set("Content-Type", "text/event-stream")
	} else {
		h.Set("Content-Type", "application/x-ndjson")
	}
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ew := &eventWriter{w: w, rc: http.NewResponseController(w), sse: sse}
	ew.flush()
	return ew
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
	if ew.broken {
		return
	}
	b := ew.buf[:0]
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
		b = append(b, "\n\n"...)
	} else {
		b = append(b, `{"event":`...)
		b = strconv.AppendQuote(b, name)
		b = append(b, `,"data":`...)
		b = append(b, data...)
		b = append(b, "}\n"...)
	}
	ew.buf = b
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
	if _, err := ew.w.Write([]byte(line + "\n\n")); err != nil {
		ew.broken = true
		return
	}
	ew.flush()
}
