package graph

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/crashpoint"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/internal/task"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

// Invoke runs the command on the thread and waits for the run to end: completed,
// interrupted (with every pending question) or failed. A pause is not an error: it
// is committed before Invoke returns, and the result's Status is Interrupted.
// Refused commands (input to an interrupted thread, an unknown interrupt id, an
// answer failing its schema, ...) return an *interlude.Error and change nothing.
func (g *Graph[S]) Invoke(ctx context.Context, threadID string, cmd Command) (*Result[S], error) {
	return g.run(ctx, threadID, nil, cmd, nil)
}

// InvokeOn is Invoke on a thread the caller opened (Open) and serialises the
// runs of: it takes none of the graph's locks and reads nothing the opening
// read.
func (g *Graph[S]) InvokeOn(ctx context.Context, t *Thread, cmd Command) (*Result[S], error) {
	if t == nil {
		return nil, errNoThread
	}
	return g.run(ctx, t.ID, t, cmd, nil)
}

// StreamOn is Stream on a thread the caller opened (see InvokeOn).
func (g *Graph[S]) StreamOn(ctx context.Context, t *Thread, cmd Command, opts ...StreamOption) iter.Seq2[Event, error] {
	if t == nil {
		return func(yield func(Event, error) bool) { yield(Event{}, errNoThread) }
	}
	return g.stream(ctx, t.ID, t, cmd, opts...)
}

var errNoThread = &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "no thread given; open it with Open"}

// Stream runs the command like Invoke and yields events as they happen: metadata
// first, an update per finished node, messages nodes emit, an interrupt event per
// pending question, and end last. A refused command yields its error and no events.
// Stopping the iteration early cancels the run; an unfinished step is not
// committed, and a thread left with more to do reads as running (see Recover).
func (g *Graph[S]) Stream(ctx context.Context, threadID string, cmd Command, opts ...StreamOption) iter.Seq2[Event, error] {
	return g.stream(ctx, threadID, nil, cmd, opts...)
}

func (g *Graph[S]) stream(ctx context.Context, threadID string, t *Thread, cmd Command, opts ...StreamOption) iter.Seq2[Event, error] {
	var sc streamConfig
	for _, o := range opts {
		o(&sc)
	}
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		if sc.subgraphs {
			ctx = context.WithValue(ctx, subgraphsKey{}, true)
		}
		if sc.values {
			ctx = context.WithValue(ctx, valuesKey{}, true)
		}
		defer cancel()
		events := make(chan Event, 64)
		done := make(chan struct{})
		var err error
		go func() {
			defer close(done)
			_, err = g.run(ctx, threadID, t, cmd, func(e Event) {
				select {
				case events <- e:
				case <-ctx.Done():
				}
			})
		}()
		for {
			select {
			case e := <-events:
				if !yield(e, nil) {
					cancel()
					<-done
					return
				}
			case <-done:
				for {
					select {
					case e := <-events:
						if !yield(e, nil) {
							return
						}
					default:
						if err != nil {
							yield(Event{}, err)
						}
						return
					}
				}
			}
		}
	}
}

// StreamOption configures Stream.
type StreamOption func(*streamConfig)

type streamConfig struct{ subgraphs, values bool }

type subgraphsKey struct{}

type valuesKey struct{}

// WithValues makes the stream carry the thread's whole state (EventValues)
// when the run starts, with the input applied, and after each step it
// commits: what a client that shows the state as it grows reads, without
// applying the updates through the state's reducers itself.
func WithValues() StreamOption { return func(c *streamConfig) { c.values = true } }

// WithSubgraphs makes the stream carry the events of subgraphs too (updates,
// messages and custom events of their nodes), each with its Namespace.
func WithSubgraphs() StreamOption { return func(c *streamConfig) { c.subgraphs = true } }

// runner carries one invocation.
type runner[S any] struct {
	g        *Graph[S]
	ctx      context.Context
	threadID string
	emit     func(Event)
	c        *cached[S]
	input    []write   // input applied to the values, not yet committed
	fresh    []string  // interrupts answered by this invocation
	freshOne [1]string // fresh's room for the single answer of a Resume
	applyOne [1]resolved
	// record is the record a commit appends: the store does not keep the
	// slice past Append (store.Append.Records), so each commit reuses it.
	record   [1]store.Record
	combined S // a step's writes combined into the state, before it commits
	// memory is RunMemory's map, made when a task first asks for it: most
	// runs (and most subgraph calls, each a runner) never do.
	memory   atomic.Pointer[sync.Map]
	replayed []interlude.Resolution // answers of this invocation given before
	nest     *nesting               // set when the run is a subgraph's, inside a parent's task
	ts       task.Step              // what the tasks of the running step share
	// endDocs: the documents written with the commit that ends the run (Command.WithEndDocuments)
	endDocs func(end *Result[json.RawMessage]) []store.DocumentWrite

	// The flags sit together, so that a runner (one for each run and each
	// subgraph call) takes one word for them.
	dirty    bool // st was changed in memory by something not yet committed
	passOnce bool // continue past the before-breakpoint of the next step
	replay   bool // every answer of this invocation was given before
	// subgraphs: the stream takes the events of subgraphs too (WithSubgraphs)
	subgraphs bool
	// values: the stream takes the state at the start and after each step (WithValues)
	values bool
	// ended: a subgraph's run reached its end (see nesting)
	ended bool
}

func (g *Graph[S]) run(ctx context.Context, threadID string, t *Thread, cmd Command, emit func(Event)) (*Result[S], error) {
	if cmd.kind == 0 {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "the command is empty; use Input, Resume, Respond, Reject, Cancel or Continue"}
	}
	// A recovery never waits for a run of this process: that run finishes
	// the step itself.
	wait := cmd.kind != cmdRecover
	ctx, span := g.startRun(ctx, threadID, cmd)
	res, err := g.locked(ctx, threadID, t, emit, wait, func(r *runner[S]) (*Result[S], error) {
		r.endDocs = cmd.endDocs
		switch cmd.kind {
		case cmdInput:
			return r.start(cmd.input)
		case cmdAnswer:
			return r.answer(&cmd)
		case cmdRecover:
			return r.recover()
		default:
			return r.resume()
		}
	})
	g.endRun(span, threadID, cmd, res, err)
	return res, err
}

