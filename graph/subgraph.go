package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/task"
	"github.com/interludehq/interlude/store/storekit"
)

// Subgraphs run inside a task of another graph, in its thread, under a
// namespace; a waiting one keeps its checkpoint in the parent's step (see
// "Why a subgraph keeps its checkpoint in its parent's step" in
// docs/ARCHITECTURE.md).

// progress is a waiting subgraph's checkpoint, as kept in its parent's step.
type progress struct {
	Version    int64       `json:"version"`
	Checkpoint *checkpoint `json:"checkpoint"`
}

// nesting marks a runner that runs a subgraph inside a parent's task: it commits
// to memory only, and its interrupt ids derive from the id base its call sets
// in the runner's step record (ts.Nested), where each step keeps it. Its run
// builds no Result: the runner's ended records that the run reached its end,
// whose outcome the call reads from the subgraph's state.
type nesting struct {
	// breaks are the breakpoints before and after this graph's nodes (and, by
	// path, its subgraphs') named by the graphs it runs inside, relative to
	// it; nil for none, as most runs have
	breaks *[2][]string
}

// before returns the breakpoints before nodes that n inherits.
func (n *nesting) before() []string {
	if n == nil || n.breaks == nil {
		return nil
	}
	return n.breaks[0]
}

// after returns the breakpoints after nodes that n inherits.
func (n *nesting) after() []string {
	if n == nil || n.breaks == nil {
		return nil
	}
	return n.breaks[1]
}

// nestedRun is a subgraph's run inside a parent's task, in one allocation: its
// runner, the runner's handle on the subgraph's state, its nesting and the
// state. A call that starts the subgraph allocates it; one that picks a
// waiting subgraph up takes the run the call that paused kept with the
// parent's step (waitingSubgraphs), and allocates nothing.
type nestedRun[T any] struct {
	r runner[T]
	c cached[T]
	n nesting
	// fresh holds the id of the first question answered since the pause (a
	// subgraph usually waits for one), for r.fresh
	fresh [1]string
	st    state[T]
	// answer holds the state's copy of the first answer brought in from the
	// parent, and path the first question's path as forwarded to the
	// parent, each once: the state, or the parent's, keeps referring to
	// them (answerUsed, pathUsed), so later ones are allocated.
	answer     interlude.Resolution
	path       [4]string
	answerUsed bool
	pathUsed   bool
}

// reset readies a kept run for the call that picks its subgraph up: all but
// its state, and the answer and path it gave out, is as new.
func (rc *nestedRun[T]) reset() {
	rc.r, rc.c, rc.n, rc.fresh = runner[T]{}, cached[T]{st: &rc.st}, nesting{}, [1]string{}
}

// answerCopy returns a copy of res for the state to keep.
func (rc *nestedRun[T]) answerCopy(res *interlude.Resolution) *interlude.Resolution {
	if rc.answerUsed {
		c := *res
		return &c
	}
	rc.answer, rc.answerUsed = *res, true
	return &rc.answer
}

// forwardedPath returns prefix followed by path, for a question forwarded to
// the parent.
func (rc *nestedRun[T]) forwardedPath(prefix, path []string) []string {
	n := len(prefix) + len(path)
	var out []string
	if !rc.pathUsed && n <= len(rc.path) {
		out, rc.pathUsed = rc.path[:0:n], true
	} else {
		out = make([]string, 0, n)
	}
	return append(append(out, prefix...), path...)
}

// moved is the state's moved (see movable).
func (rc *nestedRun[T]) moved(from, to []byte) { rc.st.moved(from, to) }

// SubgraphNode returns a node of a graph over S that runs sub with the input in
// maps from the parent's state, and returns the update out maps from the parent's
// state and the subgraph's final state. The node's name is the subgraph's
// namespace. in and out must not pause.
func SubgraphNode[S, T any](sub *Graph[T], in func(S) T, out func(S, T) S) Node[S] {
	return func(ctx context.Context, s S) (S, error) {
		var zero S
		if sub == nil || in == nil || out == nil {
			return zero, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "SubgraphNode needs a compiled subgraph and both mappings"}
		}
		final, err := runNested(ctx, sub, in(s))
		if err != nil {
			return zero, err
		}
		return out(s, final), nil
	}
}

