package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
)

// shown is an interrupt as the API shows it outside a thread's history: without
// State, the interrupting code's private state, or Trace, the span context the
// runtime keeps for the run that answers it.
func shown(q interlude.Interruption) interlude.Interruption {
	q.State, q.Trace = nil, ""
	return q
}

// shownAll is shown for each interrupt; it is never nil, so the API answers [].
func shownAll(qs []interlude.Interruption) []interlude.Interruption {
	out := make([]interlude.Interruption, len(qs))
	for i, q := range qs {
		out[i] = shown(q)
	}
	return out
}

// runResponse is the response of invoke and the thread answer routes, and the
// data of a stream's end event.
type runResponse struct {
	ThreadID   string                   `json:"thread_id"`
	Status     interlude.RunStatus      `json:"status"`
	Interrupts []interlude.Interruption `json:"interrupts"`
	Breakpoint *graph.Breakpoint        `json:"breakpoint,omitempty"`
	Error      string                   `json:"error,omitempty"`
	Values     json.RawMessage          `json:"values,omitempty"`
	Messages   json.RawMessage          `json:"messages,omitempty"`
	State      *fullState               `json:"state,omitempty"`
	// Replayed is true when every answer the request gave had been given
	// before: none was applied again, and Replays says who gave them and when.
	Replayed bool                   `json:"replayed,omitempty"`
	Replays  []interlude.Resolution `json:"replays,omitempty"`
}

// fullState is the "state" of a run response at response_granularity full.
type fullState struct {
	Values        json.RawMessage `json:"values"`
	Next          []string        `json:"next"`
	Checkpoint    int64           `json:"checkpoint"`
	ExecutionMeta executionMeta   `json:"execution_meta"`
}

// executionMeta says where and why a thread paused, in the full response's state.
type executionMeta struct {
	// Status is completed, failed, interrupted_before (the paused node runs again
	// when answered, or the thread waits before a node) or interrupted_after.
	Status          string         `json:"status"`
	InterruptReason string         `json:"interrupt_reason,omitempty"`
	InterruptedNode string         `json:"interrupted_node,omitempty"`
	InterruptData   *interruptData `json:"interrupt_data,omitempty"`
}

type interruptData struct {
	Interrupt  *interlude.Interruption `json:"interrupt"`
	Breakpoint *graph.Breakpoint       `json:"breakpoint,omitempty"`
}

// outcome is what a run response is built from.
type outcome struct {
	threadID   string
	status     interlude.RunStatus
	values     json.RawMessage
	next       []string
	interrupts []interlude.Interruption
	breakpoint *graph.Breakpoint
	err        string
	checkpoint int64
	replayed   []interlude.Resolution
}

func outcomeOf(r *graph.Result[json.RawMessage]) outcome {
	return outcome{threadID: r.ThreadID, status: r.Status, values: r.Values, next: r.Next, interrupts: r.Interrupts,
		breakpoint: r.Breakpoint, err: r.Error, checkpoint: r.Checkpoint, replayed: r.Replayed}
}

func (o outcome) response(g granularity) *runResponse {
	a := &runResponse{ThreadID: o.threadID, Status: o.status, Interrupts: shownAll(o.interrupts), Breakpoint: o.breakpoint, Replays: o.replayed}
	if o.status == interlude.RunFailed {
		a.Error = o.err
	}
	if g == low {
		return a
	}
	a.Values = o.values
	a.Messages = messagesOf(o.values)
	if g == full {
		next := o.next
		if next == nil {
			next = []string{}
		}
		a.State = &fullState{Values: o.values, Next: next, Checkpoint: o.checkpoint, ExecutionMeta: o.meta()}
	}
	return a
}

func (o outcome) meta() executionMeta {
	switch {
	case len(o.interrupts) > 0:
		q := shown(o.interrupts[0])
		reason := q.Reason
		if reason == "" {
			reason = "interrupt"
		}
		return executionMeta{Status: "interrupted_before", InterruptReason: reason, InterruptedNode: q.Node,
			InterruptData: &interruptData{Interrupt: &q}}
	case o.breakpoint != nil:
		return executionMeta{Status: "interrupted_" + o.breakpoint.When, InterruptReason: "interrupt", InterruptedNode: o.breakpoint.Node,
			InterruptData: &interruptData{Breakpoint: o.breakpoint}}
	case o.status == interlude.RunFailed:
		return executionMeta{Status: "failed"}
	}
	return executionMeta{Status: "completed"}
}

