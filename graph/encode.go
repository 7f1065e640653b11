package graph

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/internal/task"
	"github.com/interludehq/interlude/internal/vocab"
)

// encodeDelta returns d's stored JSON, as encoding/json encodes it. The
// records of steps, pauses and answers are written by hand, the writes' values
// copied as they were encoded when written and the checkpoints of waiting
// subgraphs as they were stored, so that a record costs what the step changed
// and no more; deltas carrying a reset or escalations, or a raw value that
// encoding/json would rewrite, go through encoding/json. The checkpoints of
// subgraphs that kept holds (see waitingSubgraphs.place) are copied unchecked,
// and d.Memo and kept then refer to the copies in the record (settle).
//
// The record is encoded into a reused scratch buffer and copied out at its
// exact length, as encodeProgress does: the store may keep it as it is (see
// store.Append's Handover).
func encodeDelta(d *delta, kept *waitingSubgraphs) ([]byte, error) {
	if d.Reset != nil || len(d.Esc) > 0 {
		return marshalDelta(*d)
	}
	n := 160 + writesSize(d.Input) + writesSize(d.Writes) + 128*len(d.Resolve) + memoSize(&d.Memo)
	for i := range d.Raised {
		n += interruptionSize(&d.Raised[i])
	}
	scratch := encodeScratch.Get().(*[]byte)
	b, ok := appendDelta((*scratch)[:0], n, d, kept)
	var out []byte
	if ok {
		out = slices.Clone(b)
		kept.settle(&d.Memo, out)
	} else {
		kept.unplace()
	}
	giveBack(scratch, b)
	if !ok {
		return marshalDelta(*d)
	}
	return out, nil
}

// appendDelta appends d as encodeDelta writes it to b, grown to hold n bytes
// first, and reports whether it could.
func appendDelta(b []byte, n int, d *delta, kept *waitingSubgraphs) ([]byte, bool) {
	if cap(b) < n {
		b = make([]byte, 0, n)
	}
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(d.V), 10)
	if d.Nonce != "" {
		b = append(b, `,"nonce":`...)
		b = jsonappend.String(b, d.Nonce)
	}
	ok := true
	if len(d.Resolve) > 0 {
		b = append(b, `,"resolve":`...)
		if b, ok = appendResolved(b, d.Resolve); !ok {
			return b, false
		}
	}
	if len(d.Input) > 0 {
		b = append(b, `,"in":`...)
		b = appendWrites(b, d.Input)
	}
	if len(d.Writes) > 0 {
		b = append(b, `,"w":`...)
		b = appendWrites(b, d.Writes)
	}
	if len(d.Ledger) > 0 {
		b = append(b, `,"ledger":`...)
		if b, ok = appendLedger(b, d.Ledger); !ok {
			return b, false
		}
	}
	if d.Memo.Len() > 0 {
		b = append(b, `,"memo":`...)
		if b, ok = appendMemo(b, &d.Memo, kept); !ok {
			return b, false
		}
	}
	if len(d.Calls) > 0 {
		b = append(b, `,"calls":`...)
		b = appendCalls(b, d.Calls)
	}
	if len(d.Raised) > 0 {
		b = append(b, `,"raised":`...)
		if b, ok = vocab.AppendInterruptions(b, d.Raised); !ok {
			return b, false
		}
	}
	if d.Status != "" {
		b = append(b, `,"status":`...)
		b = jsonappend.String(b, string(d.Status))
	}
	if len(d.Next) > 0 {
		b = append(b, `,"next":`...)
		b = jsonappend.Strings(b, d.Next)
	}
	if d.Mid {
		b = append(b, `,"mid":true`...)
	}
	if d.Base != 0 {
		b = append(b, `,"base":`...)
		b = strconv.AppendInt(b, d.Base, 10)
	}
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(d.Step), 10)
	if d.Break != nil {
		b = append(b, `,"break":`...)
		b = appendBreakpoint(b, d.Break)
	}
	if d.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonappend.String(b, d.Error)
	}
	return append(b, '}'), true
}

// marshalDelta is encoding/json's encoding of d, for the deltas encodeDelta
// does not write by hand. It takes a copy, so that the delta being encoded can
// stay in its caller's frame.
func marshalDelta(d delta) ([]byte, error) { return json.Marshal(&d) }

