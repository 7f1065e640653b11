package workloads

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/tool"
)

// AgentApproval is the agent workload, compared with the OpenAI Agents SDK
// (bench/peers/openai-agents/bench.mjs) rather than with LangGraph.
const AgentApproval = "agent_approval"

// AgentNames lists the agent workloads.
var AgentNames = []string{AgentApproval}

// Shop is agent_approval's tools and what they did.
type Shop struct {
	lookups, refunds atomic.Int64
}

type lookupArgs struct {
	OrderID string `json:"order_id"`
}

type refundArgs struct {
	OrderID string  `json:"order_id"`
	Amount  float64 `json:"amount"`
}

// Tools are lookup_order({order_id}) and issue_refund({order_id, amount}).
func (s *Shop) Tools() []tool.Tool {
	return []tool.Tool{
		tool.Func("lookup_order", "Look up an order", func(ctx context.Context, in lookupArgs) (map[string]any, error) {
			s.lookups.Add(1)
			return map[string]any{"order_id": in.OrderID, "total": 150}, nil
		}),
		tool.Func("issue_refund", "Refund an order", func(ctx context.Context, in refundArgs) (string, error) {
			s.refunds.Add(1)
			return fmt.Sprintf("refunded %v on %s", in.Amount, in.OrderID), nil
		}),
	}
}

// NewAgentApproval builds agent_approval: an agent over a scripted model whose
// first turn calls lookup_order 1, lookup_order 2 and issue_refund {order_id
// "1", amount 10} at once and whose second answers "Refunded."; issue_refund
// needs a person's approval.
func NewAgentApproval(st store.Store) (*agent.Agent, *Shop, error) {
	m := scripted.New(
		scripted.Calls(
			scripted.Call("lookup_order", lookupArgs{OrderID: "1"}),
			scripted.Call("lookup_order", lookupArgs{OrderID: "2"}),
			scripted.Call("issue_refund", refundArgs{OrderID: "1", Amount: 10}),
		),
		scripted.Text("Refunded."),
	)
	s := &Shop{}
	a, err := agent.New(m, s.Tools(), agent.RequireApproval("issue_refund"),
		agent.WithGraphOptions(graph.WithStore(st), graph.WithName(AgentApproval)))
	return a, s, err
}

// AgentPause starts agent_approval on a new thread and checks that it pauses on
// the refund's approval alone, the two lookups having run.
func AgentPause(ctx context.Context, a *agent.Agent, s *Shop, threadID string) error {
	before := s.lookups.Load()
	res, err := a.Invoke(ctx, threadID, agent.Ask("refund orders"))
	if err != nil {
		return err
	}
	if res.Status != interlude.RunInterrupted || len(res.Interrupts) != 1 {
		return fmt.Errorf("agent_approval pause: status %s with %d interrupts; want interrupted with 1", res.Status, len(res.Interrupts))
	}
	if n := s.lookups.Load() - before; n != 2 {
		return fmt.Errorf("agent_approval pause: %d lookups ran; want 2", n)
	}
	return nil
}

var approve = graph.Resume(agent.Approve())

// AgentApprove approves the paused refund and checks that the run completes
// with the model's answer, the refund having run once.
func AgentApprove(ctx context.Context, a *agent.Agent, s *Shop, threadID string) error {
	before := s.refunds.Load()
	res, err := a.Invoke(ctx, threadID, approve)
	if err != nil {
		return err
	}
	msgs := res.Values.Messages
	if res.Status != interlude.RunCompleted || len(msgs) != 4 || msgs[3].Role != model.RoleAssistant || msgs[3].Text() != "Refunded." {
		return fmt.Errorf("agent_approval resume: status %s with %d messages; want completed with the answer", res.Status, len(msgs))
	}
	if n := s.refunds.Load() - before; n != 1 {
		return fmt.Errorf("agent_approval resume: %d refunds ran; want 1", n)
	}
	return nil
}

func runAgentApproval(ctx context.Context, st *Store, c Config) (map[string]float64, int, error) {
	a, s, err := NewAgentApproval(st)
	if err != nil {
		return nil, 0, err
	}
	return c.pauseResume("agent",
		func(id string) error { return AgentPause(ctx, a, s, id) },
		func(id string) error { return AgentApprove(ctx, a, s, id) })
}
