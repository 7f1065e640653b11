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
	"github.com/interludehq/interlude/tool"
)

// turnsScript makes a call of name with args on each of its first n turns of a
// conversation, then answers "done".
func turnsScript(n int, name string, args any) *scripted.Model {
	return scripted.Func(func(ctx context.Context, req *model.Request) (model.Message, error) {
		if scripted.TurnIndex(req) < n {
			data, _ := json.Marshal(args)
			return model.Message{Role: model.RoleAssistant, Content: []model.Block{model.ToolUse("", name, data)}}, nil
		}
		return model.AssistantText("done"), nil
	})
}

func TestAStickyApprovalInsideAnAgentToolHoldsForThatInvocationOnly(t *testing.T) {
	ctx := context.Background()
	s := newShop()
	inner, err := agent.New(turnsScript(2, "issue_refund", refundArgs{OrderID: "42", Amount: 10}), s.tools(), agent.RequireApproval("issue_refund"))
	if err != nil {
		t.Fatal(err)
	}
	outer, err := agent.New(turnsScript(2, "billing", agent.TaskArgs{Task: "refund 42"}),
		[]tool.Tool{agent.AsTool(inner, "billing", "billing")}, agent.WithGraphOptions(graph.WithStore(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	res, err := outer.Invoke(ctx, "sticky", agent.Ask("refund twice, twice"))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	first := res.Interrupts[0]
	// Approved for the rest of the first billing invocation: its second refund
	// is not asked about, but the second invocation's first refund is.
	res, err = outer.Invoke(ctx, "sticky", graph.Resume(agent.ApproveForRun()))
	if err != nil || len(res.Interrupts) != 1 || res.Interrupts[0].Path[1] == first.Path[1] {
		t.Fatalf("after a sticky approval: %v %+v", err, res)
	}
	if got := s.refunds.Load(); got != 2 {
		t.Fatalf("%d refunds ran after the sticky approval, want 2 (both of the first invocation)", got)
	}
	res, err = outer.Invoke(ctx, "sticky", graph.Resume(agent.Approve()))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("a plain approval must leave the next call asked: %v %+v", err, res)
	}
	res, err = outer.Invoke(ctx, "sticky", graph.Resume(agent.Approve()))
	if err != nil || res.Status != interlude.RunCompleted || s.refunds.Load() != 4 {
		t.Fatalf("%v %+v, %d refunds", err, res, s.refunds.Load())
	}
	if len(res.Values.Subagents) != 2 {
		t.Fatalf("%d inner transcripts kept, want one per billing call", len(res.Values.Subagents))
	}
}
