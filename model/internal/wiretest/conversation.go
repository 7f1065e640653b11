package wiretest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/tool"
)

// FastRetry is a header pair for File: it asks for a 1 ms pause before a retry,
// the way real servers ask for longer ones, so retries stay fast.
var FastRetry = []string{"Retry-After-Ms", "1"}

// FirstRequest returns the opening request of the canned conversation every
// provider's fixtures answer: a customer asks about orders A-42 and B-7 and the
// model may call lookup_order. The model then calls lookup_order for both orders
// and, given the results, answers in text.
func FirstRequest() *model.Request {
	temp := 0.2
	return &model.Request{
		System:   "You help customers with their orders.",
		Messages: []model.Message{model.UserText("Where are orders A-42 and B-7?")},
		Tools: []model.ToolSpec{{
			Name:        "lookup_order",
			Description: "Look up an order by its id.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string","description":"The order id, like A-42."}},"required":["order_id"],"additionalProperties":false}`),
		}},
		MaxTokens:   300,
		Temperature: &temp,
	}
}

// Answer runs one request on m, streamed (and collected) or not.
func Answer(t testing.TB, m model.Model, req *model.Request, stream bool) (*model.Response, error) {
	t.Helper()
	if stream {
		return model.Collect(m.Stream(context.Background(), req))
	}
	return m.Generate(context.Background(), req)
}

// Conversation is what the checks of the canned conversation need to know about
// one provider.
type Conversation struct {
	// ToolCalls and FinalText name the fixtures of the model's two answers, not
	// streamed; streamed, they are StreamToolCalls and stream_final_text.sse.
	ToolCalls, FinalText string
	// StreamToolCalls names the fixture of the streamed first answer;
	// stream_tool_calls.sse when empty.
	StreamToolCalls string
	// Golden is the prefix of the golden request files of the round trip;
	// tool_roundtrip when empty.
	Golden string
	// Request returns the round trip's opening request; FirstRequest when nil.
	Request func() *model.Request
	// EditReply, when set, changes the model's first answer before it goes
	// back in the second request.
	EditReply func(*model.Message)
	// Path is the URL path the provider posts its requests to.
	Path string
	// NewModel returns the provider's model talking to srv.
	NewModel func(srv *Server) model.Model
	// WantFinalText fails the test unless resp is the provider's final answer,
	// usage and model name included.
	WantFinalText func(t *testing.T, resp *model.Response)
}

// Replies returns the replies carrying the model's two answers, streamed or not.
func (c Conversation) Replies(t testing.TB, stream bool) (toolCalls, finalText Reply) {
	t.Helper()
	if stream {
		name := c.StreamToolCalls
		if name == "" {
			name = "stream_tool_calls.sse"
		}
		return File(t, 200, name), File(t, 200, "stream_final_text.sse")
	}
	return File(t, 200, c.ToolCalls), File(t, 200, c.FinalText)
}

// RoundTrip plays the full exchange: the model calls two tools, the results
// (one failed) go back, the model answers. It returns what the client sent.
func (c Conversation) RoundTrip(t *testing.T, stream bool) []Request {
	t.Helper()
	toolCalls, finalText := c.Replies(t, stream)
	srv := NewServer(t, toolCalls, finalText)
	m := c.NewModel(srv)

	req := FirstRequest()
	if c.Request != nil {
		req = c.Request()
	}
	resp, err := Answer(t, m, req, stream)
	if err != nil {
		t.Fatal(err)
	}
	if c.EditReply != nil {
		c.EditReply(&resp.Message)
	}
	calls := resp.Message.ToolUses()
	req.Messages = append(req.Messages, resp.Message, model.Message{Role: model.RoleUser, Content: []model.Block{
		model.ToolResult(calls[0].ID, `{"status":"shipped","carrier":"DHL","shipped_at":"2025-07-06"}`, false),
		model.ToolResult(calls[1].ID, "order B-7 not found", true),
	}})
	// The agent's interrupt history rides along on the result; it must not reach the model.
	req.Messages[2].Content[0].Interrupts = json.RawMessage(`[{"id":"int_1","resolution":"resume"}]`)
	resp, err = Answer(t, m, req, stream)
	if err != nil {
		t.Fatal(err)
	}
	c.WantFinalText(t, resp)

	sent := srv.Requests()
	if len(sent) != 2 {
		t.Fatalf("server got %d requests, want 2", len(sent))
	}
	for _, r := range sent {
		if r.Method != http.MethodPost || r.Path != c.Path {
			t.Fatalf("request to %s %s", r.Method, r.Path)
		}
		if strings.Contains(string(r.Body), "int_1") {
			t.Fatal("interrupt history was sent to the model")
		}
	}
	return sent
}

// RunAgent runs a whole agent turn cycle over the wire format, generated and
// streamed: the model calls lookup_order twice, the agent runs the tool and sends
// the results back, and the model answers with text.
func (c Conversation) RunAgent(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		name := map[bool]string{false: "generate", true: "stream"}[streamed]
		t.Run(name, func(t *testing.T) {
			toolCalls, finalText := c.Replies(t, streamed)
			srv := NewServer(t, toolCalls, finalText)
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
			a, err := agent.New(c.NewModel(srv), []tool.Tool{lookup}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Invoke(context.Background(), "t", agent.Ask("Where are orders A-42 and B-7?"))
			if err != nil || res.Status != interlude.RunCompleted {
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