// Subgraph runs sub from inside the running node or tool, with input as the
// subgraph's first input, and returns the subgraph's final state. key names the
// call within the task (unique in it, like Once's); the subgraph's namespace is the
// task's path and key.
//
// If the subgraph pauses, Subgraph returns the pause (an error matching
// interlude.ErrPaused), which the caller must return. When its interrupts are
// answered, the caller runs again from its top and its Subgraph call picks the
// subgraph up where it stopped. A subgraph that finished is not run again while
// its parent's step lasts: Subgraph returns its recorded final state, as Once
// does.
func Subgraph[T any](ctx context.Context, key string, sub *Graph[T], input T) (T, error) {
	var zero T
	if key == "" || strings.ContainsAny(key, "\x00\x1f") {
		return zero, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("subgraph key %q cannot be used; give each call a non-empty key, unique within the task", key)}
	}
	if sub == nil {
		return zero, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "Subgraph was given no graph"}
	}
	return Once(ctx, key, func(ctx context.Context) (T, error) { return runNested(ctx, sub, input) })
}

// runNested runs sub in the task on ctx, from its kept checkpoint if it has one.
func runNested[T any](ctx context.Context, sub *Graph[T], input T) (T, error) {
	var zero T
	s, env := task.From(ctx), envFrom(ctx)
	if s == nil || env == nil {
		return zero, interlude.ErrNotInRun
	}
	idBase, key, ok := env.waiting.nestedIn(s)
	if !ok {
		idBase, key = s.Nested()
	}
	raw, waiting := s.Recorded(key)
	prefix := s.Path() // a scope's path is never changed
	var rc *nestedRun[T]
	if waiting {
		// The call that paused left its run here: its runner is done with.
		if rc, _ = env.waiting.take(key, raw).(*nestedRun[T]); rc != nil {
			rc.reset()
		} else {
			var p progress
			if err := json.Unmarshal(raw, &p); err != nil || p.Checkpoint == nil || !p.Checkpoint.resolveForwarded(s.Lookup) {
				return zero, &interlude.Error{Code: interlude.CodeUnknownFormat, Message: fmt.Sprintf("the checkpoint of subgraph %s is not readable", strings.Join(prefix, "/"))}
			}
			rc = &nestedRun[T]{}
			rc.c.st = &rc.st
			if err := sub.codec.restore(&rc.st, p.Checkpoint); err != nil {
				return zero, err
			}
			rc.st.version = p.Version
		}
	} else {
		rc = &nestedRun[T]{st: state[T]{status: interlude.ThreadIdle}}
		rc.c.st = &rc.st
	}
	r := &rc.r
	r.ts.Nested = idBase
	r.g, r.ctx, r.threadID, r.nest, r.subgraphs, r.c = sub, ctx, env.thread, &rc.n, env.subgraphs, &rc.c
	if len(env.before) > 0 || len(env.after) > 0 { // most runs set no breakpoints
		if before, after := breaksUnder(env.before, prefix), breaksUnder(env.after, prefix); before != nil || after != nil {
			rc.n.breaks = &[2][]string{before, after}
		}
	}
	if env.live && env.subgraphs {
		r.emit = func(e Event) {
			e.Namespace = append(slices.Clone(prefix), e.Namespace...)
			env.runner.send(e)
		}
	}
	var err error
	if waiting {
		st := &rc.st
		// The parent holds the answers: bring those given since the pause in.
		for i := range st.exchanges {
			x := &st.exchanges[i]
			if x.Resolution != nil {
				continue
			}
			if given := s.Lookup(x.Interrupt.ID); given != nil && given.Resolution != nil {
				x.Resolution = rc.answerCopy(given.Resolution)
				if r.fresh == nil {
					r.fresh = rc.fresh[:0]
				}
				r.fresh = append(r.fresh, x.Interrupt.ID)
			}
		}
		if st.brk != nil {
			// The parent was continued past the subgraph's breakpoint.
			r.passOnce = st.brk.When == "before"
			st.brk = nil
			if st.status == interlude.ThreadInterrupted && st.pendingCount() == 0 {
				st.status = interlude.ThreadRunning
			}
		}
		_, err = r.loop()
	} else {
		_, err = r.begin(input)
	}
	st := r.c.st
	if r.ended && err == nil && st.status.Outcome() == interlude.RunCompleted {
		return st.values, nil
	}
	// Paused, at a breakpoint, or failed: keep the checkpoint for the next attempt.
	// The values are copied into the checkpoint's encoding as they are
	// encoded: their own encoding lies in scratch memory until then.
	if vals, vlease, cerr := sub.codec.encodeValuesLeased(&st.values); cerr == nil {
		cp := checkpointOf(st, vals)
		// The parent holds every question answered (the answers came from
		// it) and every one pending if they are forwarded below: the
		// checkpoint refers to them rather than writing them again.
		cp.forwarded = err == nil && r.ended && st.pendingCount() > 0
		if data, lease, merr := encodeProgress(progress{Version: st.version, Checkpoint: &cp}, &st.waiting); merr == nil {
			st.memo = cp.Memo // its entries now refer to their copies in data (settle)
			s.Record(key, "", data)
			env.waiting.put(key, idBase, data, rc, lease)
		}
		if vlease != nil {
			release(vlease)
		}
	}
	if err != nil {
		return zero, err
	}
	if !r.ended {
		return zero, fmt.Errorf("subgraph %s stopped without a result", strings.Join(prefix, "/"))
	}
	switch {
	case st.pendingCount() > 0:
		// The subgraph's questions are in its state, under its own paths.
		for i := range st.exchanges {
			if st.exchanges[i].Resolution != nil {
				continue
			}
			q := &st.exchanges[i].Interrupt
			s.Forward(q, rc.forwardedPath(prefix, q.Path))
		}
		return zero, interlude.ErrPaused
	case st.brk != nil:
		b := *st.brk
		b.Namespace = strings.Join(append(slices.Clone(prefix), b.namespace()...), "/")
		return zero, &breakInside{b}
	case st.status.Outcome() == interlude.RunFailed:
		return zero, fmt.Errorf("subgraph %s failed: %s", strings.Join(prefix, "/"), st.err)
	}
	return zero, fmt.Errorf("subgraph %s stopped unfinished", strings.Join(prefix, "/"))
}

