package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/interludehq/interlude/tool"
)

// Func derives the tool's input schema from its Go input type; Run checks the
// arguments against it before calling the function, and turns a refusal or a
// failure into an error result for the model instead of an error.
func ExampleFunc() {
	type Lookup struct {
		OrderID string `json:"order_id" jsonschema:"description=The order's id,minLength=3"`
	}
	lookup := tool.Func("lookup_order", "Look up an order", func(ctx context.Context, in Lookup) (map[string]any, error) {
		return map[string]any{"order_id": in.OrderID, "status": "shipped"}, nil
	})
	fmt.Println(string(lookup.InputSchema()))
	ctx := context.Background()
	res, _ := tool.Run(ctx, lookup, json.RawMessage(`{"order_id":"A-1001"}`))
	fmt.Println(res.Content, res.IsError)
	res, _ = tool.Run(ctx, lookup, json.RawMessage(`{"order_id":"A"}`))
	fmt.Println(res.Content, res.IsError)
	// Output:
	// {"properties":{"order_id":{"type":"string","minLength":3,"description":"The order's id"}},"additionalProperties":false,"type":"object","required":["order_id"]}
	// {"order_id":"A-1001","status":"shipped"} false
	// invalid arguments for lookup_order: /order_id: minLength: got 1, want 3 true
}
