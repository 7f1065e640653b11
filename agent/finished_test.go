package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/store/memory"
)

// streamed is what one Stream call reported, in order.
type streamed struct {
	finished   []model.Block // FinishedToolResult of each event, in order
	interrupts []interlude.Interruption
	firstPause int // index in finished of the first interrupt event (len(finished) if none)
	updated    []model.Block
}

func streamOf(t *testing.T, a *agent.Agent, thread string, cmd graph.Command) streamed {
	t.Helper()
	var s streamed
	s.firstPause = -1
	for ev, err := range a.Stream(context.Background(), thread, cmd) {
		if err != nil {
			t.Fatal(err)
		}
		if b, ok := agent.FinishedToolResult(ev); ok {
			s.finished = append(s.finished, b)
		}
		switch ev.Type {
		case graph.EventInterrupt:
			if s.firstPause < 0 {
				s.firstPause = len(s.finished)
			}
			s.interrupts = append(s.interrupts, *ev.Interrupt)
		case graph.EventUpdate:
			if ev.Node == agent.ToolsNode {
				var u agent.State
				if err := json.Unmarshal(ev.Update, &u); err != nil {
					t.Fatal(err)
				}
				for _, m := range u.Messages {
					s.updated = append(s.updated, toolResults(m)...)
				}
			}
		}
	}
	if s.firstPause < 0 {
		s.firstPause = len(s.finished)
	}
	return s
}

func TestAPausedTurnShowsItsFinishedLookupAndStreamsItOnce(t *testing.T) {
	ctx := context.Background()
	m := scripted.New(
		scripted.Calls(
			scripted.Call("lookup_order", lookupArgs{OrderID: "A-1001"}),
			scripted.Call("issue_refund", refundArgs{OrderID: "A-1001", Amount: 150}),
		),
		scripted.Text("Refunded."),
	)
	st := memory.New()
	s := newShop()
	a := newAgent(t, m, s, st)

	first := streamOf(t, a, "t1", agent.Ask("Please refund order A-1001"))
	if len(first.interrupts) != 1 {
		t.Fatalf("want the refund's approval pending, got %d interrupts", len(first.interrupts))
	}
	refundID := first.interrupts[0].ToolCallID
	if len(first.finished) != 1 || first.finished[0].ToolUseID == refundID || first.firstPause != 1 {
		t.Fatalf("want the lookup's result reported once, before the pause; got %+v (pause after %d)", first.finished, first.firstPause)
	}
	lookup := first.finished[0]
	if lookup.ContentText() != `{"order_id":"A-1001","total":150}` || lookup.IsError {
		t.Fatalf("lookup result = %+v", lookup)
	}
	if len(first.updated) != 0 {
		t.Fatalf("the tools node's update came before the turn completed: %+v", first.updated)
	}

	// A process that did not run the turn reads the same from the store.
	for name, reader := range map[string]*agent.Agent{"same agent": a, "fresh agent": newAgent(t, m, newShop(), st)} {
		snap, err := reader.State(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Finished) != 1 || snap.Finished[0].ToolCallID != lookup.ToolUseID {
			t.Fatalf("%s: snapshot Finished = %+v, want the lookup by its tool call id", name, snap.Finished)
		}
		got := agent.FinishedToolResults(snap)
		if len(got) != 1 || got[0].ToolUseID != lookup.ToolUseID || got[0].ContentText() != lookup.ContentText() {
			t.Fatalf("%s: FinishedToolResults = %+v, want the lookup", name, got)
		}
		for _, msg := range snap.Values.Messages {
			if len(toolResults(msg)) > 0 {
				t.Fatalf("%s: a tool result reached the transcript before the turn completed", name)
			}
		}
	}

	second := streamOf(t, a, "t1", graph.Respond(map[string]interlude.Resolution{first.interrupts[0].ID: agent.Approve()}))
	for _, b := range second.finished {
		if b.ToolUseID == lookup.ToolUseID {
			t.Fatal("the lookup's result was reported again when the step re-ran from its ledger")
		}
	}
	if len(second.finished) != 1 || second.finished[0].ToolUseID != refundID {
		t.Fatalf("want the refund reported as it finished; got %+v", second.finished)
	}
	if len(second.updated) != 2 || second.updated[0].ToolUseID != lookup.ToolUseID || second.updated[1].ToolUseID != refundID {
		t.Fatalf("the turn's update carries %+v, want both results in call order", second.updated)
	}
	if s.lookups.Load() != 1 {
		t.Fatalf("lookup ran %d times", s.lookups.Load())
	}
	snap, err := a.State(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Finished) != 0 || agent.FinishedToolResults(snap) != nil {
		t.Fatalf("a completed turn still lists finished results: %+v", snap.Finished)
	}
}