// acquire returns the thread's current state: the cached copy if it is current
// (as the thread's opening, or else the store, says), else a fresh load. A
// thread that does not exist has a nil state.
func (g *Graph[S]) acquire(ctx context.Context, threadID string, t *Thread) (*cached[S], error) {
	v, created, l, ok := t.take()
	if !ok {
		var err error
		if v, err = g.cfg.store.Version(ctx, threadID); err != nil {
			return nil, err
		}
	}
	// A thread read with a different creation time differs from the cached
	// copy, even at the same version: it was deleted and created again.
	if c, ok := g.cache.take(threadID); ok && c.st != nil && c.st.version == v && (created.IsZero() || created.Equal(c.created)) {
		return c, nil
	}
	if v == 0 {
		return &cached[S]{id: threadID}, nil
	}
	if l == nil || l.Meta.Version != v {
		var err error
		if l, err = g.cfg.store.Load(ctx, threadID); err != nil {
			return nil, err
		}
	}
	if err := g.owns(threadID, l.Meta.Graph); err != nil {
		return nil, err
	}
	st, w, err := g.codec.load(l)
	if err != nil {
		return nil, err
	}
	return &cached[S]{id: threadID, st: st, created: l.Meta.CreatedAt, weight: w}, nil
}

// owns refuses a thread that another graph runs.
func (g *Graph[S]) owns(threadID, graph string) error {
	if graph != g.name {
		return &interlude.Error{Code: interlude.CodeInvalidRequest,
			Message: fmt.Sprintf("thread %q belongs to graph %q, not %q; use that graph or another thread id", threadID, graph, g.name)}
	}
	return nil
}

func (r *runner[S]) send(e Event) {
	r.deliver(e, true)
	if e.Type == EventMetadata {
		r.sendValues()
	}
}

// sendValues sends the thread's state to a stream that asked for it
// (WithValues). Only the run's own stream takes it, not live listeners.
func (r *runner[S]) sendValues() {
	if !r.values || r.emit == nil || r.nest != nil || r.c.st == nil {
		return
	}
	vals, err := json.Marshal(r.c.st.values)
	if err != nil {
		return
	}
	r.deliver(Event{Type: EventValues, Values: vals, Step: r.c.st.step, Checkpoint: r.c.st.version}, false)
}

// deliver sends e to the run's stream, and to the graph's live listeners
// (WithEvents) if live.
func (r *runner[S]) deliver(e Event, live bool) {
	if r.nest != nil {
		// A subgraph's events go to its parent's stream only.
		if r.emit != nil {
			e.ThreadID, e.At = r.threadID, r.g.cfg.now()
			r.emit(e)
		}
		return
	}
	live = live && r.g.cfg.events != nil
	if r.emit == nil && !live {
		return
	}
	e.ThreadID = r.threadID
	e.At = r.g.cfg.now()
	if r.emit != nil {
		r.emit(e)
	}
	if live {
		r.g.cfg.events(e)
	}
}

// start handles Input.
func (r *runner[S]) start(input any) (*Result[S], error) {
	st := r.c.st
	if st != nil {
		if err := st.refuseIfWaiting(); err != nil {
			return nil, err
		}
	}
	ws, err := r.g.inputWrites(input)
	if err != nil {
		return nil, err
	}
	if ws, err = r.checkInput(ws); err != nil {
		return nil, err
	}
	r.dirty = true
	if st == nil {
		st = &state[S]{nonce: newNonce(), createdAt: r.g.cfg.now(), status: interlude.ThreadIdle}
		r.c.st = st
	}
	if err := r.g.codec.fs.apply(reflect.ValueOf(&st.values).Elem(), ws); err != nil {
		return nil, err
	}
	r.input = ws
	next, err := r.g.successors(r.ctx, []string{Start}, st.values)
	if err != nil {
		return nil, err
	}
	st.next, st.mid, st.base, st.ledger, st.memo, st.calls, st.exchanges, st.err = next, false, 0, nil, task.Memo{}, nil, nil, ""
	r.send(Event{Type: EventMetadata, Checkpoint: st.version, Step: st.step})
	return r.loop()
}

// checkInput passes the input's writes to the graph's InputFunc, if it has one, and
// returns them with the writes of the update it adds.
func (r *runner[S]) checkInput(ws []write) ([]write, error) {
	g := r.g
	if g.onInput == nil {
		return ws, nil
	}
	var current, in S
	if st := r.c.st; st != nil {
		current = clipped(g.codec.fs, st.values)
	}
	if err := g.codec.fs.apply(reflect.ValueOf(&in).Elem(), ws); err != nil {
		return nil, err
	}
	extra, err := g.onInput(r.ctx, current, &in)
	if err != nil {
		return nil, err
	}
	// The input as the function left it, field by field: applying each write to
	// the zero value gives the value it carries, so encoding that value again
	// keeps the write as it was unless the function edited it.
	edited := make([]write, len(ws))
	v := reflect.ValueOf(in)
	for i, w := range ws {
		f := g.codec.fs.byName[w.Field]
		data, err := encodeField(f, v.Field(f.index))
		if err != nil {
			return nil, unencodable("the graph's input function", f.name, v.Field(f.index), err)
		}
		edited[i] = write{Field: w.Field, Value: data, val: v.Field(f.index)}
	}
	more, err := g.codec.fs.writesOf(reflect.ValueOf(extra), "the graph's input function")
	if err != nil {
		return nil, err
	}
	return append(edited, more...), nil
}

