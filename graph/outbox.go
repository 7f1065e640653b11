package graph

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/internal/vocab"
	"github.com/interludehq/interlude/store"
)

// WithOutbox makes the graph write a notice (store.Notice) into the store's
// outbox with every commit that raises a question, closes one (answered,
// rejected, cancelled, expired) or fails the thread: in the same append as the
// change, so that a committed change is never left untold. A dispatcher (see
// package host's WithNotifier) delivers them. The store must keep an outbox
// (store.Outbox, as the stores of this module do).
func WithOutbox() Option { return func(c *config) { c.outbox = true } }

// NoticeData is the payload of a notice as the runtime writes it
// (store.Notice.Data): the thread, the question and, for a closed one, its
// resolution with who gave it.
type NoticeData struct {
	// ThreadID names the thread.
	ThreadID string `json:"thread_id"`
	// Graph names the thread's graph.
	Graph string `json:"graph"`
	// Checkpoint is the thread's version after the change.
	Checkpoint int64 `json:"checkpoint"`
	// Interrupt is the question raised or closed, without its private state.
	Interrupt *interlude.Interruption `json:"interrupt,omitempty"`
	// Resolution is how a closed question was resolved, by whom and when.
	Resolution *interlude.Resolution `json:"resolution,omitempty"`
	// Error is why the thread failed.
	Error string `json:"error,omitempty"`
	// Escalation is the escalation an interrupt.escalated notice reports;
	// Interrupt is then the question as it stands after it.
	Escalation *Escalation `json:"escalation,omitempty"`
}

// noticeTypes maps a resolution's kind to the notice that reports it.
var noticeTypes = map[interlude.ResolutionStatus]string{
	interlude.Resolved:  store.NoticeAnswered,
	interlude.Rejected:  store.NoticeRejected,
	interlude.Cancelled: store.NoticeCancelled,
	interlude.Expired:   store.NoticeExpired,
}

// notices returns the outbox entries of a commit: pendingBefore are the ids of
// the questions pending before d was applied to st, closed the questions d
// resolves as they were asked.
func (r *runner[S]) notices(st *state[S], d *delta, pendingBefore []string, closed map[string]interlude.Interruption) ([]store.Notice, error) {
	var out []store.Notice
	add := func(typ string, data NoticeData, interruptID string) error {
		data.ThreadID, data.Graph, data.Checkpoint = r.threadID, r.g.name, st.version
		b, err := encodeNoticeData(&data)
		if err != nil {
			return err
		}
		out = append(out, store.Notice{ID: noticeID(d.At, st.nonce, st.version, typ, interruptID), ThreadID: r.threadID, Graph: r.g.name,
			Type: typ, InterruptID: interruptID, Data: b, CreatedAt: d.At})
		return nil
	}
	for _, res := range d.Resolve {
		q, ok := closed[res.ID]
		if !ok {
			continue
		}
		q.State = nil
		rr := res.R
		if err := add(noticeTypes[res.R.Status], NoticeData{Interrupt: &q, Resolution: &rr}, res.ID); err != nil {
			return nil, err
		}
	}
	for _, q := range st.pending() {
		if slices.Contains(pendingBefore, q.ID) {
			continue
		}
		q.State = nil
		if err := add(store.NoticeRaised, NoticeData{Interrupt: &q}, q.ID); err != nil {
			return nil, err
		}
	}
	for _, e := range d.Esc {
		x := st.exchange(e.InterruptID)
		if x == nil {
			continue
		}
		q, esc := x.Interrupt, e
		q.State = nil
		if err := add(store.NoticeEscalated, NoticeData{Interrupt: &q, Escalation: &esc}, e.InterruptID); err != nil {
			return nil, err
		}
	}
	if d.Status == interlude.ThreadFailed {
		if err := add(store.NoticeFailed, NoticeData{Error: d.Error}, ""); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// encodeNoticeData returns d as json.Marshal writes it, written field by
// field: json.Marshal would read the question's own encoding over again to
// compact it. A value the hand encoder does not write as encoding/json would
// (a raw value to compact or escape) sends the whole through json.Marshal.
func encodeNoticeData(d *NoticeData) ([]byte, error) {
	size := 192 + len(d.Error)
	if q := d.Interrupt; q != nil {
		size += 256 + len(q.Message) + len(q.Value) + len(q.Schema)
	}
	if r := d.Resolution; r != nil {
		size += 128 + len(r.Response)
	}
	b := append(make([]byte, 0, size), `{"thread_id":`...)
	b = jsonappend.String(b, d.ThreadID)
	b = append(b, `,"graph":`...)
	b = jsonappend.String(b, d.Graph)
	b = append(b, `,"checkpoint":`...)
	b = strconv.AppendInt(b, d.Checkpoint, 10)
	ok := true
	if d.Interrupt != nil {
		b = append(b, `,"interrupt":`...)
		if b, ok = vocab.AppendInterruption(b, d.Interrupt); !ok {
			return json.Marshal(d)
		}
	}
	if d.Resolution != nil {
		b = append(b, `,"resolution":`...)
		if b, ok = vocab.AppendResolution(b, d.Resolution); !ok {
			return json.Marshal(d)
		}
	}
	if d.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonappend.String(b, d.Error)
	}
	if e := d.Escalation; e != nil {
		b = append(b, `,"escalation":{"interrupt_id":`...)
		b = jsonappend.String(b, e.InterruptID)
		b = append(b, `,"step":`...)
		b = strconv.AppendInt(b, int64(e.Step), 10)
		if len(e.Notify) > 0 {
			b = append(b, `,"notify":`...)
			b = jsonappend.Strings(b, e.Notify)
		}
		if len(e.ReassignTo) > 0 {
			b = append(b, `,"reassign_to":`...)
			b = jsonappend.Strings(b, e.ReassignTo)
		}
		if e.By != "" {
			b = append(b, `,"by":`...)
			b = jsonappend.String(b, e.By)
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// noticeID is a notice's stable id: the same change of the same thread (made
// at the same time, the time its record keeps) always gets the same one, and
// a thread deleted and created again (another nonce) gets others. It is "evt_"
// and 32 hex digits: the change's time in nanoseconds (16 digits), then 16 of
// a hash of the rest, so that ids sort by time and a store's index of them
// grows at its end, as a sequence does, rather than taking every new id at a
// random place (which costs SQLite a page of the index written per notice).
func noticeID(at time.Time, nonce string, version int64, typ, interruptID string) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%s\x00%s", nonce, version, typ, interruptID))
	var b [4 + 32]byte
	copy(b[:], "evt_")
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(at.UnixNano()))
	hex.Encode(b[4:], t[:])
	hex.Encode(b[20:], h[:8])
	return string(b[:])
}
