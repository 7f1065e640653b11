package model_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/scripted"
)

// A tool round trip: the model calls a tool, the caller runs it and sends the
// result back, and the model answers. Any model.Model works the same way; a
// scripted model keeps the example deterministic.
func Example() {
	var m model.Model = scripted.New(
		scripted.Calls(scripted.Call("lookup_order", map[string]string{"order_id": "A-42"})),
		scripted.Text("Order A-42 shipped yesterday."),
	)
	ctx := context.Background()
	req := &model.Request{
		System:   "You help customers with their orders.",
		Messages: []model.Message{model.UserText("Where is order A-42?")},
		Tools: []model.ToolSpec{{
			Name:        "lookup_order",
			Description: "Look up an order by id.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`),
		}},
	}

	resp, err := m.Generate(ctx, req)
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.StopReason)
	req.Messages = append(req.Messages, resp.Message)
	var results []model.Block
	for _, call := range resp.Message.ToolUses() {
		fmt.Printf("call %s %s %s\n", call.ID, call.Name, call.Input)
		results = append(results, model.ToolResult(call.ID, `{"status":"shipped"}`, false))
	}
	req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Content: results})

	// Stream the final answer and collect it.
	resp, err = model.Collect(m.Stream(ctx, req))
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.StopReason, resp.Message.Text())
	// Output:
	// tool_use
	// call call_0_0 lookup_order {"order_id":"A-42"}
	// end_turn Order A-42 shipped yesterday.
}
