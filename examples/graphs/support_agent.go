package graphs

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/tool"
)

// LookupArgs are the arguments of lookup_order.
type LookupArgs struct {
	// OrderID names the order.
	OrderID string `json:"order_id" jsonschema:"description=The order number, such as A-1001"`
}

// Order is what lookup_order returns.
type Order struct {
	// OrderID is the order number, such as A-1001.
	OrderID string `json:"order_id"`
	// Customer names who placed the order.
	Customer string `json:"customer"`
	// Total is the amount paid for the order, in dollars.
	Total float64 `json:"total"`
	// Status is where the order stands, such as "delivered".
	Status string `json:"status"`
}

// RefundArgs are the arguments of issue_refund.
type RefundArgs struct {
	// OrderID names the order to refund.
	OrderID string `json:"order_id" jsonschema:"description=The order number"`
	// Amount is the refund in dollars.
	Amount float64 `json:"amount" jsonschema:"description=Refund amount in dollars,exclusiveMinimum=0,maximum=10000"`
	// Reason explains the refund to the customer.
	Reason string `json:"reason,omitempty" jsonschema:"description=Why the refund is given"`
}

// SupportTools returns the support agent's tools: lookup_order, which is free, and
// issue_refund, which the agent only runs once a person approves it.
func SupportTools() []tool.Tool {
	return []tool.Tool{
		tool.Func("lookup_order", "Look up an order by its number.", func(ctx context.Context, in LookupArgs) (Order, error) {
			return Order{OrderID: in.OrderID, Customer: "Sam Lee", Total: 150, Status: "delivered"}, nil
		}),
		tool.Func("issue_refund", "Refund part or all of an order to the customer's card.", func(ctx context.Context, in RefundArgs) (string, error) {
			return fmt.Sprintf("Refunded %s on order %s.", Dollars(in.Amount), in.OrderID), nil
		}),
	}
}

// SupportAgent builds the support agent on m, or on SupportScript when m is nil.
// issue_refund asks for approval: approve, edit, reject or respond.
func SupportAgent(m model.Model, opts ...graph.Option) (*agent.Agent, error) {
	if m == nil {
		m = SupportScript()
	}
	return agent.New(m, SupportTools(),
		agent.WithSystemPrompt("You are a customer-support agent. Look orders up before refunding them; refunds need a person's approval."),
		agent.WithMaxTurns(10), // per run: one message and the tool calls it leads to
		agent.RequireApproval("issue_refund", agent.WithQuestion(func(c agent.Call) string {
			var a RefundArgs
			if json.Unmarshal(c.Arguments, &a) != nil {
				return "Approve this refund?"
			}
			return fmt.Sprintf("Approve a refund of %s for order %s?", Dollars(a.Amount), a.OrderID)
		})),
		agent.WithGraphOptions(append([]graph.Option{graph.WithName("support-agent")}, opts...)...),
	)
}

var (
	// An order number as people write it: "order Z-9", "order #1234", "order no. 77",
	// or a number shaped like A-1001 anywhere in the message.
	orderAfterWord = regexp.MustCompile(`(?i)\border\s*(?:#|no\.?|number)?\s*:?\s*#?([a-z0-9][a-z0-9-]*)`)
	orderAlone     = regexp.MustCompile(`(?i)(?:#(\d+)\b|\b([a-z]{1,3}-?\d+)\b)`)
	amountPattern  = regexp.MustCompile(`\$(\d+(?:\.\d+)?)`)
)

// orderNumber finds the order a message is about, or "" when it names none.
func orderNumber(text string) string {
	if m := orderAfterWord.FindStringSubmatch(text); m != nil && strings.ContainsAny(m[1], "0123456789") {
		return strings.ToUpper(m[1])
	}
	if m := orderAlone.FindStringSubmatch(text); m != nil {
		return strings.ToUpper(m[1] + m[2])
	}
	return ""
}

// SupportScript is the deterministic model the built-in support agent runs on: asked
// for a refund of an order it can name, it looks the order up and issues the refund
// in one turn (the amount taken from the message, $150 by default), then reports
// what the tools said. Asked for a refund without an order number, it asks for one.
func SupportScript() *scripted.Model {
	return scripted.Func(func(ctx context.Context, req *model.Request) (model.Message, error) {
		last := req.Messages[len(req.Messages)-1]
		if results := last.ToolResults(); len(results) > 0 {
			return model.AssistantText(summary(results)), nil
		}
		text := last.Text()
		if !strings.Contains(strings.ToLower(text), "refund") {
			return model.AssistantText("I can look up orders and issue refunds. Which order is it about?"), nil
		}
		order := orderNumber(text)
		if order == "" {
			return model.AssistantText("Which order should I refund? Give me its number, such as A-1001."), nil
		}
		amount := 150.0
		if m := amountPattern.FindStringSubmatch(text); m != nil {
			amount, _ = strconv.ParseFloat(m[1], 64)
		}
		lookup, _ := json.Marshal(LookupArgs{OrderID: order})
		refund, _ := json.Marshal(RefundArgs{OrderID: order, Amount: amount, Reason: "customer request"})
		return model.Message{Role: model.RoleAssistant, Content: []model.Block{
			model.TextBlock("Let me look up the order and issue the refund."),
			model.ToolUse("", "lookup_order", lookup),
			model.ToolUse("", "issue_refund", refund),
		}}, nil
	})
}

func summary(results []model.Block) string {
	refund := results[len(results)-1]
	text := refund.ContentText()
	switch {
	case refund.IsError && text == "":
		return "The refund was not issued."
	case refund.IsError:
		return "I could not issue the refund: " + text
	}
	return "Done: " + text
}

// Dollars writes an amount as people write money: "$150" for whole dollars,
// "$89.50" otherwise.
func Dollars(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return "$" + strconv.FormatFloat(v, 'f', 0, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 2, 64)
}
