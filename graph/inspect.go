package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/keylock"
	"github.com/interludehq/interlude/internal/task"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

// Snapshot is a thread's current state.
type Snapshot[S any] struct {
	// ThreadID is the thread.
	ThreadID string
	// Graph is the graph's name as stored with the thread.
	Graph string
	// Status is the thread's status.
	Status interlude.ThreadStatus
	// Values is the state. Treat it as read-only.
	Values S
	// Next lists the nodes that run next.
	Next []string
	// Interrupts are the pending questions.
	Interrupts []interlude.Interruption
	// Exchanges are the questions of the current step and their answers so far.
	Exchanges []interlude.Exchange
	// Finished are the sub-tasks (Once) of the current step that finished while
	// the step waits for answers or after it failed, in path order. Their results
	// are kept in the step's ledger and reach Values only when the whole step
	// completes, so this is where to see them meanwhile (an agent's finished tool
	// calls: agent.FinishedToolResults). Empty between steps.
	Finished []SubTaskResult
	// Subgraphs are the subgraphs of the current step that wait (paused, at a
	// breakpoint, or failed), each with its own state, by namespace, nested ones
	// included (SubgraphAt finds one). Empty between steps.
	Subgraphs []SubgraphState
	// Breakpoint is set while the thread sits at a breakpoint.
	Breakpoint *Breakpoint
	// Checkpoint is the thread's version.
	Checkpoint int64
	// Step counts the thread's completed steps.
	Step int
	// Error describes the last failure while Status is failed.
	Error string
	// CreatedAt is when the thread started.
	CreatedAt time.Time
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time
}

// State returns the thread's current state, read from the store. An unknown thread
// is an error matching interlude.ErrNotFound.
func (g *Graph[S]) State(ctx context.Context, threadID string) (*Snapshot[S], error) {
	l, err := g.cfg.store.Load(ctx, threadID)
	if err != nil {
		return nil, err
	}
	if err := g.owns(threadID, l.Meta.Graph); err != nil {
		return nil, err
	}
	st, _, err := g.codec.load(l)
	if err != nil {
		return nil, err
	}
	status, errText := st.status, st.err
	switch {
	case l.Meta.Status == interlude.ThreadRunning:
		status = interlude.ThreadRunning // a shared store knows a run holds the thread
	case l.Meta.Status == interlude.ThreadFailed && st.status != interlude.ThreadFailed:
		// A shared store reports a run whose process stopped mid-step.
		status = interlude.ThreadFailed
		errText = "the process running this thread stopped before its run committed anything; send what started the run again"
		if len(st.next) > 0 {
			errText = "the process running this thread stopped before finishing its step; continue the thread (no input) to run the step again from the last checkpoint"
		}
	}
	return &Snapshot[S]{
		ThreadID:   threadID,
		Graph:      l.Meta.Graph,
		Status:     status,
		Values:     st.values,
		Next:       st.next,
		Interrupts: st.pending(),
		Exchanges:  slices.Clone(st.exchanges),
		Finished:   st.finished(),
		Subgraphs:  subgraphsOf(&st.memo, st.exchanges),
		Breakpoint: st.brk,
		Checkpoint: st.version,
		Step:       st.step,
		Error:      errText,
		CreatedAt:  st.createdAt,
		UpdatedAt:  l.Meta.UpdatedAt,
	}, nil
}

// finished lists the step's finished sub-tasks in path order.
func (st *state[S]) finished() []SubTaskResult {
	var out []SubTaskResult
	for k, v := range st.memo.Sorted() {
		if task.IsProgressKey(k) {
			continue
		}
		out = append(out, SubTaskResult{Path: task.PathOf(k), ToolCallID: st.calls[k], Result: v})
	}
	return out
}

