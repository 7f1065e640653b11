// Package task holds the bookkeeping of one running task (a node, or a sub-task of a
// node such as one tool call) that package interlude's Interrupt needs: deterministic
// interrupt ids, the answers recorded for earlier attempts of the same task, the
// interrupts raised by this attempt, and the ledger of finished sub-tasks.
//
// The runtime (package graph) creates a Scope per task and reads back what the task
// raised; package interlude reads and writes the Scope found on the context. Both
// speak of questions and answers in the types of package vocab, which package
// interlude names as its own.
package task

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"iter"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/interludehq/interlude/internal/vocab"
)

// Step is what every task of one step shares: the identity the interrupt ids derive
// from, the exchanges recorded so far in this step, and the ledger of finished
// sub-tasks. It is read-only while tasks run.
type Step struct {
	// Nonce and Thread identify the thread incarnation of a thread's own step;
	// Nested, set instead for a step of a run nested in a task, is the IDBase
	// of that task's scope. Checkpoint is the checkpoint the step started from.
	// Interrupt ids derive from them (IDBase), joined only when an interrupt
	// asks: most steps raise none.
	Nonce, Thread, Nested string
	Checkpoint            int64
	// Exchanges lists the interrupts raised in this step so far, in the order they were
	// raised, with their resolutions where given: the thread's record itself,
	// which tasks only read (Scope.Exchanges hands out copies).
	Exchanges []vocab.Exchange
	// Ledger holds the recorded results of finished sub-tasks by their full
	// key (none if nil): the memo of the thread's record, which tasks only read.
	Ledger *Memo
	// Now is the clock.
	Now func() time.Time
}

// IDBase identifies the thread incarnation, or the scope of a nested run, and
// the checkpoint the step started from.
func (s *Step) IDBase() string { return string(s.appendIDBase(nil)) }

// appendIDBase appends IDBase to b.
func (s *Step) appendIDBase(b []byte) []byte {
	if s.Nested != "" {
		b = append(b, s.Nested...)
	} else {
		b = append(b, s.Nonce...)
		b = append(b, 0)
		b = append(b, s.Thread...)
	}
	b = append(b, 0)
	return strconv.AppendInt(b, s.Checkpoint, 10)
}

// Collector gathers what the attempts of one task produce; sub-task scopes share
// their root task's collector.
type Collector struct {
	mu     sync.Mutex
	raised []vocab.Interruption
	// few are the first sub-task results recorded (most tasks record a few,
	// such as a turn's tool calls), ledger the others: a map costs more than
	// the results it keeps. Three keep a runtime's task, with its scope and
	// this collector, within 640 bytes.
	few    [3]recorded
	nfew   int
	ledger map[string]Result
}

// recorded is one sub-task result with its ledger key.
type recorded struct {
	Key string
	Result
}

// Result is a finished sub-task's recorded result.
type Result struct {
	// Value is what the sub-task returned, as JSON; nil for a result recorded
	// by RecordValue and not encoded yet (see JSON).
	Value json.RawMessage
	// ToolCallID is the tool call the sub-task ran, or "".
	ToolCallID string

	value any // the result as returned, when recorded by RecordValue
}

// JSON returns the result as JSON, encoding a result recorded by RecordValue:
// a step whose tasks all finish keeps no result, so none is encoded until a
// step is held.
func (r Result) JSON() (json.RawMessage, error) {
	if r.Value != nil {
		return r.Value, nil
	}
	return json.Marshal(r.value)
}

// TakeRaised returns the interrupts raised by the task and its sub-tasks, in
// order, and hands their slice to the caller: the collector starts a new one,
// so a sub-task still running cannot change what was returned. A runtime
// calls it once, when the task's attempt is over.
func (c *Collector) TakeRaised() []vocab.Interruption {
	c.mu.Lock()
	defer c.mu.Unlock()
	raised := c.raised
	c.raised = nil
	return raised
}

// Ledger yields the sub-task results recorded during this attempt by ledger
// key, in no particular order. It is read once the attempt is over, and holds
// c's lock while it yields: the loop must not call c.
func (c *Collector) Ledger() iter.Seq2[string, Result] {
	return func(yield func(string, Result) bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, r := range c.few[:c.nfew] {
			if !yield(r.Key, r.Result) {
				return
			}
		}
		for k, r := range c.ledger {
			if !yield(k, r) {
				return
			}
		}
	}
}

// Count counts the sub-task results recorded during this attempt.
func (c *Collector) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nfew + len(c.ledger)
}

// lookup returns the result recorded under key in this attempt. c.mu is held.
func (c *Collector) lookup(key string) (Result, bool) {
	for _, r := range c.few[:c.nfew] {
		if r.Key == key {
			return r.Result, true
		}
	}
	r, ok := c.ledger[key]
	return r, ok
}