var messagesKey = []byte(`"messages"`)

// finishedToolResults returns the results of the finished tool calls of an
// agent thread's waiting turn: snap's finished sub-tasks that are the agent's
// tool calls of the last message, in call order. It reads the messages only
// when the step has finished sub-tasks.
func finishedToolResults(snap *graph.Snapshot[json.RawMessage], messages json.RawMessage) []model.Block {
	if len(snap.Finished) == 0 || len(messages) == 0 {
		return nil
	}
	var st agent.State
	if json.Unmarshal(messages, &st.Messages) != nil {
		return nil
	}
	return agent.FinishedToolResults(&graph.Snapshot[agent.State]{Values: st, Finished: snap.Finished})
}

// messagesOf returns the "messages" field of a values object, if it has one.
func messagesOf(values json.RawMessage) json.RawMessage {
	if !bytes.Contains(values, messagesKey) {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(values, &m) != nil {
		return nil
	}
	return m["messages"]
}

// threadResponse is the response of GET /v1/threads/{id}.
type threadResponse struct {
	ThreadID string                 `json:"thread_id"`
	Graph    string                 `json:"graph"`
	Status   interlude.ThreadStatus `json:"status"`
	Values   json.RawMessage        `json:"values"`
	Messages json.RawMessage        `json:"messages,omitempty"`
	// FinishedToolResults are, while an agent's turn waits, the tool-result
	// blocks of its calls that have finished, in call order: they join
	// Messages, in the turn's tool-result message, once every call has one.
	FinishedToolResults []model.Block            `json:"finished_tool_results,omitempty"`
	Interrupts          []interlude.Interruption `json:"interrupts"`
	Next                []string                 `json:"next"`
	Breakpoint          *graph.Breakpoint        `json:"breakpoint,omitempty"`
	Error               string                   `json:"error,omitempty"`
	Checkpoint          int64                    `json:"checkpoint"`
	CreatedAt           time.Time                `json:"created_at"`
	UpdatedAt           time.Time                `json:"updated_at"`
}

// threadSummary is a thread in a listing.
type threadSummary struct {
	ThreadID   string                   `json:"thread_id"`
	Graph      string                   `json:"graph"`
	Status     interlude.ThreadStatus   `json:"status"`
	Interrupts []interlude.Interruption `json:"interrupts"`
	CreatedAt  time.Time                `json:"created_at"`
	UpdatedAt  time.Time                `json:"updated_at"`
}

type threadPage struct {
	Threads    []threadSummary `json:"threads"`
	NextCursor *string         `json:"next_cursor"`
}

// wireCheckpoint is a checkpoint as history shows it: Raised with the private
// state of each question, Resolved with the interrupt id of each answer.
type wireCheckpoint struct {
	ID         int64                    `json:"id"`
	Kind       string                   `json:"kind"`
	At         time.Time                `json:"at"`
	Status     interlude.ThreadStatus   `json:"status"`
	Step       int                      `json:"step"`
	Next       []string                 `json:"next"`
	Values     json.RawMessage          `json:"values"`
	Raised     []interlude.Interruption `json:"raised"`
	Resolved   []interlude.Resolution   `json:"resolved"`
	Interrupts []interlude.Interruption `json:"interrupts"`
	Breakpoint *graph.Breakpoint        `json:"breakpoint,omitempty"`
	Error      string                   `json:"error,omitempty"`
	// Escalations are those an "escalate" checkpoint recorded.
	Escalations []graph.Escalation `json:"escalations,omitempty"`
}

// historyResponse is the response of GET /v1/threads/{id}/history.
type historyResponse struct {
	ThreadID    string                          `json:"thread_id"`
	Graph       string                          `json:"graph"`
	Checkpoints []wireCheckpoint                `json:"checkpoints"`
	ToolCalls   map[string][]interlude.Exchange `json:"tool_calls"`
	NextBefore  *int64                          `json:"next_before"` // the next page's before, null at the first checkpoint
}

type graphInfo struct {
	Name        string          `json:"name"`
	Nodes       []string        `json:"nodes"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type graphList struct {
	Graphs []graphInfo `json:"graphs"`
}

func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// writeJSON writes v as the JSON response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data, _ = json.Marshal(errorBody{Error: errorObject{Code: codeInternal, Message: "the response could not be encoded as JSON: " + err.Error()}})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}