// Checkpoint is one entry of a thread's history: what one record did and the state
// after it.
type Checkpoint[S any] struct {
	// ID is the thread version this record created; Fork takes it.
	ID int64
	// Kind says what happened: "input", "step", "pause", "resolve", "breakpoint",
	// "fail", "update", "fork" or "escalate".
	Kind string
	// At is when it was committed.
	At time.Time
	// Status is the thread's status after it.
	Status interlude.ThreadStatus
	// Values is the state after it.
	Values S
	// Next lists the nodes due after it.
	Next []string
	// Step counts the completed steps after it.
	Step int
	// Raised are the questions first raised by this record.
	Raised []interlude.Interruption
	// Resolved are the answers this record committed, each with the question it
	// answers as raised when the thread still knew it (for an answer sent again
	// after its step ended, the question carries only its ID).
	Resolved []interlude.Exchange
	// Interrupts are the questions pending after it.
	Interrupts []interlude.Interruption
	// Escalations are the escalations the record made ("escalate").
	Escalations []Escalation
	// Breakpoint is set when the record paused at a breakpoint.
	Breakpoint *Breakpoint
	// Error is the failure a "fail" record reports.
	Error string
	// Subgraphs are the subgraph checkpoints this record kept (a pause or a
	// failure inside a subgraph), by namespace.
	Subgraphs []SubgraphState
}

// HistoryOptions selects a page of a thread's history.
type HistoryOptions struct {
	// Limit caps the number of checkpoints returned. 0 means all of them, whose
	// cost grows with the thread; a page of Limit costs the same on a thread of
	// any length.
	Limit int
	// Before returns only checkpoints older than this id (0 means from the
	// newest). To page, pass the ID of the oldest checkpoint of the previous
	// page: the pages stay the same while the thread grows.
	Before int64
}

// History returns a page of the thread's checkpoints, newest first, each with
// the values after it. Forked-away branches stay in the history: a fork is a new
// record on top, not a rewrite. A page's cost is that of its checkpoints and of
// rebuilding the state before it from the nearest snapshot (see "Storage and
// history" in the package doc), not of the thread's length.
func (g *Graph[S]) History(ctx context.Context, threadID string, opt HistoryOptions) ([]Checkpoint[S], error) {
	meta, err := g.cfg.store.Meta(ctx, threadID)
	if err != nil {
		return nil, err
	}
	if err := g.owns(threadID, meta.Graph); err != nil {
		return nil, err
	}
	page, err := g.cfg.store.History(ctx, threadID, max(opt.Before, 0), max(opt.Limit, 0))
	if err != nil {
		return nil, err
	}
	st, err := g.stateBefore(page)
	if err != nil {
		return nil, err
	}
	out := make([]Checkpoint[S], len(page.Records))
	for i := len(page.Records) - 1; i >= 0; i-- {
		rec := page.Records[i]
		d, err := decodeDelta(rec)
		if err != nil {
			return nil, err
		}
		cp := Checkpoint[S]{ID: rec.Version, Kind: d.Kind, At: d.At, Escalations: d.Esc}
		for _, q := range d.Raised {
			if st.exchange(q.ID) == nil {
				cp.Raised = append(cp.Raised, q)
			}
		}
		for _, r := range d.Resolve {
			res := r.R.For(r.ID)
			a := interlude.Exchange{Interrupt: interlude.Interruption{ID: r.ID}, Resolution: &res}
			if x := st.exchange(r.ID); x != nil {
				a.Interrupt = x.Interrupt
			}
			cp.Resolved = append(cp.Resolved, a)
		}
		if err := g.codec.applyDelta(st, d, false); err != nil {
			return nil, err
		}
		st.version = rec.Version
		// The subgraphs' forwarded questions are the step's, once the record's are applied.
		cp.Subgraphs = subgraphsOf(&d.Memo, st.exchanges)
		cp.Status, cp.Next, cp.Step, cp.Interrupts, cp.Breakpoint, cp.Error = st.status, st.next, st.step, st.pending(), st.brk, st.err
		// The values are copied: later records change the state in place.
		data, err := json.Marshal(st.values)
		if err == nil {
			err = json.Unmarshal(data, &cp.Values)
		}
		if err != nil {
			return nil, err
		}
		out[i] = cp
	}
	return out, nil
}

// stateBefore rebuilds the state just before a page of history: its base
// snapshot (or nothing) with the records between the two applied.
func (g *Graph[S]) stateBefore(page *store.HistoryPage) (*state[S], error) {
	st := &state[S]{}
	if page.Base != nil {
		cp, _, err := decodeSnapshot(page.Base.Data)
		if err != nil {
			return nil, err
		}
		if err := g.codec.restore(st, cp); err != nil {
			return nil, err
		}
		st.version = page.Base.Version
	}
	for _, rec := range page.Lead {
		d, err := decodeDelta(rec)
		if err != nil {
			return nil, err
		}
		if err := g.codec.applyDelta(st, d, false); err != nil {
			return nil, err
		}
		st.version = rec.Version
	}
	return st, nil
}