func writesSize(ws []write) int {
	n := 0
	for _, w := range ws {
		n += len(w.Field) + len(w.Value) + 16
	}
	return n
}

// appendWrites appends writes as [{"f":field,"x":value}, ...]. Values are
// compact JSON already: encoded by encoding/json, or compacted when read.
func appendWrites(b []byte, ws []write) []byte {
	b = append(b, '[')
	for i, w := range ws {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"f":`...)
		b = jsonappend.String(b, w.Field)
		b = append(b, `,"x":`...)
		b = append(b, w.Value...)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendRaw appends a raw JSON value as encoding/json writes it, if it is
// written unchanged.
func appendRaw(b []byte, v json.RawMessage) ([]byte, bool) { return jsonappend.Raw(b, v) }

// appendTime appends t as encoding/json writes a time.Time. The zero time, a
// subgraph's creation time (its runs commit no time of their own), is
// written as the constant it always is.
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	if t.IsZero() && t.Location() == time.UTC {
		return append(b, `"0001-01-01T00:00:00Z"`...), true
	}
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		return b, false
	}
	return append(b, '"'), true
}

// appendRawWrites appends writes as [{"f":field,"x":value}, ...], checking each
// value as appendRaw does.
func appendRawWrites(b []byte, ws []write) ([]byte, bool) {
	b = append(b, '[')
	ok := true
	for i, w := range ws {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"f":`...)
		b = jsonappend.String(b, w.Field)
		b = append(b, `,"x":`...)
		if b, ok = appendRaw(b, w.Value); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}

