package server

import (
	"bytes"
	"encoding/json"

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

// resultAt shapes a run's result as the API answers it at granularity g: its
// interrupts shown, its error only when it failed, its values and messages
// from partial on, its state at full.
func resultAt(r *graph.Result[json.RawMessage], g granularity) *graph.Result[json.RawMessage] {
	a := &graph.Result[json.RawMessage]{ThreadID: r.ThreadID, Status: r.Status, Interrupts: shownAll(r.Interrupts),
		Breakpoint: r.Breakpoint, Replayed: r.Replayed, Replays: r.Replays}
	if r.Status == interlude.RunFailed {
		a.Error = r.Error
	}
	if g == low {
		return a
	}
	a.Values, a.Next, a.Checkpoint = r.Values, r.Next, r.Checkpoint
	a.Messages = messagesOf(r.Values)
	if g == full {
		a.State = a.Full()
	}
	return a
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

func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