// replay rebuilds a thread's state from recs, oldest first, calling visit (if
// set) after each record with the state as of that record; it stops, and
// reports stopped, once visit returns true.
func (g *Graph[S]) replay(recs []store.Record, visit func(st *state[S], d *delta) bool) (st *state[S], stopped bool, err error) {
	st = &state[S]{}
	for _, rec := range recs {
		d, err := decodeDelta(rec)
		if err != nil {
			return nil, false, err
		}
		if err := g.codec.applyDelta(st, d, false); err != nil {
			return nil, false, err
		}
		st.version = rec.Version
		if visit != nil && visit(st, d) {
			return st, true, nil
		}
	}
	return st, false, nil
}

// stateAt rebuilds the thread's state as of version id from the nearest
// snapshot before it.
func (g *Graph[S]) stateAt(ctx context.Context, threadID string, id int64) (*state[S], error) {
	page, err := g.cfg.store.History(ctx, threadID, id+1, 1)
	if err != nil {
		return nil, err
	}
	if id < 1 || len(page.Records) == 0 || page.Records[0].Version != id {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("thread %q has no checkpoint %d; list them with History", threadID, id)}
	}
	st, err := g.stateBefore(page)
	if err != nil {
		return nil, err
	}
	d, err := decodeDelta(page.Records[0])
	if err != nil {
		return nil, err
	}
	if err := g.codec.applyDelta(st, d, false); err != nil {
		return nil, err
	}
	st.version = id
	return st, nil
}

// Fork continues the thread from an older checkpoint: the thread's state becomes
// that checkpoint's (as a new record on top, so the abandoned branch stays in the
// history) and the run goes on from there. A step that was paused at that
// checkpoint runs again from its start, so its interrupts fire again with new ids;
// answers given on the abandoned branch never reach them.
func (g *Graph[S]) Fork(ctx context.Context, threadID string, checkpoint int64) (*Result[S], error) {
	return g.fork(ctx, threadID, nil, checkpoint)
}

// ForkOn is Fork, or with a namespace ForkSubgraph, on a thread the caller
// opened (see InvokeOn), so that a host holding the thread for its runs can
// fork it.
func (g *Graph[S]) ForkOn(ctx context.Context, t *Thread, checkpoint int64, namespace []string) (*Result[S], error) {
	if t == nil {
		return nil, errNoThread
	}
	if len(namespace) == 0 {
		return g.fork(ctx, t.ID, t, checkpoint)
	}
	return g.forkSubgraph(ctx, t.ID, t, checkpoint, namespace)
}

func (g *Graph[S]) fork(ctx context.Context, threadID string, t *Thread, checkpoint int64) (*Result[S], error) {
	return g.locked(ctx, threadID, t, nil, true, func(r *runner[S]) (*Result[S], error) {
		if r.c.st == nil {
			return nil, storekit.NotFound(threadID)
		}
		old, err := g.stateAt(ctx, threadID, checkpoint)
		if err != nil {
			return nil, err
		}
		old.mid, old.base, old.ledger, old.memo, old.calls, old.exchanges, old.brk, old.err = false, 0, nil, task.Memo{}, nil, nil, nil, ""
		old.status, old.recent = interlude.ThreadIdle, r.c.st.recent
		cp, err := g.codec.capture(old)
		if err != nil {
			return nil, err
		}
		d := &delta{Kind: kindFork, Reset: cp, Status: old.status, Next: old.next, Step: old.step}
		if err := r.commit(d); err != nil {
			return nil, err
		}
		r.send(Event{Type: EventMetadata, Checkpoint: r.c.st.version, Step: r.c.st.step})
		return r.loop()
	})
}

// ForkSubgraph continues the thread from the checkpoint of the subgraph waiting
// at namespace, as the thread's checkpoint (an ID of History, whose Subgraphs
// lists the namespaces it keeps) kept it. Unlike Fork, the step that was in
// progress at that checkpoint is kept: its finished tasks and sub-tasks are not
// run again, and the subgraph (and those around it) go on from their kept
// checkpoints, so work the subgraph had finished is not run again either. The
// questions pending at that checkpoint are asked again with new ids; answers
// given on the abandoned branch never reach them. A namespace the checkpoint
// keeps no subgraph at is refused with ErrInvalidRequest, and nothing changes.
func (g *Graph[S]) ForkSubgraph(ctx context.Context, threadID string, checkpoint int64, namespace []string) (*Result[S], error) {
	if len(namespace) == 0 {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "ForkSubgraph needs the namespace of a subgraph; use Fork to fork the thread itself"}
	}
	return g.forkSubgraph(ctx, threadID, nil, checkpoint, namespace)
}

