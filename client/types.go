package client

import (
	"encoding/json"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
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
	Breakpoint *graph.Breakpoint `json:"breakpoint,omitempty"`
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
func (e Event) Result() (*graph.Result[json.RawMessage], error) {
	var r graph.Result[json.RawMessage]
	if err := json.Unmarshal(e.Data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