// Scope is one task or sub-task attempt.
type Scope struct {
	parent     *Scope
	step       *Step
	collector  *Collector
	node       string
	path       []string
	toolCallID string

	mu     sync.Mutex
	pos    int
	names  map[string]bool
	paused bool
}

// New returns the scope of a top-level task running node.
func New(step *Step, node string) *Scope { return new(Root).Init(step, node) }

// Root holds the scope of a top-level task and what it refers to, for a
// runtime that allocates them together with its own state of the task.
type Root struct {
	s    Scope
	c    Collector
	path [1]string
}

// Init makes r the scope of a top-level task running node, and returns it.
func (r *Root) Init(step *Step, node string) *Scope {
	r.path[0] = node
	r.s = Scope{step: step, collector: &r.c, node: node, path: r.path[:]}
	return &r.s
}

// Sub returns the scope of a sub-task of s identified by key.
func (s *Scope) Sub(key, toolCallID string) *Scope {
	p := make([]string, len(s.path)+1)
	copy(p, s.path)
	p[len(s.path)] = key
	if toolCallID == "" {
		toolCallID = s.toolCallID
	}
	return &Scope{parent: s, step: s.step, collector: s.collector, node: s.node, path: p, toolCallID: toolCallID}
}

// SubContext returns the scope of a sub-task of s identified by key, as Sub
// does, and ctx carrying it, as With does, in one allocation.
func (s *Scope) SubContext(ctx context.Context, key, toolCallID string) (context.Context, *Scope) {
	t := &struct {
		s    Scope
		c    Context
		path [3]string
	}{}
	var p []string
	if n := len(s.path) + 1; n <= len(t.path) {
		p = t.path[:n:n]
	} else {
		p = make([]string, n)
	}
	copy(p, s.path)
	p[len(s.path)] = key
	if toolCallID == "" {
		toolCallID = s.toolCallID
	}
	t.s = Scope{parent: s, step: s.step, collector: s.collector, node: s.node, path: p, toolCallID: toolCallID}
	t.c = Context{Context: ctx, Scope: &t.s, Key: ctxKey{}, Val: &t.s}
	return &t.c, &t.s
}

// Collector returns the collector shared by the task and its sub-tasks.
func (s *Scope) Collector() *Collector { return s.collector }

// Node returns the node the task belongs to.
func (s *Scope) Node() string { return s.node }

// Path returns the task path: the node, then sub-task keys.
func (s *Scope) Path() []string { return s.path }

// ToolCallID returns the tool call the task runs, or "".
func (s *Scope) ToolCallID() string { return s.toolCallID }

// Now returns the step's clock reading.
func (s *Scope) Now() time.Time { return s.step.Now() }

// Paused reports whether this scope, or a sub-task of it, has raised an interrupt in
// this attempt.
func (s *Scope) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

// ErrDuplicateName is returned by NextID when a name is used twice in one task.
type ErrDuplicateName string

// Error names the duplicated interrupt name and says to give each call its own.
func (e ErrDuplicateName) Error() string {
	return "interrupt name " + strconv.Quote(string(e)) + " is used twice in the same task; give each Interrupt call its own name"
}

// NextID returns the id of the next Interrupt call of this attempt: by name when
// name is set, else by position among the unnamed calls.
func (s *Scope) NextID(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// What the id derives from (see ID), gathered in this frame.
	var buf [256]byte
	b := appendIDPath(s.step.appendIDBase(buf[:0]), s.path)
	if name != "" {
		if s.names[name] {
			return "", ErrDuplicateName(name)
		}
		if s.names == nil {
			s.names = make(map[string]bool)
		}
		s.names[name] = true
		b = append(append(b, "name:"...), name...)
	} else {
		b = strconv.AppendInt(append(b, "pos:"...), int64(s.pos), 10)
		s.pos++
	}
	return idOf(b), nil
}

// ID derives an interrupt id from the step identity, the task path and the call's slot.
func ID(base string, path []string, slot string) string {
	b := appendIDPath(append([]byte(nil), base...), path)
	return idOf(append(b, slot...))
}

// appendIDPath appends to an id's base its task path, each element after a
// zero byte, and the byte 1 that ends it.
func appendIDPath(b []byte, path []string) []byte {
	for _, p := range path {
		b = append(append(b, 0), p...)
	}
	return append(b, 1)
}

// idOf is the interrupt id of base, path and slot as ID writes them one after
// the other: "int_" and the first 12 bytes of their SHA-256, in hex.
func idOf(b []byte) string {
	sum := sha256.Sum256(b)
	var id [4 + 24]byte
	copy(id[:], "int_")
	hex.Encode(id[4:], sum[:12])
	return string(id[:])
}

