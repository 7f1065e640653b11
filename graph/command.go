package graph

import (
	"encoding/json"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

type commandKind int

const (
	cmdInput commandKind = iota + 1
	cmdAnswer
	cmdContinue
	cmdRecover
)

// Command is what an invocation does to a thread: start or continue it with input,
// answer its interrupts, or continue past a breakpoint.
type Command struct {
	kind        commandKind
	input       any
	resolutions map[string]interlude.Resolution // "" names the single pending interrupt
	// one is Resume's single answer, kept here rather than in a map of one
	// (one.InterruptID names it, "" the single pending interrupt).
	one      interlude.Resolution
	hasOne   bool
	noValues bool // the erased result leaves Values out
	endDocs  func(end *Result[json.RawMessage]) []store.DocumentWrite
}

// WithoutValues returns the command for a caller that will not read the run's
// values: a graph invoked through Erased then leaves the result's Values nil
// rather than encoding the state, as the HTTP API does at granularity low.
// The run itself is the same; a typed Graph's result keeps its Values.
func (c Command) WithoutValues() Command {
	c.noValues = true
	return c
}

// WithEndDocuments returns the command with documents written in the commit
// that ends its run (completed, paused or failed; store.Append.Documents),
// so that they are durable exactly when the run's end is, without a commit
// of their own: fn is called with the run's result as that commit records it
// (its Checkpoint is the commit's version) and returns the documents. A run
// that ends without committing (nothing to do) writes none, and a commit the
// store refuses writes none of them; the caller tells that the documents
// went with the run's end by the run's result, whose Checkpoint is then the
// one fn saw. The store must have the Documents capability.
func (c Command) WithEndDocuments(fn func(end *Result[json.RawMessage]) []store.DocumentWrite) Command {
	c.endDocs = fn
	return c
}

// Input starts a run with input applied as an update (through the reducers) before
// the nodes after Start run. The input is the state type S, a *S, or a JSON object
// (json.RawMessage or []byte) whose keys are state fields. A thread waiting for
// answers refuses input with ErrThreadInterrupted.
func Input(v any) Command { return Command{kind: cmdInput, input: v} }

// Resume answers one interrupt with r, built by interlude.Resolve, Reject,
// Cancel or Expire: the one r names with For, or, without an id, the single
// pending one (with several pending that is refused with
// interlude.ErrAmbiguousResume). A rejected plain node runs again and its
// Interrupt call returns a *RejectedError; a rejected tool is not run again and
// the rejection becomes the call's failed result.
func Resume(r interlude.Resolution) Command {
	return Command{kind: cmdAnswer, one: r, hasOne: true}
}

// Respond answers any subset of the pending interrupts, by id. The thread stays
// interrupted until every pending interrupt is resolved; tasks whose interrupts are
// all answered run again at once.
func Respond(rs map[string]interlude.Resolution) Command {
	return Command{kind: cmdAnswer, resolutions: rs}
}

// Continue runs a thread on without input: past a breakpoint, again after a
// failed step, or on from its last checkpoint after a run that stopped before
// its end (see Recover).
func Continue() Command { return Command{kind: cmdContinue} }

// Recover finishes a run that stopped before its end (its process died, or its
// context was cancelled) after committing work that left more to do: answers
// that started a step, or a step after which nodes were due. Such a thread's
// status is running (interlude.ThreadRunning) while no run holds it. The run goes
// on from the last checkpoint: the answered step's unfinished tasks run again
// and receive the recorded answers, and committed steps are not run again. A
// thread with no such run is refused with interlude.ErrConflict, and one that a
// run of this process holds with interlude.ErrThreadBusy, at once: that run
// goes on by itself. A server calls it for the threads its store lists as
// unfinished (store.RecoveryIndex); a plain Continue, or the same answers sent
// again, finish the run too.
func Recover() Command { return Command{kind: cmdRecover} }

// Result is the outcome of an invocation. It is also the body of the HTTP
// API's run answers (invoke, the thread answer routes and a stream's end
// event): the server encodes it as it is, at the request's granularity, and
// the Go client decodes into it.
type Result[S any] struct {
	// ThreadID is the thread.
	ThreadID string `json:"thread_id"`
	// Status is how the invocation ended.
	Status interlude.RunStatus `json:"status"`
	// Interrupts are the pending questions, when Status is Interrupted.
	Interrupts []interlude.Interruption `json:"interrupts"`
	// Breakpoint is set when the thread paused at a breakpoint.
	Breakpoint *Breakpoint `json:"breakpoint,omitempty"`
	// Error describes the failure when Status is Failed.
	Error string `json:"error,omitempty"`
	// Values is the thread's state. Treat it as read-only. The HTTP API leaves
	// it out at granularity low.
	Values S `json:"values,omitempty"`
	// Messages is the values' messages field, for agent graphs: the HTTP API
	// sets it (not at granularity low); an invocation in Go leaves it nil.
	Messages json.RawMessage `json:"messages,omitempty"`
	// Next lists the nodes that run next.
	Next []string `json:"next,omitempty"`
	// Checkpoint is the thread's version after the invocation.
	Checkpoint int64 `json:"checkpoint,omitempty"`
	// State is the full state and where the thread paused, which the HTTP API
	// sets at granularity full; an invocation in Go leaves it nil (see Full).
	State *RunState[S] `json:"state,omitempty"`
	// Replayed is true when every answer the invocation gave had been given
	// before: none was applied again, and Replays says who gave them and when.
	Replayed bool `json:"replayed,omitempty"`
	// Replays lists the answers of this invocation that had been given before
	// (the identical answer sent again: a double click, a retried request, or
	// a second person giving the same answer), each with the resolution
	// recorded the first time, which says who gave it and when, and names its
	// interrupt. They were not applied again.
	Replays []interlude.Resolution `json:"replays,omitempty"`
}

// RunState is the full state of a run's result, as the HTTP API's
// granularity full shows it.
type RunState[S any] struct {
	// Values is the thread's state.
	Values S `json:"values"`
	// Next lists the nodes that run next.
	Next []string `json:"next"`
	// Checkpoint is the thread's version.
	Checkpoint int64 `json:"checkpoint"`
	// ExecutionMeta says where and why the thread paused.
	ExecutionMeta ExecutionMeta `json:"execution_meta"`
}

// ExecutionMeta says where and why a thread paused.
type ExecutionMeta struct {
	// Status is completed, failed, interrupted_before (the paused node runs
	// again when answered, or the thread waits before a node) or
	// interrupted_after.
	Status string `json:"status"`
	// InterruptReason is the first pending interrupt's reason, or "interrupt".
	InterruptReason string `json:"interrupt_reason,omitempty"`
	// InterruptedNode is the node that paused.
	InterruptedNode string `json:"interrupted_node,omitempty"`
	// InterruptData holds the first pending interrupt, or the breakpoint.
	InterruptData *InterruptData `json:"interrupt_data,omitempty"`
}

// InterruptData is the pause of ExecutionMeta.
type InterruptData struct {
	// Interrupt is the first pending interrupt, or nil at a breakpoint.
	Interrupt *interlude.Interruption `json:"interrupt"`
	// Breakpoint is the breakpoint, if the thread sits at one.
	Breakpoint *Breakpoint `json:"breakpoint,omitempty"`
}

// Full returns the result's RunState: its values, next nodes and checkpoint,
// with where and why the thread paused.
func (r *Result[S]) Full() *RunState[S] {
	next := r.Next
	if next == nil {
		next = []string{}
	}
	return &RunState[S]{Values: r.Values, Next: next, Checkpoint: r.Checkpoint, ExecutionMeta: r.meta()}
}

func (r *Result[S]) meta() ExecutionMeta {
	switch {
	case len(r.Interrupts) > 0:
		q := r.Interrupts[0]
		reason := q.Reason
		if reason == "" {
			reason = "interrupt"
		}
		return ExecutionMeta{Status: "interrupted_before", InterruptReason: reason, InterruptedNode: q.Node,
			InterruptData: &InterruptData{Interrupt: &q}}
	case r.Breakpoint != nil:
		return ExecutionMeta{Status: "interrupted_" + r.Breakpoint.When, InterruptReason: "interrupt", InterruptedNode: r.Breakpoint.Node,
			InterruptData: &InterruptData{Breakpoint: r.Breakpoint}}
	case r.Status == interlude.RunFailed:
		return ExecutionMeta{Status: "failed"}
	}
	return ExecutionMeta{Status: "completed"}
}

// EventType names a stream event.
type EventType string

// Stream event types.
const (
	// EventMetadata opens every stream.
	EventMetadata EventType = "metadata"
	// EventUpdate reports a node's writes when it finishes.
	EventUpdate EventType = "updates"
	// EventMessage carries output a node emits while it runs, such as model text.
	EventMessage EventType = "messages"
	// EventInterrupt reports a pending question when the run pauses.
	EventInterrupt EventType = "interrupt"
	// EventBreakpoint reports a pause at a breakpoint.
	EventBreakpoint EventType = "breakpoint"
	// EventCustom carries other data a node emits.
	EventCustom EventType = "custom"
	// EventSubTask reports a sub-task run with Once (such as an agent's tool
	// call) as soon as it finishes, with its result, while the rest of its step
	// may still run or wait for answers. A sub-task is reported when it runs, not
	// again when a re-run of the step (after an answer) takes its result from the
	// ledger. The node's update, once the whole step completes, carries the same
	// result again (for an agent, in the tool-result message): a client that
	// shows both skips the results it has shown, by tool call id. A run cut short
	// before its step is stored runs the sub-task, and reports it, again.
	EventSubTask EventType = "subtask"
	// EventValues carries the thread's whole state (Values) when the run
	// starts and after each step it commits, on a stream that asked for it
	// (WithValues).
	EventValues EventType = "values"
	// EventEnd closes every stream that ran.
	EventEnd EventType = "end"
)

// Event is one item of a run's stream.
type Event struct {
	// Type says what happened.
	Type EventType
	// ThreadID is the thread.
	ThreadID string
	// Node is the node concerned, if any.
	Node string
	// Step counts the thread's completed steps when the event happened.
	Step int
	// Update is a node's writes (EventUpdate) as a JSON object of fields.
	Update json.RawMessage
	// Interrupt is the question (EventInterrupt).
	Interrupt *interlude.Interruption
	// Breakpoint is the breakpoint (EventBreakpoint).
	Breakpoint *Breakpoint
	// Data is what a node emitted (EventMessage, EventCustom).
	Data any
	// SubTask is the sub-task that finished (EventSubTask).
	SubTask *SubTaskResult
	// Status is the outcome (EventEnd).
	Status interlude.RunStatus
	// Values is the thread's state as JSON (EventEnd, EventValues).
	Values json.RawMessage
	// Interrupts are the pending questions (EventEnd).
	Interrupts []interlude.Interruption
	// Next lists the nodes that run next (EventEnd).
	Next []string
	// Error describes a failure (EventEnd with Status Failed).
	Error string
	// Checkpoint is the thread version (EventMetadata, EventEnd).
	Checkpoint int64
	// At is when the event happened.
	At time.Time
	// Namespace is set on an event of a subgraph (streamed with WithSubgraphs):
	// the task path that leads to the subgraph, outermost first.
	Namespace []string
}