// refuseIfWaiting refuses new input while the thread waits for answers, sits at
// a breakpoint, or has a run left to finish (the step its answers started, or
// the steps due after its last checkpoint).
func (st *state[S]) refuseIfWaiting() error {
	if st.status == interlude.ThreadRunning {
		left := "the steps due after its last checkpoint"
		if st.mid {
			left = "the step its last answers started"
		}
		return &interlude.Error{Code: interlude.CodeThreadBusy,
			Message: "the thread's last run stopped before it ended (its process died, or it was cancelled), leaving " + left + " to run; a server finishes it by itself. Send the input once the thread is no longer running, or continue the thread (no input) to finish the run now"}
	}
	if ids := st.pendingIDs(); len(ids) > 0 {
		return &interlude.Error{Code: interlude.CodeThreadInterrupted, Interrupts: ids,
			Message: "the thread is waiting for answers to " + strings.Join(ids, ", ") + "; resume, reject or cancel them before sending input"}
	}
	if b := st.brk; b != nil {
		return &interlude.Error{Code: interlude.CodeThreadInterrupted,
			Message: fmt.Sprintf("the thread is paused at a breakpoint %s node %q; continue it (no input) before sending new input", b.When, b.Node)}
	}
	return nil
}

func (st *state[S]) pendingIDs() []string {
	var ids []string
	for i := range st.exchanges {
		if st.exchanges[i].Resolution == nil {
			ids = append(ids, st.exchanges[i].Interrupt.ID)
		}
	}
	return ids
}

// inputWrites turns an Input value into writes.
func (g *Graph[S]) inputWrites(input any) ([]write, error) {
	switch v := input.(type) {
	case nil:
		return nil, nil
	case S:
		return g.codec.fs.writesOf(reflect.ValueOf(v), "the input")
	case *S:
		if v == nil {
			return nil, nil
		}
		return g.codec.fs.writesOf(reflect.ValueOf(*v), "the input")
	case json.RawMessage:
		return g.codec.fs.writesOfJSON(v, "the input")
	case []byte:
		return g.codec.fs.writesOfJSON(v, "the input")
	case map[string]any:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "the input cannot be encoded as JSON: " + err.Error()}
		}
		return g.codec.fs.writesOfJSON(data, "the input")
	}
	return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("the input is a %T; give the state type %s, a pointer to it, or a JSON object", input, reflect.TypeFor[S]())}
}

// resume handles Continue.
func (r *runner[S]) resume() (*Result[S], error) {
	st := r.c.st
	if st == nil {
		return nil, storekit.NotFound(r.threadID)
	}
	if ids := st.pendingIDs(); len(ids) > 0 {
		return nil, &interlude.Error{Code: interlude.CodeThreadInterrupted, Interrupts: ids,
			Message: "the thread is waiting for answers to " + strings.Join(ids, ", ") + "; a plain continue only passes breakpoints"}
	}
	if st.brk != nil {
		r.passOnce = st.brk.When == "before"
		r.dirty = true
		st.brk = nil
	}
	r.send(Event{Type: EventMetadata, Checkpoint: st.version, Step: st.step})
	return r.loop()
}

// recover handles Recover.
func (r *runner[S]) recover() (*Result[S], error) {
	st := r.c.st
	if st == nil {
		return nil, storekit.NotFound(r.threadID)
	}
	if st.status != interlude.ThreadRunning {
		return nil, &interlude.Error{Code: interlude.CodeConflict,
			Message: fmt.Sprintf("thread %q has no run left unfinished (it is %s): nothing needs recovering", r.threadID, st.status.Outcome())}
	}
	// The run being finished was started by the answers of its step, if any:
	// link the pauses they answered.
	for _, x := range st.exchanges {
		if x.Resolution != nil {
			linkAnswer(r.ctx, x.Interrupt, *x.Resolution, x.Resolution.At)
		}
	}
	r.send(Event{Type: EventMetadata, Checkpoint: st.version, Step: st.step})
	return r.loop()
}