// Lookup returns the exchange recorded for id in this step, or nil. It is the
// step's record itself, which the caller must only read.
func (s *Scope) Lookup(id string) *vocab.Exchange {
	xs := s.step.Exchanges
	for i := range xs {
		if xs[i].Interrupt.ID == id {
			return &xs[i]
		}
	}
	return nil
}

// Raise records a new interrupt for this attempt and marks the scope paused. Only
// the first interrupt of an attempt is kept: once a task has paused, later calls
// report the same pause.
func (s *Scope) Raise(in vocab.Interruption) bool {
	s.mu.Lock()
	already := s.paused
	s.paused = true
	s.mu.Unlock()
	if already {
		return false
	}
	for p := s.parent; p != nil; p = p.parent {
		p.mu.Lock()
		p.paused = true
		p.mu.Unlock()
	}
	in.Node = s.node
	in.Path = s.path
	in.ToolCallID = s.toolCallID
	s.collector.mu.Lock()
	s.collector.raised = append(s.collector.raised, in)
	s.collector.mu.Unlock()
	return true
}

// Exchanges returns the exchanges of this exact task path in the order raised,
// each with its own copy of its resolution, so that the caller cannot change
// the step's record.
func (s *Scope) Exchanges() []vocab.Exchange {
	var out []vocab.Exchange
	for _, x := range s.step.Exchanges {
		if !samePath(x.Interrupt.Path, s.path) {
			continue
		}
		if r := x.Resolution; r != nil {
			c := *r
			if c.Error != nil {
				e := *c.Error
				c.Error = &e
			}
			x.Resolution = &c
		}
		out = append(out, x)
	}
	return out
}

