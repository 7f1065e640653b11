package host

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// Outcome returns the result of a streamed run of g on the thread from its end
// event, which usually carries it. An end event without values is read as of
// its checkpoint (from the history if the thread has moved on since); without
// an end event the thread is read as it is now. On an error the result still
// has what the end event said.
func Outcome(ctx context.Context, g graph.Erased, threadID string, end *graph.Event) (*graph.Result[json.RawMessage], error) {
	res := &graph.Result[json.RawMessage]{ThreadID: threadID, Status: interlude.RunFailed}
	if end != nil {
		res.Status, res.Checkpoint = end.Status, end.Checkpoint
		if end.Values != nil {
			res.Values, res.Next, res.Interrupts, res.Breakpoint, res.Error = end.Values, end.Next, end.Interrupts, end.Breakpoint, end.Error
			return res, nil
		}
	}
	snap, err := g.State(ctx, threadID)
	if err != nil {
		return res, err
	}
	if end == nil || snap.Checkpoint == end.Checkpoint {
		res.Values, res.Next, res.Interrupts, res.Breakpoint, res.Error, res.Checkpoint =
			snap.Values, snap.Next, snap.Interrupts, snap.Breakpoint, snap.Error, snap.Checkpoint
		if end == nil {
			res.Status = snap.Status.Outcome()
		}
		return res, nil
	}
	cps, err := g.History(ctx, threadID, graph.HistoryOptions{Before: end.Checkpoint + 1, Limit: 1})
	if err != nil {
		return res, err
	}
	if len(cps) == 0 || cps[0].ID != end.Checkpoint {
		return res, errors.New("the checkpoint of the stream's end is not in the thread's history")
	}
	c := cps[0]
	res.Values, res.Next, res.Interrupts, res.Breakpoint, res.Error = c.Values, c.Next, c.Interrupts, c.Breakpoint, c.Error
	return res, nil
}

// ToolCalls groups the questions a page of history (newest first) raises or
// answers by the tool call that asked them: each with its questions in the
// order asked and the answers the page gives.
func ToolCalls[S any](cps []graph.Checkpoint[S]) map[string][]interlude.Exchange {
	out := map[string][]interlude.Exchange{}
	type place struct {
		call string
		i    int
	}
	where := map[string]place{} // interrupt id -> its entry
	asked := func(q interlude.Interruption) {
		if _, seen := where[q.ID]; q.ToolCallID == "" || seen {
			return
		}
		where[q.ID] = place{q.ToolCallID, len(out[q.ToolCallID])}
		out[q.ToolCallID] = append(out[q.ToolCallID], interlude.Exchange{Interrupt: q})
	}
	for i := len(cps) - 1; i >= 0; i-- {
		for _, a := range cps[i].Resolved {
			if a.Interrupt.Node != "" { // raised before the page, perhaps
				asked(a.Interrupt)
			}
			if p, ok := where[a.Interrupt.ID]; ok {
				out[p.call][p.i].Resolution = a.Resolution
			}
		}
		for _, q := range cps[i].Raised {
			asked(q)
		}
	}
	for _, xs := range out {
		slices.SortStableFunc(xs, func(a, b interlude.Exchange) int { return a.Interrupt.CreatedAt.Compare(b.Interrupt.CreatedAt) })
	}
	return out
}