// answer handles Resume, Respond, Reject and Cancel.
func (r *runner[S]) answer(cmd *Command) (*Result[S], error) {
	st := r.c.st
	if st == nil {
		return nil, storekit.NotFound(r.threadID)
	}
	// The answers by interrupt id, in the order of their ids; Resume's single
	// answer stays in this frame.
	var oneGiven [1]resolved
	var given []resolved
	if cmd.hasOne {
		oneGiven[0] = resolved{ID: cmd.one.InterruptID, R: cmd.one}
		given = oneGiven[:]
	} else {
		given = make([]resolved, 0, len(cmd.resolutions))
		for id, res := range cmd.resolutions {
			given = append(given, resolved{ID: id, R: res})
		}
		slices.SortFunc(given, func(a, b resolved) int { return strings.Compare(a.ID, b.ID) })
	}
	if len(given) == 0 {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "no answers given"}
	}
	pending := st.pendingCount()
	if given[0].ID == "" { // "" sorts first
		if len(given) > 1 {
			return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "an answer without an interrupt id cannot be combined with answers by id"}
		}
		switch pending {
		case 0:
			return nil, r.notInterrupted()
		case 1:
			given[0].ID = st.firstPending()
		default:
			ids := st.pendingIDs()
			return nil, &interlude.Error{Code: interlude.CodeAmbiguousResume, Interrupts: ids,
				Message: fmt.Sprintf("%d interrupts are pending (%s); answer them by id", len(ids), strings.Join(ids, ", "))}
		}
	}
	by, now := interlude.ActorFrom(r.ctx), r.g.cfg.now()
	apply := r.applyOne[:0] // a single answer, the most common, is applied from the runner

	for _, g := range given {
		id, res := g.ID, g.R
		x := st.exchange(id)
		if x != nil && x.Resolution == nil {
			if a, ok := interlude.AnswererFrom(r.ctx); ok && !x.Interrupt.MayAnswer(a) {
				return nil, &interlude.Error{Code: interlude.CodeForbidden, Interrupts: []string{id},
					Message: fmt.Sprintf("interrupt %s may be answered only by %s or an admin, not by %q", id, strings.Join(x.Interrupt.Assignees, ", "), a.Name)}
			}
			if err := checkExpiry(x.Interrupt, res, now); err != nil {
				return nil, err
			}
			if err := x.Interrupt.Check(res); err != nil {
				return nil, err
			}
			res.InterruptID, res.By, res.At = "", by, now // the id is the entry's
			apply = append(apply, resolved{ID: id, R: res})
			linkAnswer(r.ctx, x.Interrupt, res, now)
			continue
		}
		if prev := st.resolution(id); prev != nil {
			// The same answer again is an idempotent replay, except an expiry: it
			// is no person's answer to retry, and refusing it tells each process
			// that closes expired questions whether it was the one that did.
			if prev.Same(res) && res.Status != interlude.Expired {
				r.replayed = append(r.replayed, prev.For(id))
				continue
			}
			who := ""
			if prev.By != "" {
				who = " by " + prev.By
			}
			return nil, &interlude.Error{Code: interlude.CodeUnknownInterrupt, Interrupts: []string{id},
				Message: fmt.Sprintf("interrupt %s was already %s%s at %s; it cannot be answered differently", id, prev.Status, who, prev.At.Format("2006-01-02T15:04:05Z07:00"))}
		}
		if pending == 0 {
			return nil, r.notInterrupted()
		}
		return nil, &interlude.Error{Code: interlude.CodeUnknownInterrupt, Interrupts: []string{id},
			Message: fmt.Sprintf("no pending interrupt has id %s; pending: %s", id, strings.Join(st.pendingIDs(), ", "))}
	}
	if len(apply) == 0 { // every answer was a replay of a recorded one
		r.replay = len(r.replayed) > 0
		r.send(Event{Type: EventMetadata, Checkpoint: st.version, Step: st.step})
		if st.mid && pending == 0 {
			// The run these answers started died before finishing its step (its
			// process stopped): the retried request finishes it.
			return r.loop()
		}
		ids := make([]string, len(given))
		for i, g := range given {
			ids[i] = g.ID
		}
		ended, err := r.replayedRun(ids)
		if err != nil {
			return nil, err
		}
		if ended == st && st.status == interlude.ThreadRunning {
			// The run these answers started stopped after a later step
			// committed, with steps left: the retried request finishes it.
			return r.loop()
		}
		return r.finishAt(ended), nil
	}
	d := r.control(kindAnswer)
	d.Resolve = apply
	if len(apply) == pending {
		// Nothing is left to ask: the thread runs until the step these answers
		// start commits. If this run stops before, the status says so, and a
		// server finishes the step (Recover).
		d.Status = interlude.ThreadRunning
	}
	if err := r.commit(&d); err != nil {
		return nil, err
	}
	if len(apply) <= len(r.freshOne) {
		r.fresh = r.freshOne[:len(apply)]
	} else {
		r.fresh = make([]string, len(apply))
	}
	for i, a := range apply {
		r.fresh[i] = a.ID
	}
	r.send(Event{Type: EventMetadata, Checkpoint: st.version, Step: st.step})
	return r.loop()
}

// checkExpiry refuses an answer to a question whose time has passed (only a
// cancellation still closes it), and an expiry of a question whose time has not.
func checkExpiry(q interlude.Interruption, res interlude.Resolution, now time.Time) error {
	due := q.ExpiresAt != nil && !now.Before(*q.ExpiresAt)
	switch {
	case res.Status == interlude.Expired && q.ExpiresAt == nil:
		return &interlude.Error{Code: interlude.CodeInvalidRequest, Interrupts: []string{q.ID},
			Message: fmt.Sprintf("interrupt %s has no time to live, so it cannot expire; cancel it instead", q.ID)}
	case res.Status == interlude.Expired && !due:
		return &interlude.Error{Code: interlude.CodeInvalidRequest, Interrupts: []string{q.ID},
			Message: fmt.Sprintf("interrupt %s does not expire until %s; cancel it to close it now", q.ID, q.ExpiresAt.Format(time.RFC3339))}
	case due && (res.Status == interlude.Resolved || res.Status == interlude.Rejected):
		return &interlude.Error{Code: interlude.CodeUnknownInterrupt, Interrupts: []string{q.ID},
			Message: fmt.Sprintf("interrupt %s expired at %s and takes no answer now, only a cancellation", q.ID, q.ExpiresAt.Format(time.RFC3339))}
	}
	return nil
}

func (r *runner[S]) notInterrupted() error {
	if b := r.c.st.brk; b != nil {
		return &interlude.Error{Code: interlude.CodeNotInterrupted,
			Message: fmt.Sprintf("the thread is paused at a breakpoint %s node %q, which takes no answer; continue it with no input", b.When, b.Node)}
	}
	return &interlude.Error{Code: interlude.CodeNotInterrupted, Message: "the thread has no pending interrupt to answer"}
}

// resolution returns the recorded resolution of id, from the current step or the
// recent past.
func (st *state[S]) resolution(id string) *interlude.Resolution {
	if x := st.exchange(id); x != nil && x.Resolution != nil {
		return x.Resolution
	}
	for i := len(st.recent) - 1; i >= 0; i-- {
		if st.recent[i].ID == id {
			return &st.recent[i].R
		}
	}
	return nil
}

// control returns a delta carrying the thread's current control state. It is
// a value: no commit keeps its delta, which can stay in the committer's frame.
func (r *runner[S]) control(kind string) delta {
	st := r.c.st
	return delta{Kind: kind, Status: st.status, Next: st.next, Mid: st.mid, Base: st.base, Step: st.step, Break: st.brk, Error: st.err}
}