func samePath(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// LedgerKey is the ledger key of the sub-task key under this scope.
func (s *Scope) LedgerKey(key string) string {
	n := len(key)
	for _, p := range s.path {
		n += len(p) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range s.path {
		b.WriteString(p)
		b.WriteByte(0x1f)
	}
	b.WriteString(key)
	return b.String()
}

// PathOf returns the task path of the sub-task whose ledger key is ledgerKey: its
// node, then the sub-task keys.
func PathOf(ledgerKey string) []string { return strings.Split(ledgerKey, "\x1f") }

// Recorded returns a sub-task result recorded by an earlier attempt of this step,
// or earlier in this attempt, as JSON (nil for a result recorded by RecordValue
// that cannot be encoded).
func (s *Scope) Recorded(ledgerKey string) (json.RawMessage, bool) {
	r, ok := s.RecordedResult(ledgerKey)
	if !ok {
		return nil, false
	}
	v, _ := r.JSON()
	return v, true
}

// RecordedResult is Recorded giving the result as recorded: a result recorded
// earlier in this attempt by RecordValue is not encoded yet.
func (s *Scope) RecordedResult(ledgerKey string) (Result, bool) {
	if v, ok := s.step.Ledger.Get(ledgerKey); ok {
		return Result{Value: v}, true
	}
	s.collector.mu.Lock()
	defer s.collector.mu.Unlock()
	return s.collector.lookup(ledgerKey)
}

// Record stores a finished sub-task's result in this attempt's ledger, with the
// tool call it ran ("" for none).
func (s *Scope) Record(ledgerKey, toolCallID string, result json.RawMessage) {
	s.collector.put(ledgerKey, Result{Value: result, ToolCallID: toolCallID})
}

// RecordValue is Record for a result not yet encoded: it is encoded as JSON
// only if the step is held (Result.JSON), or read back by a later sub-task of
// this attempt with the same key.
func (s *Scope) RecordValue(ledgerKey, toolCallID string, result any) {
	s.collector.put(ledgerKey, Result{value: result, ToolCallID: toolCallID})
}

// put records r under key: in the slot of few that holds key, else the next
// free one, else in the map.
func (c *Collector) put(key string, r Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.few[:c.nfew] {
		if c.few[i].Key == key {
			c.few[i].Result = r
			return
		}
	}
	switch {
	case c.nfew < len(c.few):
		c.few[c.nfew] = recorded{Key: key, Result: r}
		c.nfew++
	default:
		if c.ledger == nil {
			c.ledger = make(map[string]Result)
		}
		c.ledger[key] = r
	}
}

type ctxKey struct{}

// With returns ctx carrying s.
func With(ctx context.Context, s *Scope) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// Context is a context carrying a scope and one more value (the runtime's own
// state of the task), in one context: a task starts with both, and the
// runtime may allocate it together with that state.
type Context struct {
	context.Context
	// Scope is the task's scope (From finds it).
	Scope *Scope
	// Key and Val are the other value and its key, as context.WithValue takes
	// them.
	Key, Val any
}

// Value returns the scope for From's key, Val for Key, and else the parent's
// value.
func (c *Context) Value(key any) any {
	switch key {
	case ctxKey{}:
		return c.Scope
	case c.Key:
		return c.Val
	}
	return c.Context.Value(key)
}

// From returns the scope on ctx, or nil outside a running task.
func From(ctx context.Context) *Scope {
	s, _ := ctx.Value(ctxKey{}).(*Scope)
	return s
}

// Without returns ctx with no task scope, for code (such as callbacks) that must not
// be able to pause the task.
func Without(ctx context.Context) context.Context {
	return context.WithValue(ctx, ctxKey{}, (*Scope)(nil))
}

// Forward records an interrupt raised inside a nested run (a subgraph) as one of
// this task's, under path, and marks the scope and its parents paused. It copies
// *in once, into the task's list. Unlike Raise it keeps every interrupt
// forwarded in an attempt: a subgraph may pause in several places at once.
func (s *Scope) Forward(in *vocab.Interruption, path []string) {
	for p := s; p != nil; p = p.parent {
		p.mu.Lock()
		p.paused = true
		p.mu.Unlock()
	}
	s.collector.mu.Lock()
	s.collector.raised = append(s.collector.raised, *in)
	q := &s.collector.raised[len(s.collector.raised)-1]
	q.Path, q.Node = path, s.node
	if q.ToolCallID == "" {
		q.ToolCallID = s.toolCallID
	}
	s.collector.mu.Unlock()
}

// IDBase is what the interrupt ids of a run nested in this scope derive from: the
// step's identity and this scope's path.
func (s *Scope) IDBase() string {
	idBase, _ := s.Nested()
	return idBase
}

// Nested returns what a run nested in this scope needs: its IDBase, and the
// ProgressKey under which it keeps its checkpoint, made in one allocation
// (each level of nesting makes its own).
func (s *Scope) Nested() (idBase, progressKey string) {
	var buf [256]byte
	b, n := s.appendNested(buf[:0])
	both := string(b)
	return both[:n], both[n:]
}

// IsNested reports whether idBase and progressKey are what Nested returns, so
// that a caller that kept them from an earlier attempt need not make them again.
// It compares them piece by piece, making nothing.
func (s *Scope) IsNested(idBase, progressKey string) bool {
	// The progress key: each path element followed by 0x1f, then progressMark.
	rest := progressKey
	for _, p := range s.path {
		if len(rest) <= len(p) || rest[:len(p)] != p || rest[len(p)] != 0x1f {
			return false
		}
		rest = rest[len(p)+1:]
	}
	if rest != progressMark {
		return false
	}
	// The id base ends with 2 and the path joined by 0x1f: the key's start.
	path := progressKey[:max(len(progressKey)-len(progressMark)-1, 0)]
	head := len(idBase) - len(path) - 1
	if head < 0 || idBase[head] != 2 || idBase[head+1:] != path {
		return false
	}
	// Before it, the step's IDBase.
	st := s.step
	base, ok := cutDecimal(idBase[:head], st.Checkpoint)
	if !ok || base == "" || base[len(base)-1] != 0 {
		return false
	}
	if base = base[:len(base)-1]; st.Nested != "" {
		return base == st.Nested
	}
	return len(base) == len(st.Nonce)+1+len(st.Thread) && base[:len(st.Nonce)] == st.Nonce &&
		base[len(st.Nonce)] == 0 && base[len(st.Nonce)+1:] == st.Thread
}

// cutDecimal cuts v, written in decimal as strconv writes it, off the end of s.
func cutDecimal(s string, v int64) (string, bool) {
	if v < 0 {
		var buf [20]byte
		return strings.CutSuffix(s, string(strconv.AppendInt(buf[:0], v, 10)))
	}
	for {
		if s == "" || s[len(s)-1] != byte('0'+v%10) {
			return s, false
		}
		if s, v = s[:len(s)-1], v/10; v == 0 {
			return s, true
		}
	}
}

// appendNested appends to b what Nested returns, the id base and then the
// progress key, and returns the result and the id base's length.
func (s *Scope) appendNested(b []byte) ([]byte, int) {
	b = append(s.step.appendIDBase(b), 2)
	for i, p := range s.path {
		if i > 0 {
			b = append(b, 0x1f)
		}
		b = append(b, p...)
	}
	n := len(b)
	for _, p := range s.path { // the progress key, as LedgerKey writes it
		b = append(append(b, p...), 0x1f)
	}
	return append(b, progressMark...), n
}

// progressMark ends the ledger key under which a nested run keeps its checkpoint.
const progressMark = "\x00progress"

// ProgressKey is the ledger key under which a run nested in this scope keeps its
// checkpoint while it waits.
func (s *Scope) ProgressKey() string { return s.LedgerKey(progressMark) }

// IsProgressKey reports whether a ledger key holds a nested run's checkpoint
// rather than a finished sub-task's result.
func IsProgressKey(key string) bool { return strings.HasSuffix(key, "\x1f"+progressMark) }
