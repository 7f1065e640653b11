package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/task"
)

// taskEnv is what a running task can reach through its context besides the
// interrupt scope: the event stream and its kept writes.
type taskEnv struct {
	runner eventSink
	live   bool // someone listens to the run's events
	fs     *fields
	node   string
	step   int
	memory *atomic.Pointer[sync.Map] // the run's RunMemory, made on first use
	thread string
	// subgraphs: the run's stream takes the events of subgraphs (WithSubgraphs)
	subgraphs bool
	// waiting keeps the states of subgraphs that wait in the step
	waiting *waitingSubgraphs
	// before and after are the breakpoints on subgraphs' nodes, by path
	before, after []string

	mu   sync.Mutex
	kept []write
}

type envKey struct{}

// eventSink takes a run's events (a runner's send).
type eventSink interface{ send(Event) }

func envFrom(ctx context.Context) *taskEnv {
	e, _ := ctx.Value(envKey{}).(*taskEnv)
	return e
}

func (e *taskEnv) writes() []write {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.kept
}

// RunMemory returns a map that lives for the rest of the current invocation (one
// Invoke or Stream call) and is shared by its tasks. Nothing in it is ever written
// to the store, so it suits decisions that must not outlive the invocation, such as
// an approval given "for the rest of this run". Outside a task it returns nil.
func RunMemory(ctx context.Context) *sync.Map {
	e := envFrom(ctx)
	if e == nil {
		return nil
	}
	if m := e.memory.Load(); m != nil {
		return m
	}
	e.memory.CompareAndSwap(nil, new(sync.Map)) // the first task to ask makes it
	return e.memory.Load()
}

// Write applies an update on behalf of the running node right away, so that it is
// kept even if the node then pauses: use it to record that something started (an
// attempt counter with graph:"add", an audit entry with graph:"append"). A node's
// returned update, by contrast, is applied only when the node finishes. Write
// called again when the node re-runs after a resume writes again.
func Write[S any](ctx context.Context, update S) error {
	e := envFrom(ctx)
	if e == nil {
		return interlude.ErrNotInRun
	}
	if e.fs.typ != reflect.TypeFor[S]() {
		return &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: fmt.Sprintf("Write got a %s, but the graph's state type is %s", reflect.TypeFor[S](), e.fs.typ)}
	}
	ws, err := e.fs.writesOfNode(reflect.ValueOf(update), e.node)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.kept = append(e.kept, ws...)
	e.mu.Unlock()
	return nil
}

// Observed reports whether the events a running node sends (Emit) reach
// anyone: the run's Stream or the graph's live listeners (WithEvents). A node
// may skip building events that nobody reads; Emit drops them anyway. Outside
// a task it reports false.
func Observed(ctx context.Context) bool {
	e := envFrom(ctx)
	return e != nil && e.live
}

// Emit sends data to the run's stream as an event of type typ (EventMessage for
// model output, EventCustom otherwise) while the node runs. Invoke discards it.
func Emit(ctx context.Context, typ EventType, data any) {
	e := envFrom(ctx)
	if e == nil {
		return
	}
	e.runner.send(Event{Type: typ, Node: e.node, Step: e.step, Data: data})
}

// OnceOption configures Once. It is a plain value, so that passing options
// to Once allocates nothing.
type OnceOption struct{ toolCallID string }

// AsToolCall marks the sub-task as the tool call id: interrupts it raises report
// that id.
func AsToolCall(id string) OnceOption { return OnceOption{toolCallID: id} }

// SubTaskResult is the result of a sub-task run with Once, recorded in its step's
// ledger. A stream reports it as soon as the sub-task finishes (EventSubTask),
// and a Snapshot lists those of a step that waits for answers or has failed
// (Snapshot.Finished), since the node's own update comes only when the whole step
// completes.
type SubTaskResult struct {
	// Path is the sub-task's task path: the node, then the keys given to Once
	// (["tools", "call_1"] for an agent's tool call).
	Path []string `json:"path"`
	// ToolCallID is the tool call the sub-task ran (AsToolCall), or "".
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Result is the value the sub-task returned, as JSON: for an agent's tool
	// call, its tool-result block.
	Result json.RawMessage `json:"result"`
}

// Once runs fn as a sub-task of the running task, identified by key (unique within
// the task). Interrupts fn raises have their own ids and positions. Once fn
// finishes, its result is recorded in the step's ledger: when the task runs again
// (because one of its other sub-tasks was answered), Once returns the recorded
// result without running fn. The ledger lasts until the step completes.
//
// A sub-task that finishes is reported on the run's stream at once, as an
// EventSubTask; a result taken from the ledger is not reported again. While its
// step waits, the thread's Snapshot lists it in Finished.
//
// A tool node runs each tool call through Once, so finished calls are never run
// again while others wait for answers. T must encode as JSON; the result is
// encoded when it is reported or when the step is held, not when the step
// completes, since a completed step keeps no ledger.
func Once[T any](ctx context.Context, key string, fn func(ctx context.Context) (T, error), opts ...OnceOption) (T, error) {
	var zero T
	s := task.From(ctx)
	if s == nil {
		return zero, interlude.ErrNotInRun
	}
	var cfg OnceOption
	for _, o := range opts {
		cfg.toolCallID = o.toolCallID
	}
	lk := s.LedgerKey(key)
	if r, ok := s.RecordedResult(lk); ok {
		raw, err := r.JSON() // recorded earlier in this attempt, it is encoded now
		if err != nil {
			return zero, &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: fmt.Sprintf("result of %q cannot be recorded as JSON: %v", key, err)}
		}
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return zero, &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: fmt.Sprintf("recorded result of %q does not fit %T: %v", key, v, err)}
		}
		return v, nil
	}
	subCtx, sub := s.SubContext(ctx, key, cfg.toolCallID)
	v, err := fn(subCtx)
	if sub.Paused() {
		if err == nil || !interlude.IsPaused(err) {
			err = interlude.ErrPaused
		}
		return zero, err
	}
	if err != nil {
		return zero, err
	}
	e := envFrom(ctx)
	if e == nil || !e.live {
		// Encoded only if the step is held: a step whose tasks all finish keeps
		// no result.
		s.RecordValue(lk, cfg.toolCallID, v)
		return v, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return zero, &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: fmt.Sprintf("result of %q cannot be recorded as JSON: %v", key, err)}
	}
	s.Record(lk, cfg.toolCallID, raw)
	e.runner.send(Event{Type: EventSubTask, Node: e.node, Step: e.step,
		SubTask: &SubTaskResult{Path: sub.Path(), ToolCallID: cfg.toolCallID, Result: raw}})
	return v, nil
}

// ToolCallID returns the tool call the running sub-task runs (see AsToolCall), or
// "" outside one.
func ToolCallID(ctx context.Context) string {
	if s := task.From(ctx); s != nil {
		return s.ToolCallID()
	}
	return ""
}