// commit appends d (with any pending input) to the thread's log and applies it to
// the in-memory state. Values the run already applied (input and writes) are not
// applied again.
func (r *runner[S]) commit(d *delta) error {
	if r.nest != nil {
		return r.commitNested(d)
	}
	st, g := r.c.st, r.g
	d.V, d.At, d.Input = store.FormatVersion, g.cfg.now(), r.input
	status := d.Status
	if status == interlude.ThreadIdle {
		d.Status = "" // stored as absent
	}
	if st.version == 0 {
		d.Nonce = st.nonce
	}
	data, err := encodeDelta(d, &st.waiting)
	d.Status = status
	if err != nil {
		r.dirty = true
		return &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: "the step cannot be stored: " + err.Error(), Err: err}
	}
	r.dirty = true // until the store has it
	var (
		pendingBefore []string
		closed        map[string]interlude.Interruption
	)
	if g.cfg.outbox {
		pendingBefore = st.pendingIDs()
		closed = make(map[string]interlude.Interruption, len(d.Resolve))
		for _, res := range d.Resolve {
			if x := st.exchange(res.ID); x != nil {
				closed[res.ID] = x.Interrupt
			}
		}
	}
	writes := d.Writes
	d.Writes = nil
	err = g.codec.applyDelta(st, d, true)
	d.Writes = writes
	if err != nil {
		return err
	}
	st.version++
	r.record[0] = store.Record{Version: st.version, Format: store.FormatVersion, Kind: d.Kind, Data: data, CreatedAt: d.At}
	app := store.Append{
		ThreadID: r.threadID,
		Expect:   st.version - 1,
		Meta:     store.Meta{Graph: g.name, Status: st.status, Interrupts: public(st.pending()), UpdatedAt: d.At},
		Records:  r.record[:],
	}
	if app.Expect == 0 {
		app.Meta.CreatedAt = st.createdAt // kept by the store, so the cached copy knows it
	}
	if r.endDocs != nil && st.status != interlude.ThreadRunning {
		// A commit after which the run does not go on ends it.
		end, err := eraseResult(r.resultOf(st), nil, true)
		if err != nil {
			return &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: "the state cannot be encoded: " + err.Error(), Err: err}
		}
		app.Documents = r.endDocs(end)
	}
	if g.cfg.outbox {
		if app.Outbox, err = r.notices(st, d, pendingBefore, closed); err != nil {
			return &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: "the step's notices cannot be stored: " + err.Error(), Err: err}
		}
	}
	// A notice tells someone, so what it reports is durable first.
	app.NoSync = !r.durable(d) && len(app.Outbox) == 0
	app.Handover = true // data and the snapshot are encoded for this append alone
	w := weight{since: r.c.since + len(data), snapSize: r.c.snapSize,
		grown: r.c.grown + g.codec.fs.grows(d.Input) + g.codec.fs.grows(writes)}
	// A snapshot only when replaying the records since the last one would read
	// more than twice the state's weight (see snapshotDue and "Storage and
	// history" in the package doc).
	if snapshotDue(w) {
		cp, err := g.codec.capture(st)
		if err == nil {
			snap, size, err2 := encodeSnapshot(cp)
			if err2 == nil {
				app.Snapshot = &store.Snapshot{Version: st.version, Format: store.FormatVersion, Data: snap}
				w = weight{snapSize: size}
			}
		}
	}
	actx, span := r.startAppend()
	err = g.cfg.store.Append(actx, app)
	endAppend(span, &app, d.Kind, len(data), err)
	if err != nil {
		return err
	}
	crashpoint.Committed(d.Kind)
	if app.Expect == 0 {
		r.c.created = st.createdAt
	}
	r.dirty, r.input = false, nil
	r.c.weight = w
	return nil
}

// loop runs steps until the thread completes, pauses or fails.
func (r *runner[S]) loop() (*Result[S], error) {
	st, g := r.c.st, r.g
	for steps := 0; ; steps++ {
		if len(st.next) == 0 {
			if r.dirty {
				d := r.control(kindInput)
				d.Status, d.Break, d.Error = interlude.ThreadIdle, nil, ""
				if err := r.commit(&d); err != nil {
					return nil, err
				}
			}
			return r.finish(), nil
		}
		if !st.mid && !r.passOnce {
			for _, n := range st.next {
				if g.breakpoint(g.cfg.before, n) || slices.Contains(r.nest.before(), n) {
					return r.pauseAt(&Breakpoint{Node: n, When: "before"})
				}
			}
		}
		r.passOnce = false
		if steps >= g.cfg.limit {
			return r.fail(kindFail, &interlude.Error{Code: interlude.CodeRecursionLimit,
				Message: fmt.Sprintf("the run took %d steps without finishing; raise WithRecursionLimit or check for an endless loop, then continue the thread", g.cfg.limit)})
		}
		outer := r.ctx
		var span stepSpan
		r.ctx, span = r.startStep()
		done, res, err := r.step()
		r.ctx = outer
		span.end(err)
		if !done {
			return res, err
		}
	}
}

func (r *runner[S]) pauseAt(b *Breakpoint) (*Result[S], error) {
	d := r.control(kindBreak)
	d.Status, d.Break = interlude.ThreadInterrupted, b
	if err := r.commit(&d); err != nil {
		return nil, err
	}
	r.send(Event{Type: EventBreakpoint, Node: b.Node, Breakpoint: b, Step: r.c.st.step})
	return r.finish(), nil
}

func (r *runner[S]) fail(kind string, cause error) (*Result[S], error) {
	d := r.control(kind)
	d.Status, d.Error = interlude.ThreadFailed, cause.Error()
	if err := r.commit(&d); err != nil {
		return nil, errors.Join(cause, err)
	}
	res := r.finish()
	return res, cause
}

// outcome is what one task attempt produced.
type outcome struct {
	node    string
	writes  []write // all writes of a finished task
	partial []write // writes kept although the task paused
	raised  []interlude.Interruption
	memo    *task.Collector // its recorded sub-task results
	err     error
}