// breaksUnder returns the breakpoints of names (paths joined with "/") that lie
// under namespace, relative to it.
func breaksUnder(names, namespace []string) []string {
	var out []string
	for _, n := range names {
		rest, ok := n, true
		for _, p := range namespace {
			if rest, ok = strings.CutPrefix(rest, p+"/"); !ok {
				break
			}
		}
		if ok && rest != "" {
			out = append(out, rest)
		}
	}
	return out
}

// begin starts a subgraph's run with its input.
func (r *runner[S]) begin(input S) (*Result[S], error) {
	ws, err := r.g.codec.fs.writesOf(reflect.ValueOf(input), "the subgraph's input")
	if err != nil {
		return nil, err
	}
	if ws, err = r.checkInput(ws); err != nil {
		return nil, err
	}
	st := r.c.st
	r.dirty = true
	if err := r.g.codec.fs.apply(reflect.ValueOf(&st.values).Elem(), ws); err != nil {
		return nil, err
	}
	r.input = ws
	next, err := r.g.successors(r.ctx, []string{Start}, st.values)
	if err != nil {
		return nil, err
	}
	st.next = next
	return r.loop()
}

// commitNested applies d to a subgraph's state in memory: the parent's commit
// stores it.
func (r *runner[S]) commitNested(d *delta) error {
	st := r.c.st
	d.Input = nil
	writes := d.Writes
	d.Writes = nil
	err := r.g.codec.applyDelta(st, d, true)
	d.Writes = writes
	if err != nil {
		return err
	}
	st.version++
	r.dirty, r.input = false, nil
	return nil
}

