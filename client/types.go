package client

import (
	"encoding/json"
	"time"

	"github.com/interludehq/interlude"
)

// Granularity is how much of the state a run answer carries.
type Granularity string

// The response granularities.
const (
	// Low: status and interrupts only.
	Low Granularity = "low"
	// Partial (the server's default): plus values and messages.
	Partial Granularity = "partial"
	// Full: plus State, with the execution metadata.
	Full Granularity = "full"
)

// Null is the JSON null. As InvokeRequest.Resume it cancels the pending
// interrupt.
var Null = json.RawMessage("null")

// InvokeRequest is the body of Invoke and Stream. Set exactly one of Input,
// Messages, Resume and Responses, or none to continue a thread (past a
// breakpoint).
type InvokeRequest struct {
	// Graph names the graph; required to start a thread when the server hosts
	// several, and checked against an existing thread's graph.
	Graph string
	// ThreadID names the thread; the server makes one for new input without it.
	ThreadID string
	// Input is the input: a JSON object of state fields (any value that encodes to
	// one).
	Input any
	// Messages are messages for an agent graph; they become the input
	// {"messages": Messages}.
	Messages any
	// Resume answers the single pending interrupt; Null cancels it.
	Resume any
	// Responses answer pending interrupts by id: interlude.Resolve(v),
	// interlude.Reject(err) or interlude.Cancel(), each with For(id).
	Responses []interlude.Resolution
	// Granularity is how much the answer carries ("" for the server's default).
	Granularity Granularity
}

type wireConfig struct {
	ThreadID string `json:"thread_id,omitempty"`
}

type wireInvoke struct {
	Graph       string                 `json:"graph,omitempty"`
	Input       any                    `json:"input,omitempty"`
	Messages    any                    `json:"messages,omitempty"`
	Resume      any                    `json:"resume,omitempty"`
	Responses   []interlude.Resolution `json:"responses,omitempty"`
	Config      *wireConfig            `json:"config,omitempty"`
	Granularity Granularity            `json:"response_granularity,omitempty"`
}

func (r InvokeRequest) wire() wireInvoke {
	w := wireInvoke{Graph: r.Graph, Input: r.Input, Messages: r.Messages, Resume: r.Resume, Responses: r.Responses, Granularity: r.Granularity}
	if r.ThreadID != "" {
		w.Config = &wireConfig{ThreadID: r.ThreadID}
	}
	return w
}

// Breakpoint is a pause at a node boundary.
type Breakpoint struct {
	// Node is the node the thread paused before or after.
	Node string `json:"node"`
	// When is "before" or "after".
	When string `json:"when"`
	// Namespace is set for a breakpoint inside a subgraph: the path that leads
	// to it, joined with "/".
	Namespace string `json:"namespace,omitempty"`
}

// SubgraphState is a subgraph waiting inside a thread's step (paused, at a
// breakpoint, or failed), with its own state.
type SubgraphState struct {
	// Namespace is its place in the thread: the task path that leads to it,
	// outermost first.
	Namespace []string `json:"namespace"`
	// Values is its state.
	Values json.RawMessage `json:"values"`
	// Next lists its nodes that run next.
	Next []string `json:"next,omitempty"`
	// Step counts its completed steps.
	Step int `json:"step"`
	// Interrupts are its pending questions, their paths relative to it.
	Interrupts []interlude.Interruption `json:"interrupts,omitempty"`
	// Breakpoint is set while it sits at one of its breakpoints.
	Breakpoint *Breakpoint `json:"breakpoint,omitempty"`
	// Error describes its failure, if it failed.
	Error string `json:"error,omitempty"`
}

// RunResult is the answer of Invoke, Resume, Respond, Reject and Cancel, and the
// data of a stream's end event.
type RunResult struct {
	// ThreadID is the thread.
	ThreadID string `json:"thread_id"`
	// Status is completed, interrupted or failed.
	Status interlude.RunStatus `json:"status"`
	// Interrupts are the pending questions.
	Interrupts []interlude.Interruption `json:"interrupts"`
	// Breakpoint is set when the thread paused at a breakpoint.
	Breakpoint *Breakpoint `json:"breakpoint,omitempty"`
	// Error describes the failure when Status is failed.
	Error string `json:"error,omitempty"`
	// Values is the thread's state (not at granularity low).
	Values json.RawMessage `json:"values,omitempty"`
	// Messages is the values' messages field, for agent graphs.
	Messages json.RawMessage `json:"messages,omitempty"`
	// State is set at granularity full.
	State *State `json:"state,omitempty"`
	// Replayed is true when every answer the request gave had been given
	// before, by this client or another: none was applied again. Replays says
	// who gave them and when.
	Replayed bool `json:"replayed,omitempty"`
	// Replays lists the answers of the request that had been given before,
	// with their resolutions as first recorded: the interrupt answered, its
	// status, response or error, who gave it (By) and when (At).
	Replays []interlude.Resolution `json:"replays,omitempty"`
}