// step runs the due tasks of one step. It reports done=false with the invocation's
// result when the run stops (pause, failure, breakpoint after).
func (r *runner[S]) step() (bool, *Result[S], error) {
	st, g := r.c.st, r.g
	base := st.base
	if !st.mid {
		base = st.version
	}
	// The tasks of one step run at a time, and none outlives its step: the
	// runner's step record serves each step in turn.
	ts := &r.ts
	// A nested run's id base stays in its step record from step to step (see
	// nesting).
	*ts = task.Step{Nonce: st.nonce, Thread: r.threadID, Nested: ts.Nested, Checkpoint: base, Exchanges: st.exchanges, Ledger: &st.memo, Now: g.cfg.now}
	if r.nest != nil {
		ts.Nonce, ts.Thread = "", ""
	}
	if !st.mid {
		st.waiting.clear() // kept for an earlier step
	}
	var runs []string
	waiting := false
	for _, n := range st.next {
		if st.ledgerOf(n) != nil {
			continue
		}
		hasPending, hasFresh := false, false
		for i := range st.exchanges {
			x := &st.exchanges[i]
			if len(x.Interrupt.Path) > 0 && x.Interrupt.Path[0] == n {
				hasPending = hasPending || x.Resolution == nil
				hasFresh = hasFresh || slices.Contains(r.fresh, x.Interrupt.ID)
			}
		}
		if hasPending && !hasFresh {
			waiting = true
			continue
		}
		runs = append(runs, n)
	}
	var one [1]outcome
	var outs []outcome
	switch len(runs) {
	case 0:
	case 1:
		one[0] = r.runTask(ts, runs[0])
		outs = one[:]
	default:
		outs = r.runTasks(ts, runs)
	}
	if r.ctx.Err() != nil {
		// The cause says why: a lost lease rather than a plain cancellation.
		r.dirty = true
		return false, nil, context.Cause(r.ctx)
	}
	var ledgerOne [1]ledgerEntry // a step of one task, the most common, keeps its entry here
	ledger := ledgerOne[:0]
	var raised []interlude.Interruption
	var partial []write
	var failures []error
	var inside *Breakpoint
	for i := range outs {
		o := &outs[i]
		var bi *breakInside
		if len(o.raised) == 0 && o.err != nil {
			bi = breakOf(o.err)
		}
		switch {
		case len(o.raised) > 0:
			if raised == nil {
				raised = o.raised // the task's own (Collector.TakeRaised)
			} else {
				raised = append(raised, o.raised...)
			}
			partial = append(partial, o.partial...)
		case bi != nil:
			partial = append(partial, o.partial...)
			if inside == nil {
				b := bi.b
				inside = &b
			}
		case o.err != nil:
			failures = append(failures, fmt.Errorf("node %q: %w", o.node, o.err))
		default:
			ledger = append(ledger, ledgerEntry{Node: o.node, Writes: o.writes})
		}
	}
	if len(failures) > 0 || len(raised) > 0 || waiting || inside != nil {
		memo, calls, err := memoOf(outs)
		if err != nil {
			failures = append(failures, err)
		}
		if err := r.g.codec.fs.apply(reflect.ValueOf(&st.values).Elem(), partial); err != nil {
			failures = append(failures, err)
		}
		if len(raised) > 0 || waiting || len(failures) > 0 {
			inside = nil // a breakpoint inside waits for the answers, and is met again
		}
		d := delta{Writes: partial, Ledger: cloneLedger(ledger), Memo: memo, Calls: calls, Raised: raised, Base: base, Break: inside}
		return r.hold(&d, errors.Join(failures...))
	}
	// Every task of the step finished: apply all writes in node order.
	var all []write
	var writer map[string]string // which node wrote each replaced field, when nodes could conflict
	if len(st.next) > 1 {
		writer = make(map[string]string)
	}
	for i, n := range st.next {
		var ws []write
		if e := st.ledgerOf(n); e != nil {
			ws = e.Writes
		} else {
			ws = ledger[slices.IndexFunc(ledger, func(e ledgerEntry) bool { return e.Node == n })].Writes
		}
		for _, w := range ws {
			if writer == nil {
				break // a step of one node: no other node's writes to conflict with
			}
			f := g.codec.fs.byName[w.Field]
			if f == nil || f.reducer != ReplaceReducer {
				continue
			}
			if other, ok := writer[w.Field]; ok && other != n {
				_, res, err := r.failStep(&interlude.Error{Code: interlude.CodeInvalidUpdate,
					Message: fmt.Sprintf("nodes %q and %q both wrote state field %q in the same step; give the field a reducer (graph:\"append\", \"add\" or \"merge\") or write it from one node", other, n, w.Field)})
				return false, res, err
			}
			writer[w.Field] = n
		}
		if i == 0 {
			all = ws // no copy for a step of one node
			continue
		}
		if i == 1 {
			all = slices.Clip(all) // a copy once a second node's writes follow
		}
		all = append(all, ws...)
	}
	// The writes are combined into a copy, so that the step can still be given up.
	r.combined = st.values
	if err := g.codec.fs.applyToCopy(reflect.ValueOf(&r.combined).Elem(), all); err != nil {
		return r.failStep(err)
	}
	ran := st.next
	next, err := g.successors(r.ctx, ran, r.combined)
	if err != nil {
		// Every task finished: their writes stay in the step's ledger, so that
		// Continue runs the routes again without running the nodes again.
		memo, calls, merr := memoOf(outs)
		d := delta{Ledger: cloneLedger(ledger), Memo: memo, Calls: calls, Base: base}
		return r.hold(&d, errors.Join(err, merr))
	}
	st.values = r.combined
	r.dirty = true
	d := r.control(kindStep)
	d.Writes, d.Next, d.Mid, d.Base, d.Step, d.Status, d.Break, d.Error = all, next, false, 0, st.step+1, interlude.ThreadIdle, nil, ""
	var brk *Breakpoint
	if len(next) > 0 {
		// Nodes are due: the run goes on, and the thread reads running until
		// a later commit ends the run. If this run stops before (its process
		// dies, its context is cancelled), the status says so, and a server
		// finishes the run from this checkpoint (Recover).
		d.Status = interlude.ThreadRunning
		for _, n := range ran {
			if g.breakpoint(g.cfg.after, n) || slices.Contains(r.nest.after(), n) {
				brk = &Breakpoint{Node: n, When: "after"}
				d.Status, d.Break = interlude.ThreadInterrupted, brk
				break
			}
		}
	}
	if err := r.commit(&d); err != nil {
		return false, nil, err
	}
	r.sendValues()
	if brk != nil {
		r.send(Event{Type: EventBreakpoint, Node: brk.Node, Breakpoint: brk, Step: st.step})
		return false, r.finish(), nil
	}
	return true, nil, nil
}

// cloneLedger returns a copy of a step's ledger for its delta, nil if it is
// empty: the step's own slice may lie in its frame.
func cloneLedger(ledger []ledgerEntry) []ledgerEntry {
	if len(ledger) == 0 {
		return nil
	}
	return append([]ledgerEntry(nil), ledger...)
}