// SubgraphState is the state of a subgraph that waits inside a thread's step (it
// paused, sits at a breakpoint or failed), as Snapshot.Subgraphs lists it.
type SubgraphState struct {
	// Namespace is the subgraph's place in the thread: the task path that leads to
	// it, outermost first.
	Namespace []string `json:"namespace"`
	// Values is the subgraph's state, as JSON.
	Values json.RawMessage `json:"values"`
	// Next lists the subgraph's nodes that run next.
	Next []string `json:"next,omitempty"`
	// Step counts the subgraph's completed steps.
	Step int `json:"step"`
	// Interrupts are its pending questions, their paths relative to the
	// subgraph.
	Interrupts []interlude.Interruption `json:"interrupts,omitempty"`
	// Breakpoint is set while the subgraph sits at one of its breakpoints.
	Breakpoint *Breakpoint `json:"breakpoint,omitempty"`
	// Error describes its failure, if it failed.
	Error string `json:"error,omitempty"`
}

// subgraphsOf lists the subgraphs kept in a step's ledger, and those nested in
// them, in namespace order; exchanges are the step's, which hold the questions
// the subgraphs forwarded.
func subgraphsOf(memo *task.Memo, exchanges []interlude.Exchange) []SubgraphState {
	var out []SubgraphState
	for k, raw := range memo.Sorted() {
		if !task.IsProgressKey(k) {
			continue
		}
		var p progress
		if json.Unmarshal(raw, &p) != nil || p.Checkpoint == nil || !p.Checkpoint.resolveForwarded(exchangesLookup(exchanges)) {
			continue
		}
		cp := p.Checkpoint
		ns := task.PathOf(k)
		ns = ns[:len(ns)-1]
		s := SubgraphState{Namespace: ns, Values: cp.Values, Next: cp.Next, Step: cp.Step, Breakpoint: cp.Break, Error: cp.Error}
		for _, x := range cp.Exchanges {
			if x.Resolution == nil {
				s.Interrupts = append(s.Interrupts, x.Interrupt)
			}
		}
		out = append(out, s)
		for _, inner := range subgraphsOf(&cp.Memo, cp.Exchanges) {
			inner.Namespace = append(slices.Clone(ns), inner.Namespace...)
			out = append(out, inner)
		}
	}
	return out
}

// SubgraphAt returns the state of the subgraph waiting at namespace in snap, if
// one does.
func SubgraphAt[S any](snap *Snapshot[S], namespace ...string) (SubgraphState, bool) {
	for _, s := range snap.Subgraphs {
		if slices.Equal(s.Namespace, namespace) {
			return s, true
		}
	}
	return SubgraphState{}, false
}

// breakInside is the error of a task whose subgraph paused at a breakpoint: the
// parent's step pauses there too, and a Continue of the parent passes it.
type breakInside struct{ b Breakpoint }

func (e *breakInside) Error() string {
	return fmt.Sprintf("subgraph %s paused at a breakpoint %s node %q", e.b.Namespace, e.b.When, e.b.Node)
}

// Is makes the breakpoint travel like a pause through code that passes pauses
// up (tools, Once): it matches interlude.ErrPaused.
func (e *breakInside) Is(target error) bool { return target == interlude.ErrPaused }

// namespace is the breakpoint's namespace as a path.
func (b Breakpoint) namespace() []string {
	if b.Namespace == "" {
		return nil
	}
	return strings.Split(b.Namespace, "/")
}

