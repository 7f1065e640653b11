package openai_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/internal/wiretest"
	"github.com/interludehq/interlude/tool"
)

// TestAgentRunsOnThisProvider runs a whole agent turn cycle over the wire format:
// the model calls lookup_order twice, the agent runs the tool and sends the
// results back, and the model answers with text.
func TestAgentRunsOnThisProvider(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		name := map[bool]string{false: "generate", true: "stream"}[streamed]
		t.Run(name, func(t *testing.T) {
			replies := []wiretest.Reply{wiretest.File(t, 200, "chat_tool_calls.json"), wiretest.File(t, 200, "chat_final_text.json")}
			if streamed {
				replies = []wiretest.Reply{
					wiretest.File(t, 200, "stream_tool_calls.sse"),
					wiretest.File(t, 200, "stream_final_text.sse"),
				}
			}
			srv := wiretest.NewServer(t, replies...)
			var mu sync.Mutex
			var looked []string
			lookup := tool.Func("lookup_order", "Look up an order", func(ctx context.Context, in struct {
				OrderID string `json:"order_id"`
			}) (string, error) {
				mu.Lock() // the agent runs a turn's tool calls in parallel
				looked = append(looked, in.OrderID)
				mu.Unlock()
				return "order " + in.OrderID + " found", nil
			})
			opts := []agent.Option{}
			if !streamed {
				opts = append(opts, agent.WithoutStreaming())
			}
			a, err := agent.New(newModel(srv), []tool.Tool{lookup}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Invoke(context.Background(), "t", agent.Ask("Where are orders A-42 and B-7?"))
			if err != nil || res.Status != graph.Completed {
				t.Fatalf("%v %+v", err, res)
			}
			msgs := res.Values.Messages
			slices.Sort(looked)
			if len(msgs) != 4 || len(looked) != 2 || looked[0] != "A-42" || looked[1] != "B-7" {
				t.Fatalf("%d messages, lookups %v", len(msgs), looked)
			}
			if got := msgs[3].Text(); got != "Order A-42 shipped yesterday with DHL. I could not find order B-7; please check the number." {
				t.Fatalf("final text %q", got)
			}
			sent := srv.Requests()
			if len(sent) != 2 {
				t.Fatalf("%d requests, want 2", len(sent))
			}
			results := msgs[2].ToolResults()
			if len(results) != 2 || results[0].ToolUseID != msgs[1].ToolUses()[0].ID || msgs[2].Role != model.RoleUser {
				t.Fatalf("tool results %+v", results)
			}
		})
	}
}
