// Package eventstream writes a stream of named events to an HTTP client as
// server-sent events or NDJSON, flushing each and bounding each write by a
// timeout, so that a client that stops reading is cut off.
package eventstream

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Writer writes a stream of events. Its methods are for one goroutine.
type Writer struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	sse     bool
	timeout time.Duration // for each write; 0 for none
	seq     int64
	broken  bool    // a write failed (in asynchronous mode, only the writer's goroutine reads it)
	buf     []byte  // reused by synchronous writes
	out     *outbox // set in asynchronous mode
}

// New answers 200 with the headers of an SSE stream (sse) or an NDJSON one,
// and returns the writer of its events; timeout bounds each write (0: none).
func New(w http.ResponseWriter, sse bool, timeout time.Duration) *Writer {
	h := w.Header()
	if sse {
		h.Set("Content-Type", "text/event-stream")
	} else {
		h.Set("Content-Type", "application/x-ndjson")
	}
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	ew := &Writer{w: w, rc: http.NewResponseController(w), sse: sse, timeout: timeout}
	ew.deadline()
	w.WriteHeader(http.StatusOK)
	ew.flush()
	return ew
}

// Broken reports whether a write failed: the client is gone or too slow.
func (ew *Writer) Broken() bool { return ew.broken }

func (ew *Writer) deadline() {
	if ew.timeout > 0 {
		ew.rc.SetWriteDeadline(time.Now().Add(ew.timeout))
	}
}

func (ew *Writer) flush() {
	if err := ew.rc.Flush(); err != nil {
		ew.broken = true
	}
}

// Send writes an event numbered by the stream's own sequence.
func (ew *Writer) Send(name string, data []byte) {
	ew.seq++
	ew.SendID(name, data, ew.seq)
}

// SendID writes an event with the given id (SSE only shows it).
func (ew *Writer) SendID(name string, data []byte, id int64) {
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
func (ew *Writer) format(b []byte, name string, data []byte, id int64) []byte {
	if !ew.sse {
		b = append(b, `{"event":`...)
		b = strconv.AppendQuote(b, name)
		b = append(append(append(b, `,"data":`...), data...), "}\n"...)
		return b
	}
	if bytes.IndexByte(data, '\n') >= 0 { // SSE data must be one line
		var c bytes.Buffer
		if json.Compact(&c, data) == nil {
			data = c.Bytes()
		}
	}
	b = append(append(append(append(b, "event: "...), name...), "\ndata: "...), data...)
	b = strconv.AppendInt(append(b, "\nid: "...), id, 10)
	return append(b, "\n\n"...)
}

// write writes b and flushes it within the write timeout.
func (ew *Writer) write(b []byte) {
	ew.deadline()
	if _, err := ew.w.Write(b); err != nil {
		ew.broken = true
		return
	}
	ew.flush()
}

// Position tells an SSE listener where its stream starts, as an id with no
// event: one that reconnects with it misses nothing published since.
func (ew *Writer) Position(id int64) { ew.block("id: " + strconv.FormatInt(id, 10)) }

// Comment writes an SSE comment, which keeps the stream alive and says nothing.
func (ew *Writer) Comment(text string) { ew.block(": " + text) }

func (ew *Writer) block(line string) {
	if ew.broken || !ew.sse {
		return
	}
	ew.write([]byte(line + "\n\n"))
}

// Async hands the events to a goroutine that writes them, so that the sender
// never waits for the client. At most limit bytes of events wait: a client
// further behind is cut off, its stream ending with an error event whose data
// is cutoff. Call Finish after the last event.
func (ew *Writer) Async(limit int, cutoff []byte) {
	ew.out = &outbox{ew: ew, limit: limit, cutoff: cutoff, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go ew.out.run()
}

// Finish waits until the events sent are written, or the client is cut off.
func (ew *Writer) Finish() {
	if ew.out == nil {
		return
	}
	ew.out.mu.Lock()
	ew.out.ended = true
	ew.out.mu.Unlock()
	ew.out.signal()
	<-ew.out.done
}

// outbox holds an asynchronous Writer's events until its goroutine writes them.
type outbox struct {
	ew     *Writer
	limit  int
	cutoff []byte
	wake   chan struct{}
	done   chan struct{}

	mu     sync.Mutex
	queue  [][]byte
	size   int
	ended  bool // Finish was called: no more events come
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
		o.queue, o.size = [][]byte{o.ew.format(nil, "error", o.cutoff, id)}, 0
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
			if o.ew.write(b); o.ew.broken {
				o.mu.Lock()
				o.failed, o.queue = true, nil
				o.mu.Unlock()
				return
			}
		}
	}
}