func (g *Graph[S]) forkSubgraph(ctx context.Context, threadID string, t *Thread, checkpoint int64, namespace []string) (*Result[S], error) {
	return g.locked(ctx, threadID, t, nil, true, func(r *runner[S]) (*Result[S], error) {
		if r.c.st == nil {
			return nil, storekit.NotFound(threadID)
		}
		old, err := g.stateAt(ctx, threadID, checkpoint)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(subgraphsOf(&old.memo, old.exchanges), func(s SubgraphState) bool { return slices.Equal(s.Namespace, namespace) }) {
			return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("checkpoint %d of thread %q keeps no subgraph at %q; History lists the subgraphs each checkpoint keeps", checkpoint, threadID, strings.Join(namespace, "/"))}
		}
		memo, err := reopenSubgraphs(&old.memo)
		if err != nil {
			return nil, err
		}
		// The step goes on under a new identity (its base is the fork's
		// record), so that its questions get new ids.
		old.memo, old.base, old.exchanges, old.brk, old.err = memo, r.c.st.version+1, nil, nil, ""
		old.status, old.recent = interlude.ThreadRunning, r.c.st.recent
		cp, err := g.codec.capture(old)
		if err != nil {
			return nil, err
		}
		d := &delta{Kind: kindFork, Reset: cp, Status: old.status, Next: old.next, Mid: old.mid, Base: old.base, Step: old.step}
		if err := r.commit(d); err != nil {
			return nil, err
		}
		r.send(Event{Type: EventMetadata, Checkpoint: r.c.st.version, Step: r.c.st.step})
		return r.loop()
	})
}

// UpdateState applies update to the thread as if node asNode had written it (through
// the reducers) and makes asNode's successors the next nodes; with asNode = Start
// the update acts as input, and with asNode = "" the nodes due stay due. It is how
// a person edits state, typically at a breakpoint. A thread waiting for answers
// refuses it with ErrThreadInterrupted. The next invocation (for example Continue)
// runs from there. A thread paused before a node that is still due after the
// update stays at that breakpoint, so one Continue runs the node; other
// breakpoints of the nodes now due still apply.
func (g *Graph[S]) UpdateState(ctx context.Context, threadID string, update S, asNode string) (*Result[S], error) {
	return g.update(ctx, threadID, nil, StateUpdate{Values: update, AsNode: asNode})
}

// StateUpdate is an edit of a thread's state (UpdateStateOn): fields written
// as if a node had written them, and the nodes that run next.
type StateUpdate struct {
	// Values are the fields written, through the reducers: the state type, a
	// pointer to it, or a JSON object whose keys are state fields, as Input
	// takes them. Nil writes nothing.
	Values any
	// AsNode is the node the update acts as: its successors become the next
	// nodes (Start: the update acts as input). "" keeps the nodes due as they
	// are.
	AsNode string
	// Goto, if set, names the nodes that run next instead, each a node of the
	// graph, or End alone for none.
	Goto []string
}

// UpdateStateOn is UpdateState on a thread the caller opened (see InvokeOn),
// with the next nodes chosen by u.Goto if set. The thread is created if it
// does not exist yet.
func (g *Graph[S]) UpdateStateOn(ctx context.Context, t *Thread, u StateUpdate) (*Result[S], error) {
	if t == nil {
		return nil, errNoThread
	}
	return g.update(ctx, t.ID, t, u)
}