// pathBreaks returns the breakpoints of own and inherited that name nodes of
// subgraphs (by a path with "/"), for the subgraphs a task runs.
func (r *runner[S]) pathBreaks(own, inherited []string) []string {
	if len(own) == 0 && len(inherited) == 0 {
		return nil // most runs set no breakpoints
	}
	var out []string
	for _, set := range [][]string{own, inherited} {
		for _, n := range set {
			if strings.Contains(n, "/") {
				out = append(out, n)
			}
		}
	}
	return out
}

// runTasks runs the tasks of several nodes in parallel.
func (r *runner[S]) runTasks(ts *task.Step, runs []string) []outcome {
	outs := make([]outcome, len(runs))
	var wg sync.WaitGroup
	for i, n := range runs {
		wg.Go(func() { outs[i] = r.runTask(ts, n) })
	}
	wg.Wait()
	return outs
}

// breakOf returns the breakpoint inside a subgraph that err reports, if it
// reports one.
func breakOf(err error) *breakInside {
	var bi *breakInside
	if errors.As(err, &bi) {
		return bi
	}
	return nil
}

// memoOf returns the sub-task results the attempts recorded, as JSON by
// ledger key, and the tool call ids they ran, by the same keys, for a step
// that is held: a step that completes keeps none, so results are encoded here
// rather than when recorded.
func memoOf(outs []outcome) (memo task.Memo, calls map[string]string, err error) {
	for i := range outs {
		o := &outs[i]
		for k, v := range o.memo.Ledger() {
			raw, err := v.JSON()
			if err != nil {
				return task.Memo{}, nil, &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: fmt.Sprintf("result of sub-task %s cannot be recorded as JSON: %v", strings.Join(task.PathOf(k), "/"), err)}
			}
			memo.Set(k, raw)
			if v.ToolCallID != "" {
				if calls == nil {
					calls = make(map[string]string)
				}
				calls[k] = v.ToolCallID
			}
		}
	}
	return memo, calls, nil
}

// hold commits the step in progress without completing it: d carries what the
// step's attempt produced (kept writes, ledger entries, raised interrupts) and
// its base checkpoint. The thread waits for answers, or has failed with cause if
// it is not nil; the step runs again from d when the thread is answered or
// continued. d becomes the delta that commits the pause, and belongs to hold.
func (r *runner[S]) hold(d *delta, cause error) (bool, *Result[S], error) {
	st := r.c.st
	made := *d
	c := d
	*c = r.control(kindPause)
	c.Writes, c.Ledger, c.Memo, c.Raised, c.Mid, c.Base = made.Writes, made.Ledger, made.Memo, made.Raised, true, made.Base
	c.Calls = made.Calls
	c.Status, c.Break, c.Error = interlude.ThreadInterrupted, made.Break, ""
	if cause != nil {
		c.Kind, c.Status, c.Error = kindFail, interlude.ThreadFailed, cause.Error()
	}
	if err := r.commit(c); err != nil {
		return false, nil, errors.Join(cause, err)
	}
	if r.nest == nil {
		for i := range st.exchanges {
			if st.exchanges[i].Resolution == nil {
				q := st.exchanges[i].Interrupt
				r.send(Event{Type: EventInterrupt, Node: q.Node, Interrupt: &q, Step: st.step})
			}
		}
		if c.Break != nil {
			r.send(Event{Type: EventBreakpoint, Node: c.Break.Node, Breakpoint: c.Break, Step: st.step})
		}
	}
	return false, r.finish(), cause
}

// failStep records a failure of the step as a whole.
func (r *runner[S]) failStep(cause error) (bool, *Result[S], error) {
	res, err := r.fail(kindFail, cause)
	return false, res, err
}

// runTask runs one attempt of node's task.
func (r *runner[S]) runTask(ts *task.Step, node string) outcome {
	g, st := r.g, r.c.st
	// The task's scope, and its context carrying the scope and env, in one
	// allocation with the env.
	tc := &struct {
		root task.Root
		ctx  task.Context
		env  taskEnv
	}{}
	sc := tc.root.Init(ts, node)
	env := &tc.env
	*env = taskEnv{runner: r, live: r.emit != nil || (g.cfg.events != nil && r.nest == nil), fs: g.codec.fs, node: node, step: st.step, memory: &r.memory, thread: r.threadID, subgraphs: r.subgraphs, waiting: &st.waiting, before: r.pathBreaks(g.cfg.before, r.nest.before()), after: r.pathBreaks(g.cfg.after, r.nest.after())}
	labels := g.labels[node]
	ctx, span := r.startNode(r.ctx, labels)
	tc.ctx = task.Context{Context: ctx, Scope: sc, Key: envKey{}, Val: env}
	ctx = &tc.ctx
	info := NodeInfo{ThreadID: r.threadID, Node: node, Step: st.step}
	o := outcome{node: node}
	defer endNode(span, &o)
	var upd S
	var err error
	if g.observer != nil && g.observer.BeforeNode != nil {
		err = g.observer.BeforeNode(task.Without(ctx), info, st.values)
	}
	if err == nil {
		upd, err = call(ctx, labels.fn, st.values)
	}
	if g.observer != nil && g.observer.AfterNode != nil {
		g.observer.AfterNode(task.Without(ctx), info, upd, err)
	}
	o.raised = sc.Collector().TakeRaised()
	o.memo = sc.Collector()
	o.partial = env.writes()
	if len(o.raised) > 0 {
		return o
	}
	if err != nil {
		if interlude.IsPaused(err) {
			err = fmt.Errorf("returned a pause error that no Interrupt of this task raised: %w", err)
		}
		o.err = err
		return o
	}
	ws, err := g.codec.fs.writesOf(reflect.ValueOf(upd), labels.who)
	if err != nil {
		o.err = err
		return o
	}
	o.writes = ws
	if len(o.partial) > 0 {
		o.writes = append(o.partial, ws...)
	}
	if r.emit != nil || g.cfg.events != nil {
		r.send(Event{Type: EventUpdate, Node: node, Update: writesObject(o.writes), Step: st.step})
	}
	return o
}