// UpdateSubgraphState applies update (through sub's reducers) to the state of the
// subgraph sub waiting at namespace in the thread, typically at a breakpoint
// inside it; the subgraph goes on from the edited state when the thread is
// continued. namespace is as Snapshot.Subgraphs lists it. A thread waiting for
// answers refuses it with ErrThreadInterrupted, and a namespace where no
// subgraph waits is refused with ErrInvalidRequest; nothing changes then.
func UpdateSubgraphState[S, T any](ctx context.Context, g *Graph[S], threadID string, sub *Graph[T], namespace []string, update T) (*Result[S], error) {
	ws, err := sub.codec.fs.writesOf(reflect.ValueOf(update), "the update")
	if err != nil {
		return nil, err
	}
	return g.locked(ctx, threadID, nil, nil, true, func(r *runner[S]) (*Result[S], error) {
		st := r.c.st
		if st == nil {
			return nil, storekit.NotFound(threadID)
		}
		if ids := st.pendingIDs(); len(ids) > 0 {
			return nil, st.refuseIfWaiting()
		}
		memo, err := editProgress(&st.memo, st.exchanges, namespace, func(p *progress) error {
			inner := &state[T]{}
			if err := sub.codec.restore(inner, p.Checkpoint); err != nil {
				return err
			}
			if err := sub.codec.fs.apply(reflect.ValueOf(&inner.values).Elem(), ws); err != nil {
				return err
			}
			cp, err := sub.codec.capture(inner)
			if err != nil {
				return err
			}
			p.Checkpoint = cp
			return nil
		})
		if err != nil {
			return nil, err
		}
		d := r.control(kindUpdate)
		d.Memo = memo
		if err := r.commit(&d); err != nil {
			return nil, err
		}
		return r.result(), nil
	})
}

// reopenSubgraphs returns memo with the checkpoint of every subgraph kept in it
// (and of those nested in them) made to go on: their questions and breakpoints
// are dropped, so that the subgraphs ask again when their tasks run again.
func reopenSubgraphs(memo *task.Memo) (task.Memo, error) {
	var out task.Memo
	for k, raw := range memo.All() {
		out.Set(k, raw)
		if !task.IsProgressKey(k) {
			continue
		}
		var p progress
		if err := json.Unmarshal(raw, &p); err != nil || p.Checkpoint == nil {
			return task.Memo{}, &interlude.Error{Code: interlude.CodeUnknownFormat, Message: fmt.Sprintf("the checkpoint of subgraph %s is not readable", strings.Join(task.PathOf(k), "/"))}
		}
		cp := p.Checkpoint
		inner, err := reopenSubgraphs(&cp.Memo)
		if err != nil {
			return task.Memo{}, err
		}
		cp.Memo, cp.Exchanges, cp.refs, cp.Break, cp.Error, cp.Status = inner, nil, nil, nil, "", interlude.ThreadRunning
		data, err := json.Marshal(p)
		if err != nil {
			return task.Memo{}, err
		}
		out.Set(k, data)
	}
	return out, nil
}

// editProgress edits the checkpoint of the subgraph waiting at namespace among
// those kept in memo (and those nested in them), and returns the memo entry to
// store again; exchanges are the step's, which hold the questions the
// subgraphs forwarded. The checkpoints it writes again hold their questions
// in full.
func editProgress(memo *task.Memo, exchanges []interlude.Exchange, namespace []string, edit func(*progress) error) (task.Memo, error) {
	for k, raw := range memo.All() {
		if !task.IsProgressKey(k) {
			continue
		}
		ns := task.PathOf(k)
		ns = ns[:len(ns)-1]
		if len(ns) > len(namespace) || !slices.Equal(ns, namespace[:len(ns)]) {
			continue
		}
		var p progress
		if err := json.Unmarshal(raw, &p); err != nil || p.Checkpoint == nil || !p.Checkpoint.resolveForwarded(exchangesLookup(exchanges)) {
			continue
		}
		if len(ns) == len(namespace) {
			if err := edit(&p); err != nil {
				return task.Memo{}, err
			}
		} else {
			inner, err := editProgress(&p.Checkpoint.Memo, p.Checkpoint.Exchanges, namespace[len(ns):], edit)
			if err != nil {
				continue
			}
			for k, v := range inner.All() {
				p.Checkpoint.Memo.Set(k, v)
			}
		}
		data, err := json.Marshal(p)
		if err != nil {
			return task.Memo{}, err
		}
		var edited task.Memo
		edited.Set(k, data)
		return edited, nil
	}
	return task.Memo{}, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("no subgraph waits at %q in this thread; see the snapshot's subgraphs for those that do", strings.Join(namespace, "/"))}
}

