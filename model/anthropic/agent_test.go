package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/internal/wiretest"
	"github.com/interludehq/interlude/store/sqlite"
	"github.com/interludehq/interlude/tool"
)

// TestAgentRunsOnThisProvider runs a whole agent turn cycle over the wire format:
// the model calls lookup_order twice, the agent runs the tool and sends the
// results back, and the model answers with text.
func TestAgentRunsOnThisProvider(t *testing.T) {
	conversation.RunAgent(t)
}

// With extended thinking on, an agent that pauses for approval of the thinking
// turn's tool calls, is restarted over its store and then answered one call at
// a time, does not ask the model again for that turn, and sends the turn's
// thinking back with the tool results.
func TestAgentPausesForApprovalAcrossAThinkingTurn(t *testing.T) {
	thought, redacted := fixtureThinking(t)
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "generate", true: "stream"}[streamed], func(t *testing.T) {
			ctx := context.Background()
			toolCalls, finalText := thinking.Replies(t, streamed)
			srv := wiretest.NewServer(t, toolCalls, finalText)
			path := filepath.Join(t.TempDir(), "agent.db")
			build := func() (*agent.Agent, func()) {
				st, err := sqlite.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				lookup := tool.Func("lookup_order", "Look up an order", func(ctx context.Context, in struct {
					OrderID string `json:"order_id"`
				}) (string, error) {
					return "order " + in.OrderID + " found", nil
				})
				opts := []agent.Option{agent.RequireApproval("lookup_order"), agent.WithGraphOptions(graph.WithStore(st))}
				if !streamed {
					opts = append(opts, agent.WithoutStreaming())
				}
				a, err := agent.New(thinking.NewModel(srv), []tool.Tool{lookup}, opts...)
				if err != nil {
					t.Fatal(err)
				}
				return a, func() { st.Close() }
			}
			a, closeStore := build()
			res, err := a.Invoke(ctx, "t", agent.Ask("Where are orders A-42 and B-7?"))
			if err != nil || res.Status != interlude.RunInterrupted || len(res.Interrupts) != 2 {
				t.Fatalf("%v %+v", err, res)
			}
			closeStore()
			for i, q := range res.Interrupts {
				a, closeStore = build()
				res, err = a.Invoke(ctx, "t", graph.Respond(map[string]interlude.Resolution{q.ID: agent.Approve()}))
				closeStore()
				if err != nil {
					t.Fatal(err)
				}
				if want := []interlude.RunStatus{interlude.RunInterrupted, interlude.RunCompleted}[i]; res.Status != want {
					t.Fatalf("after answer %d: status %s, want %s", i, res.Status, want)
				}
				if want := []int{1, 2}[i]; srv.Hits() != want {
					t.Fatalf("after answer %d: the model was asked %d times, want %d", i, srv.Hits(), want)
				}
			}
			msgs := res.Values.Messages
			if len(msgs) != 4 || msgs[3].Text() != "Order A-42 shipped yesterday with DHL. I could not find order B-7; please check the number." {
				t.Fatalf("messages %+v", msgs)
			}
			kept := msgs[1].Content
			if kept[0].Type != model.BlockThinking || kept[0].Signature != text(t, thought["signature"]) ||
				kept[1].Type != model.BlockRedactedThinking || kept[1].Data != text(t, redacted["data"]) {
				t.Fatalf("the stored turn lost its thinking: %+v", kept[:2])
			}
			var body struct {
				Messages []struct{ Content []map[string]json.RawMessage }
			}
			if err := json.Unmarshal(srv.Requests()[1].Body, &body); err != nil {
				t.Fatal(err)
			}
			sent := body.Messages[1].Content
			if text(t, sent[0]["type"]) != "thinking" || !bytes.Equal(sent[0]["signature"], thought["signature"]) ||
				text(t, sent[0]["thinking"]) != text(t, thought["thinking"]) ||
				text(t, sent[1]["type"]) != "redacted_thinking" || !bytes.Equal(sent[1]["data"], redacted["data"]) ||
				text(t, sent[3]["type"]) != "tool_use" {
				t.Fatalf("the turn went back as %v", sent)
			}
		})
	}
}
