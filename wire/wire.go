// Package wire holds the bodies of the HTTP API's thread and graph routes that
// are not vocabulary of their own: the server encodes them and the Go client
// decodes them, so both share one definition. A run's answer is
// graph.Result; questions, answers and statuses are the root package's types.
package wire

import (
	"encoding/json"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/store"
)

// Thread is a thread's current state: the body of GET /v1/threads/{id}.
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
	// FinishedToolResults are, while an agent's turn waits, the tool_result
	// blocks of its calls that have finished, in call order (empty otherwise).
	// They join Messages, in the turn's tool-result message, once every call
	// of the turn has a result.
	FinishedToolResults []model.Block `json:"finished_tool_results,omitempty"`
	// Interrupts are its pending questions.
	Interrupts []interlude.Interruption `json:"interrupts"`
	// Next lists the nodes that run next.
	Next []string `json:"next"`
	// Breakpoint is set while it sits at a breakpoint.
	Breakpoint *graph.Breakpoint `json:"breakpoint,omitempty"`
	// Error describes the last failure while it is failed.
	Error string `json:"error,omitempty"`
	// Checkpoint is its version.
	Checkpoint int64 `json:"checkpoint"`
	// CreatedAt is when it started.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updated_at"`
	// Subgraphs are the subgraphs waiting in its current step, nested ones
	// included, by namespace (asked for with subgraphs=true only).
	Subgraphs []graph.SubgraphState `json:"subgraphs,omitempty"`
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

// ThreadPage is a page of a listing, newest updated first: the body of
// GET /v1/threads.
type ThreadPage struct {
	// Threads are the threads on this page.
	Threads []ThreadSummary `json:"threads"`
	// NextCursor continues the listing, or "" at its end.
	NextCursor string `json:"next_cursor"`
}

// MarshalJSON encodes the page with next_cursor null at the end of the
// listing, so that a script paging until it is null stops.
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

// History is a page of a thread's history: the body of
// GET /v1/threads/{id}/history.
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
	// NextBefore is the before of the next, older page, or 0 (null in JSON)
	// when this page reaches the thread's first checkpoint.
	NextBefore int64 `json:"next_before"`
}

// MarshalJSON encodes the page with next_before null at the thread's first
// checkpoint.
func (h History) MarshalJSON() ([]byte, error) {
	type plain History
	var next *int64
	if h.NextBefore != 0 {
		next = &h.NextBefore
	}
	return json.Marshal(struct {
		plain
		NextBefore *int64 `json:"next_before"`
	}{plain(h), next})
}

// Checkpoint is one entry of a thread's history as the API shows it: Raised
// with the private state of each question, Resolved with the interrupt id of
// each answer, who gave it and when.
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
	Breakpoint *graph.Breakpoint `json:"breakpoint,omitempty"`
	// Error is the failure a fail checkpoint reports.
	Error string `json:"error,omitempty"`
	// Subgraphs are the subgraph checkpoints it kept, by namespace (asked for
	// with subgraphs=true only).
	Subgraphs []graph.SubgraphState `json:"subgraphs,omitempty"`
	// Escalations are those an "escalate" checkpoint recorded.
	Escalations []graph.Escalation `json:"escalations,omitempty"`
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

// GraphList is the body of GET /v1/graphs.
type GraphList struct {
	// Graphs are the hosted graphs.
	Graphs []GraphInfo `json:"graphs"`
}

// NotificationPage is a page of the delivery log, newest first: the body of GET
// /v1/notifications.
type NotificationPage struct {
	// Notifications are the page's entries.
	Notifications []store.Notice `json:"notifications"`
	// NextBefore continues the listing (?before=), or is nil at its end.
	NextBefore *int64 `json:"next_before"`
	// Enabled says whether the server delivers notifications (it has webhooks,
	// Slack or email configured); when false it queues none. It is nil from a
	// server too old to say.
	Enabled *bool `json:"enabled,omitempty"`
}