// waitingSubgraphs keeps, by ledger key, the in-memory state of each subgraph
// that waits in a step, with the very bytes its checkpoint was stored as in the
// step's ledger. A resume in the same process takes the state from here rather
// than decoding those bytes again (at every level of nesting); it is used only
// while the ledger still holds the same bytes, so an edit, a fork or a load
// from the store falls back to decoding.
//
// The bytes of a subgraph's checkpoint lie in the scratch buffer it was
// encoded in (its lease) until its parent copies them into its own encoding:
// settle then makes the parent's memo, the kept entry and every level below
// refer to the copy, and gives the buffer back. A pause three levels down so
// allocates one encoding, the record at the top, where each level copied the
// levels below it into one of its own.
type waitingSubgraphs struct {
	mu sync.Mutex
	// one holds the first subgraph kept (a step usually runs one), m any
	// others: a map costs more than the state it would keep.
	one waitingSubgraph
	m   map[string]waitingSubgraph
}

type waitingSubgraph struct {
	key string
	// idBase is the id base of the kept run (see waitingSubgraphs.nestedIn)
	idBase string
	raw    json.RawMessage
	st     any
	// lease is the scratch buffer raw lies in, until a parent's encoding
	// copies raw (nil once it has, or if raw is a buffer of its own)
	lease *[]byte
	// at is one more than where the encoding being written copied raw, 0 if
	// it did not
	at int
}

// movable is a kept run or state whose memo and kept subgraphs can be told
// that the bytes they lie in were copied elsewhere.
type movable interface{ moved(from, to []byte) }

// moved makes st's memo entries, and the subgraphs kept with them, that lie in
// from refer to the same bytes in to, a copy of from.
func (st *state[S]) moved(from, to []byte) {
	for k, v := range st.memo.All() {
		if v, ok := movedTo(v, from, to); ok {
			st.memo.Set(k, v)
		}
	}
	st.waiting.moved(from, to)
}

// movedTo returns where v, if it lies in from, lies in to.
func movedTo(v, from, to []byte) (json.RawMessage, bool) {
	if len(v) == 0 || len(from) == 0 {
		return nil, false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.SliceData(v))), uintptr(unsafe.Pointer(unsafe.SliceData(from)))
	if p < lo || p-lo+uintptr(len(v)) > uintptr(len(from)) {
		return nil, false
	}
	off := int(p - lo)
	return to[off : off+len(v) : off+len(v)], true
}

// clear forgets every kept state (the step they waited in is over).
func (w *waitingSubgraphs) clear() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.one = waitingSubgraph{}
	clear(w.m)
}

// put keeps st, a run with id base idBase, as the state stored as raw under
// key; raw lies in lease, if that is not nil.
func (w *waitingSubgraphs) put(key, idBase string, raw json.RawMessage, st any, lease *[]byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := waitingSubgraph{key: key, idBase: idBase, raw: raw, st: st, lease: lease}
	switch {
	case w.one.st == nil || w.one.key == key:
		w.one = e
		delete(w.m, key)
	default:
		if w.m == nil {
			w.m = make(map[string]waitingSubgraph, 1)
		}
		w.m[key] = e
	}
}

