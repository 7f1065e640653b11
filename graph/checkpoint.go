package graph

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/task"
	"github.com/interludehq/interlude/store"
)

// The persisted format (store.FormatVersion; every older version stays
// readable). Format 2 stores a question with its answer as an
// interlude.Exchange, where format 1 wrote {"q", "r"}. Format 3 lets a waiting
// subgraph's checkpoint refer to a question it forwarded to its parent, which
// the parent's state holds in full, as {"forwarded": {id, node, path,
// tool_call_id}, "resolution": ...}: the question's own node, path and tool
// call, the rest of it read from the parent's question with the same id.
//
// A thread's log is a sequence of deltas (records); each holds only what its step
// changed. A snapshot holds the whole state as of one version. Both are JSON; a
// snapshot larger than compressAbove bytes is stored deflated, marked by a leading
// 0x01 byte (JSON never starts with it).
//
// Every delta carries the small control state in full (status, next nodes, the
// pending step's base checkpoint, breakpoint, error) and the large parts as
// increments (writes, ledger entries, raised interrupts, resolutions).
//
// The memo holds the results of finished sub-tasks (Once) of the step in
// progress by ledger key; calls names the tool call of those that ran one
// (AsToolCall). Records written before calls existed have none: their finished
// sub-tasks read back without a tool call id.

// Breakpoint is a pause at a node boundary (InterruptBefore or InterruptAfter).
type Breakpoint struct {
	// Node is the node the thread paused before or after.
	Node string `json:"node"`
	// When is "before" or "after".
	When string `json:"when"`
	// Namespace is set for a breakpoint inside a subgraph: the path that leads
	// to the subgraph, its elements joined with "/" ("approval" for node finance
	// of subgraph node approval). Node is then the inner node.
	Namespace string `json:"namespace,omitempty"`
}

// exchangeV1 is how format 1 stored an exchange; later formats store
// interlude.Exchange as it is.
type exchangeV1 struct {
	Q interlude.Interruption `json:"q"`
	R *interlude.Resolution  `json:"r,omitempty"`
}

// storedExchange is an exchange as a checkpoint stores it: in full, or, in a
// subgraph's checkpoint, referring to the question forwarded to its parent.
type storedExchange struct {
	interlude.Exchange
	Forwarded *forwardedQuestion `json:"forwarded,omitempty"`
}

// forwardedQuestion is what a subgraph's question has of its own, where its
// parent holds the forwarded copy: the parent's has its node and path under
// the parent, and may have the parent task's tool call.
type forwardedQuestion struct {
	ID         string   `json:"id"`
	Node       string   `json:"node"`
	Path       []string `json:"path,omitempty"`
	ToolCallID string   `json:"tool_call_id,omitempty"`
}