func (g *Graph[S]) update(ctx context.Context, threadID string, t *Thread, u StateUpdate) (*Result[S], error) {
	if u.AsNode != "" && u.AsNode != Start && g.nodes[u.AsNode] == nil {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("UpdateState as unknown node %q; name a node of the graph or Start", u.AsNode)}
	}
	for _, n := range u.Goto {
		if (n != End || len(u.Goto) > 1) && g.nodes[n] == nil {
			return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("cannot go to %q: name nodes of the graph (%s), or End alone", n, strings.Join(g.Nodes(), ", "))}
		}
	}
	return g.locked(ctx, threadID, t, nil, true, func(r *runner[S]) (*Result[S], error) {
		st := r.c.st
		if st != nil {
			if ids := st.pendingIDs(); len(ids) > 0 {
				return nil, st.refuseIfWaiting()
			}
		}
		ws, err := g.inputWrites(u.Values)
		if err != nil {
			return nil, err
		}
		r.dirty = true
		if st == nil {
			st = &state[S]{nonce: newNonce(), createdAt: g.cfg.now(), status: interlude.ThreadIdle}
			r.c.st = st
		}
		if err := g.codec.fs.apply(reflect.ValueOf(&st.values).Elem(), ws); err != nil {
			return nil, err
		}
		var next []string
		switch {
		case len(u.Goto) > 0:
			for _, n := range u.Goto {
				if n != End && !slices.Contains(next, n) {
					next = append(next, n)
				}
			}
			slices.SortFunc(next, func(a, b string) int { return g.order[a] - g.order[b] })
		case u.AsNode == "":
			next = slices.Clone(st.next)
		default:
			if next, err = g.successors(ctx, []string{u.AsNode}, st.values); err != nil {
				return nil, err
			}
		}
		d := &delta{Kind: kindUpdate, Writes: ws, Status: interlude.ThreadIdle, Next: next, Step: st.step}
		if b := st.brk; b != nil && b.When == "before" && slices.Contains(next, b.Node) {
			// The node the thread paused before is still due: the thread stays
			// at the breakpoint, and Continue passes it.
			d.Status, d.Break = interlude.ThreadInterrupted, b
		}
		if err := r.commit(d); err != nil {
			return nil, err
		}
		return r.result(), nil
	})
}

// Delete forgets the thread and its history. In a store shared by several
// processes it fails with an error matching interlude.ErrThreadBusy while a run
// in another process holds the thread.
func (g *Graph[S]) Delete(ctx context.Context, threadID string) error {
	held, err := g.locks.Hold(ctx, threadID)
	if err != nil {
		return err
	}
	defer held.Unlock()
	g.cache.drop(threadID)
	// In a store shared by several processes the thread is claimed as for a
	// run, so a run elsewhere makes the delete thread_busy rather than lose its
	// thread. The delete removes the lease with the thread; giving it up
	// afterwards finds it gone, which is not an error.
	ctx, release, err := g.lease(ctx, threadID)
	if err != nil {
		return err
	}
	defer release()
	return g.cfg.store.Delete(ctx, threadID)
}

// locked runs fn with the thread locked and its state acquired, and keeps the state
// cached afterwards unless fn left it inconsistent. A thread the caller opened
// (t) is serialised by the caller: the graph takes no lock of its own and runs
// under the opening's lease, if any.
func (g *Graph[S]) locked(ctx context.Context, threadID string, t *Thread, emit func(Event), wait bool, fn func(r *runner[S]) (*Result[S], error)) (*Result[S], error) {
	if threadID == "" {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "a thread id is required"}
	}
	if t == nil {
		var held keylock.Held
		if wait {
			var err error
			if held, err = g.locks.Hold(ctx, threadID); err != nil {
				return nil, err
			}
		} else {
			var ok bool
			if held, ok = g.locks.TryHold(threadID); !ok {
				return nil, &interlude.Error{Code: interlude.CodeThreadBusy,
					Message: fmt.Sprintf("thread %q is being run by this process; try again when that run ends", threadID)}
			}
		}
		defer held.Unlock()
		var err error
		if t, err = g.Open(ctx, threadID); err != nil {
			return nil, err
		}
		defer t.Release(ctx)
	}
	if t.Graph != "" {
		if err := g.owns(threadID, t.Graph); err != nil {
			return nil, err
		}
	}
	ctx, release := t.bind(ctx)
	defer release()
	c, err := g.acquire(ctx, threadID, t)
	if err != nil {
		return nil, err
	}
	r := &runner[S]{g: g, ctx: ctx, threadID: threadID, emit: emit, c: c, subgraphs: ctx.Value(subgraphsKey{}) != nil,
		values: ctx.Value(valuesKey{}) != nil}
	defer func() {
		if r.dirty || r.c.st == nil {
			g.cache.drop(threadID)
		} else {
			g.cache.put(r.c)
		}
	}()
	res, err := fn(r)
	// A call cut short by the loss of the lease (a store's, say) reports a plain
	// cancellation; the context's cause says the lease was lost.
	if errors.Is(err, context.Canceled) {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = cause
		}
	}
	return res, err
}