// call runs a node, turning a panic into a *PanicError.
func call[S any](ctx context.Context, fn Node[S], s S) (upd S, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return fn(ctx, s)
}

// PanicError is the error of a node that panicked: the run fails, and Invoke returns
// (and Stream yields) the error, wrapped with the node's name, as
// `node "model": panic: runtime error: index out of range [-1]`.
//
// Its message is one line, the panic value's, because it is stored as the thread's
// error and shown to whoever reads the thread (a server answers it to its clients).
// The stack trace stays with the process that ran the node, in Stack: find it with
// errors.As on the returned error to log it. It is never stored. The error carries no
// interlude.Code, and Unwrap is not provided even when the value is an error, so a
// panic never masquerades as one of Interlude's refusals.
type PanicError struct {
	// Value is what the node passed to panic.
	Value any
	// Stack is the panicking goroutine's stack trace (runtime/debug.Stack).
	Stack []byte
}

// Error returns "panic: " and the panic value, its line breaks turned into spaces.
func (e *PanicError) Error() string {
	lines := strings.FieldsFunc(fmt.Sprint(e.Value), func(r rune) bool { return r == '\n' || r == '\r' })
	return "panic: " + strings.Join(lines, " ")
}

// writesObject renders writes as a JSON object of fields (later writes of a field
// win), for update events.
func writesObject(ws []write) json.RawMessage {
	if data, ok := appendWritesObject(ws); ok {
		return data
	}
	obj := make(map[string]json.RawMessage, len(ws))
	for _, w := range ws {
		obj[w.Field] = w.Value
	}
	data, _ := json.Marshal(obj)
	return data
}

// appendWritesObject writes writesObject's object as json.Marshal writes the
// map[string]json.RawMessage of the writes (keys sorted, each with its last
// value), field by field; it reports false for a value encoding/json would
// rewrite (see jsonappend.Raw), or for more distinct fields than it sorts in
// place.
func appendWritesObject(ws []write) (json.RawMessage, bool) {
	var at [8]int
	order := at[:0] // the index in ws of each field's last write
	size := 2
	for i := range ws {
		j := 0
		for j < len(order) && ws[order[j]].Field != ws[i].Field {
			j++
		}
		switch {
		case j < len(order):
			order[j] = i
		case len(order) == len(at):
			return nil, false
		default:
			order = append(order, i)
		}
		size += len(ws[i].Field) + len(ws[i].Value) + 8
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(ws[a].Field, ws[b].Field) })
	b := make([]byte, 0, size)
	b = append(b, '{')
	for n, i := range order {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(jsonappend.String(b, ws[i].Field), ':')
		var ok bool
		if b, ok = jsonappend.Raw(b, ws[i].Value); !ok {
			return nil, false
		}
	}
	return append(b, '}'), true
}

// finish builds the invocation's result and sends the end event.
func (r *runner[S]) finish() *Result[S] { return r.finishAt(r.c.st) }

// finishAt ends the run with the result of the thread as st has it: the current
// state, or for a replayed answer the state its run ended at. The end of a past
// run goes to the run's stream only: nothing happened to the thread that its
// live listeners should hear.
func (r *runner[S]) finishAt(st *state[S]) *Result[S] {
	res := r.resultOf(st)
	if r.nest == nil && (r.emit != nil || r.g.cfg.events != nil) {
		vals, _ := json.Marshal(res.Values)
		r.deliver(Event{Type: EventEnd, Status: res.Status, Checkpoint: res.Checkpoint, Step: st.step,
			Values: vals, Interrupts: res.Interrupts, Breakpoint: res.Breakpoint, Next: res.Next, Error: res.Error}, st.version == r.c.st.version)
	}
	return res
}

// replayedRun returns the state at which the run started by the answers to ids
// ended, replaying the thread's history: answers sent again get the outcome
// recorded for them (an idempotent replay), even if the thread has moved on since (new input,
// later answers). Replays are rare (a double click, a retried request), so the
// history is read only for them.
func (r *runner[S]) replayedRun(ids []string) (*state[S], error) {
	recs, err := r.g.cfg.store.Records(r.ctx, r.threadID, 0, 0, 0)
	if err != nil {
		return nil, err
	}
	answered := false
	past, ended, err := r.g.replay(recs, func(st *state[S], d *delta) bool {
		for _, x := range d.Resolve {
			answered = answered || slices.Contains(ids, x.ID)
		}
		return answered && runEnded(st)
	})
	switch {
	case err != nil:
		return nil, err
	case !ended: // the answers' run has not ended (it died): the thread as it is
		return r.c.st, nil
	}
	return past, nil
}

// runEnded reports whether a run stops at st: done, failed, or paused for
// answers or at a breakpoint.
func runEnded[S any](st *state[S]) bool {
	switch st.status {
	case interlude.ThreadIdle, interlude.ThreadFailed:
		return true
	case interlude.ThreadInterrupted:
		return st.pendingCount() > 0 || st.brk != nil
	}
	return false
}

func (r *runner[S]) result() *Result[S] { return r.resultOf(r.c.st) }

// resultOf is the result of a run that ended at st: nil for a subgraph's run,
// whose call reads the outcome from st.
func (r *runner[S]) resultOf(st *state[S]) *Result[S] {
	if r.nest != nil {
		// A subgraph's run: runNested reads its values, breakpoint and
		// failure from the state, and forwards its questions from it.
		r.ended = true
		return nil
	}
	return &Result[S]{
		ThreadID:   r.threadID,
		Status:     st.status.Outcome(),
		Values:     clipped(r.g.codec.fs, st.values),
		Interrupts: st.pending(),
		Breakpoint: st.brk,
		Next:       slices.Clone(st.next),
		Checkpoint: st.version,
		Error:      st.err,
		Replayed:   r.replay,
		Replays:    r.replayed,
	}
}

func newNonce() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// public returns the questions without the interrupting code's private state, for
// the store's listing index.
func public(qs []interlude.Interruption) []interlude.Interruption {
	for i := range qs {
		qs[i].State = nil
	}
	return qs
}