// appendLedger appends a step's ledger of finished tasks.
func appendLedger(b []byte, ledger []ledgerEntry) ([]byte, bool) {
	b = append(b, '[')
	ok := true
	for i, e := range ledger {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"n":`...)
		b = jsonappend.String(b, e.Node)
		if len(e.Writes) > 0 {
			b = append(b, `,"w":`...)
			if b, ok = appendRawWrites(b, e.Writes); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}

// sortedKeys returns m's keys in the order encoding/json writes them.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendMemo appends the results of a step's finished sub-tasks by ledger key.
// A subgraph's checkpoint that kept holds was written by encodeProgress, as
// encoding/json writes it, and is copied without checking it again: each level
// of nesting would otherwise check the levels below it once more. kept notes
// where it was copied, for settle.
func appendMemo(b []byte, memo *task.Memo, kept *waitingSubgraphs) ([]byte, bool) {
	b = append(b, '{')
	ok := true
	first := true
	for k, v := range memo.Sorted() {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = jsonappend.String(b, k)
		b = append(b, ':')
		if kept.place(k, v, len(b)) {
			b = append(b, v...)
		} else if b, ok = appendRaw(b, v); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendCalls appends the tool call ids of a step's sub-tasks by ledger key.
func appendCalls(b []byte, calls map[string]string) []byte {
	b = append(b, '{')
	for i, k := range sortedKeys(calls) {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonappend.String(b, k)
		b = append(b, ':')
		b = jsonappend.String(b, calls[k])
	}
	return append(b, '}')
}

// appendResolved appends answers with the ids they answer.
func appendResolved(b []byte, rs []resolved) ([]byte, bool) {
	b = append(b, '[')
	ok := true
	for i := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = jsonappend.String(b, rs[i].ID)
		b = append(b, `,"r":`...)
		if b, ok = vocab.AppendResolution(b, &rs[i].R); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}

// appendBreakpoint appends a breakpoint.
func appendBreakpoint(b []byte, brk *Breakpoint) []byte {
	b = append(b, `{"node":`...)
	b = jsonappend.String(b, brk.Node)
	b = append(b, `,"when":`...)
	b = jsonappend.String(b, brk.When)
	if brk.Namespace != "" {
		b = append(b, `,"namespace":`...)
		b = jsonappend.String(b, brk.Namespace)
	}
	return append(b, '}')
}

// appendCheckpoint appends cp as encoding/json writes it, and reports whether
// it could (see appendJSON).
func appendCheckpoint(b []byte, cp *checkpoint, kept *waitingSubgraphs) ([]byte, bool) {
	ok := true
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(cp.V), 10)
	b = append(b, `,"nonce":`...)
	b = jsonappend.String(b, cp.Nonce)
	b = append(b, `,"created_at":`...)
	if b, ok = appendTime(b, cp.CreatedAt); !ok {
		return b, false
	}
	b = append(b, `,"values":`...)
	if b, ok = appendRaw(b, cp.Values); !ok {
		return b, false
	}
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(cp.Step), 10)
	b = append(b, `,"status":`...)
	b = jsonappend.String(b, string(cp.Status))
	if len(cp.Next) > 0 {
		b = append(b, `,"next":`...)
		b = jsonappend.Strings(b, cp.Next)
	}
	if cp.Mid {
		b = append(b, `,"mid":true`...)
	}
	if cp.Base != 0 {
		b = append(b, `,"base":`...)
		b = strconv.AppendInt(b, cp.Base, 10)
	}
	if len(cp.Ledger) > 0 {
		b = append(b, `,"ledger":`...)
		if b, ok = appendLedger(b, cp.Ledger); !ok {
			return b, false
		}
	}
	if cp.Memo.Len() > 0 {
		b = append(b, `,"memo":`...)
		if b, ok = appendMemo(b, &cp.Memo, kept); !ok {
			return b, false
		}
	}
	if len(cp.Calls) > 0 {
		b = append(b, `,"calls":`...)
		b = appendCalls(b, cp.Calls)
	}
	if len(cp.Exchanges) > 0 {
		b = append(b, `,"exchanges":`...)
		if cp.forwarded {
			b, ok = appendForwarded(b, cp.Exchanges)
		} else {
			b, ok = vocab.AppendExchanges(b, cp.Exchanges)
		}
		if !ok {
			return b, false
		}
	}
	if len(cp.Recent) > 0 {
		b = append(b, `,"recent":`...)
		if b, ok = appendResolved(b, cp.Recent); !ok {
			return b, false
		}
	}
	if cp.Break != nil {
		b = append(b, `,"break":`...)
		b = appendBreakpoint(b, cp.Break)
	}
	if cp.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonappend.String(b, cp.Error)
	}
	return append(b, '}'), true
}

// appendForwarded appends the exchanges of a subgraph whose parent holds each
// of their questions, each question as a reference to the parent's (see
// forwardedQuestion): a question asked levels down is written in full once, by
// the level that holds it at the top, rather than once more at every level
// below it.
func appendForwarded(b []byte, xs []interlude.Exchange) ([]byte, bool) {
	b = append(b, '[')
	ok := true
	for i := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		q := &xs[i].Interrupt
		b = append(b, `{"forwarded":`...)
		b = vocab.AppendInterruptionAddress(b, q)
		if q.ToolCallID != "" {
			b = append(b, `,"tool_call_id":`...)
			b = jsonappend.String(b, q.ToolCallID)
		}
		b = append(b, '}')
		if xs[i].Resolution != nil {
			b = append(b, `,"resolution":`...)
			if b, ok = vocab.AppendResolution(b, xs[i].Resolution); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}

// encodeProgress returns the stored form of a waiting subgraph's checkpoint, as
// encoding/json encodes p, but for the questions of a checkpoint that refers
// to those its parent holds (appendForwarded). Each level of nesting holds the checkpoints of the
// levels below it; encoding/json would check and compact those again at every
// level, where this copies those that kept holds as they are, and makes
// p.Checkpoint.Memo and kept refer to the copies (settle).
//
// The checkpoint is encoded into a scratch buffer, which it is returned in
// (capped at its length) with the buffer as lease: the parent copies it into its
// own checkpoint or record, and gives the buffer back then (see settle). Each
// level of nesting thus allocates no checkpoint of its own; only the record at
// the top, which the store keeps, is allocated, at its exact length. With no
// lease (a large or unusual checkpoint) the result is the caller's.
func encodeProgress(p progress, kept *waitingSubgraphs) (data []byte, lease *[]byte, err error) {
	scratch := encodeScratch.Get().(*[]byte)
	b := (*scratch)[:0]
	if n := 48 + checkpointSize(p.Checkpoint); cap(b) < n {
		b = make([]byte, 0, n)
	}
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, p.Version, 10)
	b = append(b, `,"checkpoint":`...)
	ok := true
	if p.Checkpoint == nil {
		b = append(b, "null"...)
	} else {
		b, ok = appendCheckpoint(b, p.Checkpoint, kept)
	}
	if !ok {
		kept.unplace()
		giveBack(scratch, b)
		data, err = marshalProgress(p.Version, *p.Checkpoint)
		return data, nil, err
	}
	b = append(b, '}')
	if cap(b) > maxEncodeScratch {
		data = slices.Clone(b)
	} else {
		data, lease = b[:len(b):len(b)], scratch
		*scratch = b
	}
	var memo *task.Memo
	if p.Checkpoint != nil {
		memo = &p.Checkpoint.Memo
	}
	kept.settle(memo, data)
	return data, lease, nil
}

// giveBack returns scratch to the pool holding b, its buffer as it grew,
// unless b grew too large to keep.
func giveBack(scratch *[]byte, b []byte) {
	if cap(b) <= maxEncodeScratch {
		*scratch = b[:0]
		encodeScratch.Put(scratch)
	}
}

// release gives back the scratch buffer of an encodeProgress whose result no
// longer lies in it.
func release(lease *[]byte) {
	*lease = (*lease)[:0]
	encodeScratch.Put(lease)
}

// encodeCheckpoint returns cp as encoding/json encodes it, written by
// appendCheckpoint into a reused scratch buffer and copied out at its exact
// length.
func encodeCheckpoint(cp *checkpoint) ([]byte, error) {
	return encodeScratched(checkpointSize(cp),
		func(b []byte) ([]byte, bool) { return appendCheckpoint(b, cp, nil) },
		func() ([]byte, error) { return json.Marshal(cp) })
}

// encodeScratched runs fill over a reused scratch buffer of at least size
// bytes and returns a copy of what it wrote at its exact length, or fallback's
// encoding when fill reports it cannot write the value.
func encodeScratched(size int, fill func([]byte) ([]byte, bool), fallback func() ([]byte, error)) ([]byte, error) {
	scratch := encodeScratch.Get().(*[]byte)
	b := (*scratch)[:0]
	if cap(b) < size {
		b = make([]byte, 0, size)
	}
	b, ok := fill(b)
	var out []byte
	if ok {
		out = slices.Clone(b)
	}
	giveBack(scratch, b)
	if !ok {
		return fallback()
	}
	return out, nil
}

// marshalProgress is encoding/json's encoding of a waiting subgraph's
// checkpoint, for one encodeProgress does not write by hand. It takes a copy,
// so that the checkpoint being encoded can stay in its caller's frame.
func marshalProgress(version int64, cp checkpoint) ([]byte, error) {
	return json.Marshal(progress{Version: version, Checkpoint: &cp})
}

// maxEncodeScratch bounds the scratch buffers encodeDelta and encodeProgress
// keep, so that one large record or checkpoint does not hold its buffer for
// good.
const maxEncodeScratch = 64 << 10

// encodeScratch holds the scratch buffers of encodeDelta and encodeProgress.
var encodeScratch = sync.Pool{New: func() any { return new([]byte) }}

// checkpointSize estimates the encoded size of cp, so that its buffer is
// allocated once.
func checkpointSize(cp *checkpoint) int {
	if cp == nil {
		return 0
	}
	n := 256 + len(cp.Values) + len(cp.Error) + memoSize(&cp.Memo) + 128*len(cp.Recent)
	for _, s := range cp.Next {
		n += len(s) + 3
	}
	for i := range cp.Exchanges {
		n += interruptionSize(&cp.Exchanges[i].Interrupt) + 128
	}
	for _, e := range cp.Ledger {
		n += len(e.Node) + 16 + writesSize(e.Writes)
	}
	return n
}

// memoSize estimates the encoded size of a memo.
func memoSize(memo *task.Memo) int {
	n := 0
	for k, v := range memo.All() {
		n += len(k) + len(v) + 16
	}
	return n
}

// interruptionSize estimates the encoded size of a question.
func interruptionSize(q *interlude.Interruption) int {
	n := 256 + len(q.ID) + len(q.Name) + len(q.Node) + len(q.ToolCallID) + len(q.Message) + len(q.Reason) +
		len(q.Value) + len(q.Schema) + len(q.State) + len(q.Trace)
	for _, s := range q.Path {
		n += len(s) + 3
	}
	for _, s := range q.Assignees {
		n += len(s) + 3
	}
	return n
}
