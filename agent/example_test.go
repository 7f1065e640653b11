package agent_test

import (
	"context"
	"fmt"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/tool"
)

// An agent whose refund tool needs a person's approval; the person edits the
// amount before approving.
func ExampleNew() {
	type Refund struct {
		OrderID string  `json:"order_id"`
		Amount  float64 `json:"amount"`
	}
	refund := tool.Func("issue_refund", "Refund an order", func(ctx context.Context, r Refund) (string, error) {
		return fmt.Sprintf("refunded $%v on %s", r.Amount, r.OrderID), nil
	})
	m := scripted.New(
		scripted.Calls(scripted.Call("issue_refund", Refund{OrderID: "A-1", Amount: 90})),
		scripted.Text("Refund issued."),
	)
	a, err := agent.New(m, []tool.Tool{refund}, agent.RequireApproval("issue_refund"))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	res, _ := a.Invoke(ctx, "conv", agent.Ask("Refund order A-1"))
	q := res.Interrupts[0]
	fmt.Println(q.Reason, q.ToolCallID != "")
	res, _ = a.Invoke(ctx, "conv", graph.Respond(map[string]interlude.Resolution{q.ID: agent.Edit(Refund{OrderID: "A-1", Amount: 40})}))
	msgs := res.Values.Messages
	fmt.Println(msgs[len(msgs)-2].ToolResults()[0].ContentText())
	fmt.Println(msgs[len(msgs)-1].Text())
	// Output:
	// tool_approval true
	// refunded $40 on A-1
	// Refund issued.
}