// State is the full state of a run answer.
type State struct {
	// Values is the thread's state.
	Values json.RawMessage `json:"values"`
	// Next lists the nodes that run next.
	Next []string `json:"next"`
	// Checkpoint is the thread's version.
	Checkpoint int64 `json:"checkpoint"`
	// ExecutionMeta says where and why the thread paused.
	ExecutionMeta ExecutionMeta `json:"execution_meta"`
}

// ExecutionMeta says where and why a thread paused.
type ExecutionMeta struct {
	// Status is completed, failed, interrupted_before or interrupted_after.
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

// GraphInfo describes a hosted graph.
type GraphInfo struct {
	// Name is the graph's name.
	Name string `json:"name"`
	// Nodes are its nodes.
	Nodes []string `json:"nodes"`
	// InputSchema is the JSON Schema of its state.
	InputSchema json.RawMessage `json:"input_schema"`
}

// Thread is a thread's current state.
type Thread struct {
	// ThreadID is the thread.
	ThreadID string `json:"thread_id"`
	// Graph is the graph that runs it.
	Graph string `json:"graph"`
	// Status is idle, running, interrupted or failed.
	Status interlude.ThreadStatus `json:"status"`
	// Values is its state.
	Values json.RawMessage `json:"values"`
	// Messages is the values' messages field, for agent graphs.
	Messages json.RawMessage `json:"messages,omitempty"`
	// FinishedToolResults is, while an agent's turn waits, a JSON array of the
	// tool_result content blocks of the turn's calls that have finished, in
	// call order (empty otherwise). They are not in Messages until every call
	// of the turn has a result.
	FinishedToolResults json.RawMessage `json:"finished_tool_results,omitempty"`
	// Interrupts are its pending questions.
	Interrupts []interlude.Interruption `json:"interrupts"`
	// Next lists the nodes that run next.
	Next []string `json:"next"`
	// Breakpoint is set while it sits at a breakpoint.
	Breakpoint *Breakpoint `json:"breakpoint,omitempty"`
	// Error describes the last failure while it is failed.
	Error string `json:"error,omitempty"`
	// Checkpoint is its version.
	Checkpoint int64 `json:"checkpoint"`
	// CreatedAt is when it started.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updated_at"`
	// Subgraphs are the subgraphs waiting in its current step, nested ones
	// included (ThreadWithSubgraphs only).
	Subgraphs []SubgraphState `json:"subgraphs,omitempty"`
}

// ThreadSummary is a thread in a listing.
type ThreadSummary struct {
	// ThreadID is the thread.
	ThreadID string `json:"thread_id"`
	// Graph is the graph that runs it.
	Graph string `json:"graph"`
	// Status is idle, running, interrupted or failed.
	Status interlude.ThreadStatus `json:"status"`
	// Interrupts are its pending questions.
	Interrupts []interlude.Interruption `json:"interrupts"`
	// CreatedAt is when it started.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updated_at"`
}

// ThreadPage is a page of a listing, newest updated first.
type ThreadPage struct {
	// Threads are the threads on this page.
	Threads []ThreadSummary `json:"threads"`
	// NextCursor continues the listing, or "" at its end.
	NextCursor string `json:"next_cursor"`
}

// MarshalJSON encodes the page as the server sends it: next_cursor is null at
// the end of the listing, so that a script paging until it is null stops.
func (p ThreadPage) MarshalJSON() ([]byte, error) {
	type plain ThreadPage
	var next *string
	if p.NextCursor != "" {
		next = &p.NextCursor
	}
	return json.Marshal(struct {
		plain
		NextCursor *string `json:"next_cursor"`
	}{plain(p), next})
}

// ListOptions selects threads for Threads.
type ListOptions struct {
	// Status keeps threads with this status (for the inbox: "interrupted");
	// interlude.ParseThreadStatus reads one from text.
	Status interlude.ThreadStatus
	// Graph keeps threads of this graph.
	Graph string
	// Limit caps the page size (the server's default is 50, its cap 1000).
	Limit int
	// Cursor continues a previous listing (ThreadPage.NextCursor).
	Cursor string
}

// HistoryOptions selects a page of checkpoints for History.
type HistoryOptions struct {
	// Limit caps the number of checkpoints (the server's default is 20, its
	// largest page 100).
	Limit int
	// Before keeps checkpoints older than this id (0 means from the newest);
	// pass History.NextBefore for the page after one.
	Before int64
	// Subgraphs makes each checkpoint carry the subgraph checkpoints it kept.
	Subgraphs bool
}

// History is a thread's history.
type History struct {
	// ThreadID is the thread.
	ThreadID string `json:"thread_id"`
	// Graph is the graph that runs it.
	Graph string `json:"graph"`
	// Checkpoints are a page of its checkpoints, newest first.
	Checkpoints []Checkpoint `json:"checkpoints"`
	// ToolCalls holds, per tool call id, the interrupts of the call that the
	// page's checkpoints raise or answer, in the order asked, each with its
	// private state and its resolution as the page has it (nil while pending, or
	// when answered after the page's newest checkpoint).
	ToolCalls map[string][]interlude.Exchange `json:"tool_calls"`
	// NextBefore is the Before of the next, older page, or 0 when this page
	// reaches the thread's first checkpoint.
	NextBefore int64 `json:"next_before"`
}

// Checkpoint is one entry of a thread's history.
type Checkpoint struct {
	// ID is the thread version this record created.
	ID int64 `json:"id"`
	// Kind says what happened: input, step, pause, resolve, breakpoint, fail,
	// update or fork.
	Kind string `json:"kind"`
	// At is when it was committed.
	At time.Time `json:"at"`
	// Status is the thread's status after it.
	Status interlude.ThreadStatus `json:"status"`
	// Step counts the completed steps after it.
	Step int `json:"step"`
	// Next lists the nodes due after it.
	Next []string `json:"next"`
	// Values is the state after it.
	Values json.RawMessage `json:"values"`
	// Raised are the questions it raised, with their private state.
	Raised []interlude.Interruption `json:"raised"`
	// Resolved are the answers it committed, each with its interrupt id, who
	// gave it and when.
	Resolved []interlude.Resolution `json:"resolved"`
	// Interrupts are the questions pending after it.
	Interrupts []interlude.Interruption `json:"interrupts"`
	// Breakpoint is set when it paused at a breakpoint.
	Breakpoint *Breakpoint `json:"breakpoint,omitempty"`
	// Error is the failure a fail checkpoint reports.
	Error string `json:"error,omitempty"`
	// Subgraphs are the subgraph checkpoints it kept, by namespace
	// (HistoryOptions.Subgraphs only).
	Subgraphs []SubgraphState `json:"subgraphs,omitempty"`
}

// Event is one event of a stream (Stream, StreamSSE) or of a thread's live events
// (Events).
type Event struct {
	// ID is the SSE event id ("" in NDJSON streams); pass the last one received to
	// Events to resume after it.
	ID string
	// Event names the event: metadata, updates, messages, custom, subtask, error
	// or end.
	Event string
	// Data is the event's JSON data.
	Data json.RawMessage
}

// Decode decodes the event's data into v.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Data, v) }

// Pause is the data of an updates event reporting a pause.
type Pause struct {
	// Status is "interrupted".
	Status string `json:"status"`
	// Node is the node that paused.
	Node string `json:"node"`
	// Interrupt is the pending question, for an interrupt.
	Interrupt *interlude.Interruption `json:"interrupt,omitempty"`
	// Breakpoint is the breakpoint, for a breakpoint.
	Breakpoint *Breakpoint `json:"breakpoint,omitempty"`
}

// Pause reports the pause an updates event carries, if it is one.
func (e Event) Pause() (*Pause, bool) {
	if e.Event != "updates" {
		return nil, false
	}
	var p Pause
	if json.Unmarshal(e.Data, &p) != nil || p.Status != "interrupted" || (p.Interrupt == nil && p.Breakpoint == nil) {
		return nil, false
	}
	return &p, true
}

// SubTask is the data of a subtask event: a part of a node's work (for an
// agent, a tool call) that finished, reported as soon as it did, even if its
// step then waits for answers. The node's updates event, once the whole step
// completes, carries the result again: skip those whose ToolCallID was shown.
type SubTask struct {
	// Node is the node whose work it is.
	Node string `json:"node"`
	// Path is its task path: the node, then the sub-task keys.
	Path []string `json:"path"`
	// ToolCallID is the tool call it ran, or "".
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Result is what it returned: for an agent's tool call, the tool_result
	// content block.
	Result json.RawMessage `json:"result"`
}

// SubTask reports the finished sub-task a subtask event carries, if it is one.
func (e Event) SubTask() (*SubTask, bool) {
	if e.Event != "subtask" {
		return nil, false
	}
	var s SubTask
	if json.Unmarshal(e.Data, &s) != nil || len(s.Path) == 0 {
		return nil, false
	}
	return &s, true
}

// Result decodes the run answer an end event of a run stream carries.
func (e Event) Result() (*RunResult, error) {
	var r RunResult
	if err := json.Unmarshal(e.Data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