// UnmarshalJSON reads a checkpoint of any format this build reads: format 1
// kept each exchange as {"q": question, "r": resolution}; from format 3 a
// subgraph's checkpoint may refer to questions forwarded to its parent, which
// resolveForwarded fills in.
func (cp *checkpoint) UnmarshalJSON(data []byte) error {
	type plain checkpoint
	var p struct {
		plain
		Exchanges json.RawMessage `json:"exchanges,omitempty"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*cp = checkpoint(p.plain)
	if len(p.Exchanges) == 0 || string(p.Exchanges) == "null" {
		return nil
	}
	if cp.V >= 2 {
		var xs []storedExchange
		if err := json.Unmarshal(p.Exchanges, &xs); err != nil {
			return err
		}
		cp.Exchanges = make([]interlude.Exchange, len(xs))
		for i := range xs {
			cp.Exchanges[i] = xs[i].Exchange
			if f := xs[i].Forwarded; f != nil {
				cp.Exchanges[i].Interrupt = interlude.Interruption{ID: f.ID, Node: f.Node, Path: f.Path, ToolCallID: f.ToolCallID}
				cp.refs = append(cp.refs, i)
			}
		}
		return nil
	}
	var old []exchangeV1
	if err := json.Unmarshal(p.Exchanges, &old); err != nil {
		return err
	}
	cp.Exchanges = make([]interlude.Exchange, len(old))
	for i, x := range old {
		cp.Exchanges[i] = interlude.Exchange{Interrupt: x.Q, Resolution: x.R}
	}
	return nil
}

// resolved is a resolution with the id of the interrupt it answers: one answer in
// a delta, and, in a checkpoint's recent list, an answer remembered after its step
// completed, so that sending the same answer again is recognised as a replay.
type resolved struct {
	ID string               `json:"id"`
	R  interlude.Resolution `json:"r"`
}

// ledgerEntry is a finished task's writes, kept until its step completes.
type ledgerEntry struct {
	Node   string  `json:"n"`
	Writes []write `json:"w,omitempty"`
}

const recentLimit = 64

// delta is one record of a thread's log.
type delta struct {
	V    int       `json:"v"`
	Kind string    `json:"-"` // kept in store.Record.Kind
	At   time.Time `json:"-"` // kept in store.Record.CreatedAt

	Nonce   string                   `json:"nonce,omitempty"` // set on a thread's first record
	Reset   *checkpoint              `json:"reset,omitempty"`
	Resolve []resolved               `json:"resolve,omitempty"`
	Input   []write                  `json:"in,omitempty"`
	Writes  []write                  `json:"w,omitempty"`
	Ledger  []ledgerEntry            `json:"ledger,omitempty"`
	Memo    task.Memo                `json:"memo,omitzero"`
	Calls   map[string]string        `json:"calls,omitempty"`
	Raised  []interlude.Interruption `json:"raised,omitempty"`
	Esc     []Escalation             `json:"esc,omitempty"`

	Status interlude.ThreadStatus `json:"status,omitempty"` // empty means idle
	Next   []string               `json:"next,omitempty"`
	Mid    bool                   `json:"mid,omitempty"`
	Base   int64                  `json:"base,omitempty"`
	Step   int                    `json:"step"`
	Break  *Breakpoint            `json:"break,omitempty"`
	Error  string                 `json:"error,omitempty"`
}

// Kinds of delta.
const (
	kindInput  = "input"
	kindStep   = "step"
	kindPause  = "pause"
	kindBreak  = "breakpoint"
	kindFail   = "fail"
	kindAnswer = "resolve"
	kindUpdate = "update"
	kindFork   = "fork"
	kindEsc    = "escalate"
)

// checkpoint is the whole state of a thread as of one version, in stored form.
type checkpoint struct {
	V         int                    `json:"v"`
	Nonce     string                 `json:"nonce"`
	CreatedAt time.Time              `json:"created_at"`
	Values    json.RawMessage        `json:"values"`
	Step      int                    `json:"step"`
	Status    interlude.ThreadStatus `json:"status"`
	Next      []string               `json:"next,omitempty"`
	Mid       bool                   `json:"mid,omitempty"`
	Base      int64                  `json:"base,omitempty"`
	Ledger    []ledgerEntry          `json:"ledger,omitempty"`
	Memo      task.Memo              `json:"memo,omitzero"`
	Calls     map[string]string      `json:"calls,omitempty"`
	Exchanges []interlude.Exchange   `json:"exchanges,omitempty"`
	Recent    []resolved             `json:"recent,omitempty"`
	Break     *Breakpoint            `json:"break,omitempty"`
	Error     string                 `json:"error,omitempty"`

	// forwarded has a subgraph's checkpoint written with its questions as
	// references to those its parent holds (appendCheckpoint): set when the
	// parent holds every one of them, those answered and those it is
	// forwarding now.
	forwarded bool
	// refs are the exchanges read as such references, whose questions hold
	// only their id, node, path and tool call until resolveForwarded fills
	// them in.
	refs []int
}

// resolveForwarded fills in the questions of cp that refer to those its
// parent forwarded, from the parent's exchange with the same id (lookup), and
// reports whether the parent held each of them.
func (cp *checkpoint) resolveForwarded(lookup func(id string) *interlude.Exchange) bool {
	for _, i := range cp.refs {
		own := &cp.Exchanges[i].Interrupt
		fwd := lookup(own.ID)
		if fwd == nil {
			return false
		}
		q := fwd.Interrupt
		q.Node, q.Path, q.ToolCallID, q.Assignees = own.Node, own.Path, own.ToolCallID, slices.Clone(q.Assignees)
		*own = q
	}
	cp.refs = nil
	return true
}

// exchangesLookup finds the exchange of id in xs.
func exchangesLookup(xs []interlude.Exchange) func(id string) *interlude.Exchange {
	return func(id string) *interlude.Exchange {
		for i := range xs {
			if xs[i].Interrupt.ID == id {
				return &xs[i]
			}
		}
		return nil
	}
}

// state is a thread's state in memory, for a state type whose fields are fs.
type state[S any] struct {
	version   int64
	nonce     string
	createdAt time.Time
	values    S
	step      int
	status    interlude.ThreadStatus
	next      []string
	mid       bool  // a step is in progress (paused or failed part-way)
	base      int64 // the checkpoint the step in progress started from
	ledger    []ledgerEntry
	memo      task.Memo         // finished sub-tasks of the step in progress
	calls     map[string]string // their tool call ids, by memo key
	exchanges []interlude.Exchange
	recent    []resolved
	brk       *Breakpoint
	err       string
	// waiting holds the in-memory states of the subgraphs kept in memo, so
	// that a resume in this process does not decode them again.
	waiting waitingSubgraphs
}

func (st *state[S]) pending() []interlude.Interruption {
	n := st.pendingCount()
	if n == 0 {
		return nil
	}
	out := make([]interlude.Interruption, 0, n)
	for i := range st.exchanges {
		if x := &st.exchanges[i]; x.Resolution == nil {
			out = append(out, x.Interrupt)
		}
	}
	return out
}

// pendingCount is the number of questions waiting for an answer, counted
// without copying them as pending does.
func (st *state[S]) pendingCount() int {
	n := 0
	for i := range st.exchanges {
		if st.exchanges[i].Resolution == nil {
			n++
		}
	}
	return n
}

// firstPending is the id of the first question waiting for an answer, or "".
func (st *state[S]) firstPending() string {
	for i := range st.exchanges {
		if st.exchanges[i].Resolution == nil {
			return st.exchanges[i].Interrupt.ID
		}
	}
	return ""
}

func (st *state[S]) exchange(id string) *interlude.Exchange {
	for i := range st.exchanges {
		if st.exchanges[i].Interrupt.ID == id {
			return &st.exchanges[i]
		}
	}
	return nil
}

func (st *state[S]) ledgerOf(node string) *ledgerEntry {
	for i := range st.ledger {
		if st.ledger[i].Node == node {
			return &st.ledger[i]
		}
	}
	return nil
}

// codec turns states and deltas into bytes and back for one state type.
type codec[S any] struct {
	fs *fields
}

// applyDelta applies d to st. When inputApplied is set, d.Input was already applied
// to the values by the live run that produced d.
func (c codec[S]) applyDelta(st *state[S], d *delta, inputApplied bool) error {
	if d.Reset != nil {
		if err := c.restore(st, d.Reset); err != nil {
			return err
		}
	}
	if d.Nonce != "" {
		st.nonce = d.Nonce
	}
	for _, r := range d.Resolve {
		if x := st.exchange(r.ID); x != nil {
			res := r.R
			x.Resolution = &res
		}
		st.recent = append(st.recent, r)
		if n := len(st.recent) - recentLimit; n > 0 {
			st.recent = slices.Delete(st.recent, 0, n)
		}
	}
	vals := reflect.ValueOf(&st.values).Elem()
	if !inputApplied {
		if err := c.fs.apply(vals, d.Input); err != nil {
			return err
		}
	}
	if err := c.fs.apply(vals, d.Writes); err != nil {
		return err
	}
	if !d.Mid || !st.mid || d.Base != st.base {
		st.ledger, st.memo, st.calls, st.exchanges = nil, task.Memo{}, nil, nil
	}
	st.ledger = append(st.ledger, d.Ledger...)
	if st.memo.Len() == 0 {
		// The state takes the delta's memo over: no delta is changed once
		// made, nor kept once applied.
		st.memo = d.Memo
	} else if d.Memo.Len() > 0 {
		for k, v := range d.Memo.All() {
			st.memo.Set(k, v)
		}
	}
	if len(d.Calls) > 0 {
		if st.calls == nil {
			st.calls = make(map[string]string, len(d.Calls))
		}
		for k, id := range d.Calls {
			st.calls[k] = id
		}
	}
	for i := range d.Raised {
		if q := &d.Raised[i]; st.exchange(q.ID) == nil {
			st.exchanges = append(st.exchanges, interlude.Exchange{Interrupt: *q})
		}
	}
	applyEscalations(st.exchanges, d.Esc)
	st.status, st.next, st.mid, st.base, st.step, st.brk, st.err = d.Status, d.Next, d.Mid, d.Base, d.Step, d.Break, d.Error
	st.createdAt = firstTime(st.createdAt, d.At)
	return nil
}

func firstTime(a, b time.Time) time.Time {
	if a.IsZero() {
		return b
	}
	return a
}

func (c codec[S]) restore(st *state[S], cp *checkpoint) error {
	if cp.V < 1 || cp.V > store.FormatVersion {
		return &interlude.Error{Code: interlude.CodeUnknownFormat, Message: fmt.Sprintf("checkpoint has format %d; this build reads 1 to %d", cp.V, store.FormatVersion)}
	}
	if len(cp.refs) > 0 {
		return &interlude.Error{Code: interlude.CodeUnknownFormat, Message: "checkpoint refers to questions of a parent it is not read with; only a subgraph's checkpoint may"}
	}
	var vals S
	if len(cp.Values) > 0 {
		if err := json.Unmarshal(cp.Values, &vals); err != nil {
			return &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: "stored values do not fit the state type: " + err.Error(), Err: err}
		}
	}
	*st = state[S]{
		version: st.version, nonce: cp.Nonce, createdAt: cp.CreatedAt, values: vals, step: cp.Step,
		status: cp.Status, next: cp.Next, mid: cp.Mid, base: cp.Base, ledger: cp.Ledger, memo: cp.Memo, calls: cp.Calls,
		exchanges: cp.Exchanges, recent: cp.Recent, brk: cp.Break, err: cp.Error,
	}
	return nil
}

func (c codec[S]) capture(st *state[S]) (*checkpoint, error) {
	cp, err := c.captured(st)
	if err != nil {
		return nil, err
	}
	return &cp, nil
}

// captured is capture giving the checkpoint as a value, for a caller that
// encodes it at once.
func (c codec[S]) captured(st *state[S]) (checkpoint, error) {
	vals, err := c.encodeValues(&st.values)
	if err != nil {
		return checkpoint{}, err
	}
	return checkpointOf(st, vals), nil
}

// checkpointOf is st's checkpoint with vals, its values' encoding.
func checkpointOf[S any](st *state[S], vals json.RawMessage) checkpoint {
	return checkpoint{
		V: store.FormatVersion, Nonce: st.nonce, CreatedAt: st.createdAt, Values: vals, Step: st.step,
		Status: st.status, Next: st.next, Mid: st.mid, Base: st.base, Ledger: st.ledger, Memo: st.memo, Calls: st.calls,
		Exchanges: st.exchanges, Recent: st.recent, Break: st.brk, Error: st.err,
	}
}

// encodeValuesLeased is encodeValues for a caller that copies the encoding at
// once: it is returned in a reused scratch buffer, with the buffer as lease,
// which the caller gives back (release) once it has copied it. With no lease
// the encoding is the caller's.
func (c codec[S]) encodeValuesLeased(v *S) (json.RawMessage, *[]byte, error) {
	scratch := encodeScratch.Get().(*[]byte)
	b, ok := c.fs.appendValues((*scratch)[:0], reflect.ValueOf(v).Elem())
	if ok && cap(b) <= maxEncodeScratch {
		*scratch = b
		return b, scratch, nil
	}
	var out []byte
	if ok {
		out = slices.Clone(b)
	}
	giveBack(scratch, b)
	if !ok {
		data, err := json.Marshal(*v)
		return data, nil, err
	}
	return out, nil, nil
}

// encodeValues encodes a state value as json.Marshal does, field by field
// when the state type allows it (see fields.appendValues).
func (c codec[S]) encodeValues(v *S) ([]byte, error) {
	rv := reflect.ValueOf(v).Elem()
	return encodeScratched(0,
		func(b []byte) ([]byte, bool) { return c.fs.appendValues(b, rv) },
		func() ([]byte, error) { return json.Marshal(*v) })
}

const compressAbove = 4096

// encodeSnapshot returns the stored form of cp and the size of its JSON, which
// decides when the next snapshot is due.
func encodeSnapshot(cp *checkpoint) ([]byte, int, error) {
	data, err := encodeCheckpoint(cp)
	if err != nil || len(data) <= compressAbove {
		return data, len(data), err
	}
	var b bytes.Buffer
	b.WriteByte(1)
	w := flaters.Get().(*flate.Writer)
	defer flaters.Put(w)
	w.Reset(&b)
	w.Write(data)
	if err := w.Close(); err != nil {
		return nil, 0, err
	}
	return b.Bytes(), len(data), nil
}

// flaters reuses compressors: setting one up costs more than compressing a
// typical snapshot.
var flaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

func decodeSnapshot(data []byte) (*checkpoint, int, error) {
	if len(data) > 0 && data[0] == 1 {
		raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(data[1:])))
		if err != nil {
			return nil, 0, &interlude.Error{Code: interlude.CodeUnknownFormat, Message: "snapshot is corrupt: " + err.Error(), Err: err}
		}
		data = raw
	}
	var cp checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, 0, &interlude.Error{Code: interlude.CodeUnknownFormat, Message: "snapshot is not readable: " + err.Error(), Err: err}
	}
	return &cp, len(data), nil
}

func decodeDelta(r store.Record) (*delta, error) {
	var d delta
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, &interlude.Error{Code: interlude.CodeUnknownFormat, Message: fmt.Sprintf("record %d is not readable: %v", r.Version, err), Err: err}
	}
	if d.V < 1 || d.V > store.FormatVersion {
		return nil, &interlude.Error{Code: interlude.CodeUnknownFormat, Message: fmt.Sprintf("record %d has format %d; this build reads 1 to %d", r.Version, d.V, store.FormatVersion)}
	}
	d.Kind, d.At = r.Kind, r.CreatedAt
	if d.Status == "" {
		d.Status = interlude.ThreadIdle
	}
	return &d, nil
}

// weight is what decides when a thread's next snapshot is due: the bytes of
// the records after its last snapshot, the snapshot's JSON size, and the bytes
// appended or merged into the state since (see snapshotDue).
type weight struct {
	since    int
	snapSize int
	grown    int
}

// snapshotDue reports whether a commit bringing the weight to w writes a
// snapshot: once replaying the records since the last one would read more than
// twice the state's weight, estimated as the last snapshot plus what appends and
// merges added since, and at least compressAbove bytes. A state that only grows
// (a conversation) is then rebuilt from its records as cheaply as from a
// snapshot of it, and is not snapshotted again and again as it grows; a state
// whose fields are replaced gets one every two states' weight of records.
func snapshotDue(w weight) bool {
	return w.since > compressAbove && w.since >= 2*(w.snapSize+w.grown)
}

// load rebuilds a thread's state from its snapshot and later records. It also
// returns its weight.
func (c codec[S]) load(l *store.Loaded) (*state[S], weight, error) {
	st := &state[S]{}
	var w weight
	if l.Snapshot != nil {
		cp, size, err := decodeSnapshot(l.Snapshot.Data)
		if err != nil {
			return nil, weight{}, err
		}
		w.snapSize = size
		if err := c.restore(st, cp); err != nil {
			return nil, weight{}, err
		}
		st.version = l.Snapshot.Version
	}
	for _, r := range l.Records {
		d, err := decodeDelta(r)
		if err != nil {
			return nil, weight{}, err
		}
		if err := c.applyDelta(st, d, false); err != nil {
			return nil, weight{}, err
		}
		st.version = r.Version
		w.since += len(r.Data)
		w.grown += c.fs.grows(d.Input) + c.fs.grows(d.Writes)
	}
	return st, w, nil
}
