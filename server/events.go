package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
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

// NewEventHub returns an event hub (host.NewHub) whose events read as the
// HTTP API streams them. Compile the graphs with graph.WithEvents(hub.Publish)
// and pass the hub to the server with WithEventHub (or to its host with
// host.WithHub).
func NewEventHub(opts ...host.HubOption) *host.Hub {
	return host.NewHub(append([]host.HubOption{host.WithHubEncoding(encodeLive)}, opts...)...)
}

// encodeLive encodes an event of the live thread events.
func encodeLive(e graph.Event) (string, []byte, bool) {
	switch e.Type {
	case graph.EventMetadata:
		data, err := json.Marshal(metadataData{ThreadID: e.ThreadID, Checkpoint: e.Checkpoint})
		return "metadata", data, err == nil
	case graph.EventEnd:
		data, err := json.Marshal(liveEndData{ThreadID: e.ThreadID, Status: e.Status, Checkpoint: e.Checkpoint})
		return "end", data, err == nil
	}
	return payload(e)
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
	sub, err := s.hub.Subscribe(r.Context(), id, last != "", after)
	if err != nil {
		s.writeSubscribeError(w, r, err)
		return
	}
	defer sub.Close()
	ew := s.newEventWriter(w, true)
	ew.comment("subscribed to thread " + id)
	if last == "" {
		ew.position(sub.Position())
	}
	s.follow(ew, r, sub, false)
}

// writeSubscribeError answers a refused subscription.
func (s *Server) writeSubscribeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, host.ErrHubClosed) {
		err = errShuttingDown
	}
	s.writeError(w, r, err)
}

// slowConsumer is the error event that ends the stream of a listener that fell
// too far behind.
func slowConsumer(message string) []byte {
	data, _ := json.Marshal(errorObject{Code: codeSlowConsumer, Message: message})
	return data
}

// allData is the data of an event in the feed of every thread.
type allData struct {
	ThreadID string          `json:"thread_id"`
	Data     json.RawMessage `json:"data"`
}

// follow streams the subscription's events until the listener leaves, falls
// behind or the hub ends the stream. A listener that fell behind is told so,
// to reconnect with Last-Event-ID (or, following every thread, to read the
// listing again). Following every thread, each event's data names its thread.
func (s *Server) follow(ew *eventWriter, r *http.Request, sub *host.Subscription, all bool) {
	for !ew.broken {
		ctx, cancel := context.WithTimeout(r.Context(), keepAlive)
		for !ew.broken {
			ev, err := sub.Next(ctx)
			if err == nil {
				data := []byte(ev.Data)
				if all {
					if data, err = json.Marshal(allData{ThreadID: ev.ThreadID, Data: ev.Data}); err != nil {
						continue
					}
				}
				ew.sendID(ev.Name, data, ev.ID)
				continue
			}
			cancel()
			switch {
			case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
				ew.comment("keep-alive")
			case errors.Is(err, host.ErrFellBehind):
				ew.send("error", slowConsumer("this listener fell too far behind the thread's events and was disconnected; reconnect with the Last-Event-ID of the last event received to resume"))
				return
			case errors.Is(err, host.ErrStreamEnded), r.Context().Err() != nil:
				return
			default:
				// The stream is open: end it, and let the listener reconnect
				// with the id of the last event it got.
				s.log.Warn("event replay failed", "err", err)
				return
			}
			break
		}
		cancel()
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
	sub, err := s.hub.SubscribeAll(r.Context())
	if err != nil {
		s.writeSubscribeError(w, r, err)
		return
	}
	defer sub.Close()
	ew := s.newEventWriter(w, true)
	ew.comment("subscribed to every thread")
	s.follow(ew, r, sub, true)
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