// place reports whether raw is the very checkpoint kept under key: bytes that
// encodeProgress wrote. If it is, the encoding being written copies it at at.
func (w *waitingSubgraphs) place(key string, raw json.RawMessage, at int) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.one.st != nil && w.one.key == key {
		if !sameBytes(w.one.raw, raw) {
			return false
		}
		w.one.at = at + 1
		return true
	}
	e, ok := w.m[key]
	if !ok || !sameBytes(e.raw, raw) {
		return false
	}
	e.at = at + 1
	w.m[key] = e
	return true
}

// nestedIn returns the id base and progress key of the run kept for a
// subgraph that the task of scope s calls, if one is kept, so that the call
// that picks it up need not make them again (see task.Scope.Nested).
func (w *waitingSubgraphs) nestedIn(s *task.Scope) (idBase, key string, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.one.st != nil && s.IsNested(w.one.idBase, w.one.key) {
		return w.one.idBase, w.one.key, true
	}
	if len(w.m) == 0 { // most steps keep one subgraph or none
		return "", "", false
	}
	for _, e := range w.m {
		if s.IsNested(e.idBase, e.key) {
			return e.idBase, e.key, true
		}
	}
	return "", "", false
}

// unplace forgets where an encoding that was given up copied kept checkpoints.
func (w *waitingSubgraphs) unplace() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.update(func(e *waitingSubgraph) bool {
		placed := e.at != 0
		e.at = 0
		return placed
	})
}

// settle makes memo and the kept entries refer to the copies of their
// checkpoints that out, the finished encoding, holds where place noted, and
// the subgraphs below them to the copies of theirs; the scratch buffers the
// checkpoints lay in are given back.
func (w *waitingSubgraphs) settle(memo *task.Memo, out []byte) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.update(func(e *waitingSubgraph) bool { return e.settle(memo, out) })
}

// update applies f to every kept entry, and keeps the entries f reports it
// changed. It is called with w.mu held.
func (w *waitingSubgraphs) update(f func(e *waitingSubgraph) bool) {
	f(&w.one)
	if len(w.m) == 0 {
		return
	}
	for k, e := range w.m {
		if f(&e) {
			w.m[k] = e
		}
	}
}

func (e *waitingSubgraph) settle(memo *task.Memo, out []byte) bool {
	if e.at == 0 {
		return false
	}
	at := e.at - 1
	e.at = 0
	to := json.RawMessage(out[at : at+len(e.raw) : at+len(e.raw)])
	if v, _ := memo.Get(e.key); sameBytes(v, e.raw) {
		memo.Set(e.key, to)
	}
	if m, ok := e.st.(movable); ok {
		m.moved(e.raw, to)
	}
	e.raw = to
	if e.lease != nil {
		release(e.lease)
		e.lease = nil
	}
	return true
}

// moved makes the kept entries that lie in from, and the subgraphs below
// them, refer to the same bytes in to, a copy of from.
func (w *waitingSubgraphs) moved(from, to []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.update(func(e *waitingSubgraph) bool { return e.moved(from, to) })
}

func (e *waitingSubgraph) moved(from, to []byte) bool {
	v, ok := movedTo(e.raw, from, to)
	if !ok {
		return false
	}
	if m, ok := e.st.(movable); ok {
		m.moved(from, to)
	}
	e.raw = v
	return true
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b json.RawMessage) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// take removes and returns the state kept under key, if it was stored as
// exactly raw (the same bytes in memory, not merely equal ones).
func (w *waitingSubgraphs) take(key string, raw json.RawMessage) any {
	w.mu.Lock()
	defer w.mu.Unlock()
	var e waitingSubgraph
	if w.one.st != nil && w.one.key == key {
		e, w.one = w.one, waitingSubgraph{}
	} else {
		var ok bool
		if e, ok = w.m[key]; !ok {
			return nil
		}
		delete(w.m, key)
	}
	if !sameBytes(e.raw, raw) {
		return nil
	}
	return e.st
}
