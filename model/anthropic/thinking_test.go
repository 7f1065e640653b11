package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/anthropic"
	"github.com/interludehq/interlude/model/internal/wiretest"
)

// thinkingOn turns extended thinking on, the way users do.
var thinkingOn = anthropic.WithRequestOptions(option.WithJSONSet("thinking", map[string]any{"type": "enabled", "budget_tokens": 1024}))

// thinkingRequest is the canned conversation's opening request as the API
// takes it with thinking on: a token cap above the thinking budget and no
// temperature.
func thinkingRequest() *model.Request {
	req := wiretest.FirstRequest()
	req.MaxTokens = 2048
	req.Temperature = nil
	return req
}

// thinking is the canned conversation with extended thinking: the first
// answer thinks (in the open and redacted) before calling the tools.
var thinking = wiretest.Conversation{
	ToolCalls:       "messages_thinking_tool_calls.json",
	FinalText:       "messages_final_text.json",
	StreamToolCalls: "stream_thinking_tool_calls.sse",
	Golden:          "thinking_roundtrip",
	Request:         thinkingRequest,
	Path:            "/v1/messages",
	NewModel:        func(srv *wiretest.Server) model.Model { return newModel(srv, thinkingOn) },
	WantFinalText:   wantFinalText,
}

// fixtureThinking returns the thinking block and the redacted thinking block
// of the non-streamed fixture, as the API sent them (each field's raw JSON).
func fixtureThinking(t *testing.T) (thought, redacted map[string]json.RawMessage) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", thinking.ToolCalls))
	if err != nil {
		t.Fatal(err)
	}
	var msg struct{ Content []map[string]json.RawMessage }
	if err := json.Unmarshal(data, &msg); err != nil {
		t.Fatal(err)
	}
	return msg.Content[0], msg.Content[1]
}

func text(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return s
}

func TestThinkingIsKeptInOrderGeneratedAndStreamed(t *testing.T) {
	thought, redacted := fixtureThinking(t)
	want := `{"message":{"role":"assistant","content":[` +
		`{"type":"thinking","thinking":` + string(mustMarshal(t, text(t, thought["thinking"]))) + `,"signature":` + string(thought["signature"]) + `},` +
		`{"type":"redacted_thinking","data":` + string(redacted["data"]) + `},` +
		`{"type":"text","text":"I'll look up both orders."},` +
		`{"type":"tool_use","id":"toolu_01Xq4hZ7wNc2Lp9sTf3bKm8R","name":"lookup_order","input":{"order_id":"A-42"}},` +
		`{"type":"tool_use","id":"toolu_01Bv6nR3kYt8Wq2mHc5dJx9L","name":"lookup_order","input":{"order_id":"B-7"}}]},` +
		`"usage":{"input_tokens":436,"output_tokens":231},"stop_reason":"tool_use","model":"claude-sonnet-4-5-20250929"}`
	for _, stream := range []bool{false, true} {
		toolCalls, _ := thinking.Replies(t, stream)
		srv := wiretest.NewServer(t, toolCalls)
		resp, err := wiretest.Answer(t, thinking.NewModel(srv), thinkingRequest(), stream)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(mustMarshal(t, resp)); got != want {
			t.Fatalf("stream=%v:\ngot  %s\nwant %s", stream, got, want)
		}
		if resp.Message.Text() != "I'll look up both orders." {
			t.Fatalf("stream=%v: thinking shows in the text: %q", stream, resp.Message.Text())
		}
	}
}

func TestThinkingIsStreamedAsItComes(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, thinking.StreamToolCalls))
	var kinds []string
	for c, err := range thinking.NewModel(srv).Stream(context.Background(), thinkingRequest()) {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, string(c.Type))
	}
	want := "thinking_delta thinking_delta thinking_delta thinking_delta signature_delta redacted_thinking " +
		"text_delta text_delta tool_call_start tool_call_delta tool_call_delta tool_call_start tool_call_delta done"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("chunks:\ngot  %s\nwant %s", got, want)
	}
}

// With thinking on, the API refuses the request carrying the tool results
// unless the turn's thinking blocks come back unchanged, before its tool calls.
func TestThinkingGoesBackExactlyBeforeTheToolCalls(t *testing.T) {
	thought, redacted := fixtureThinking(t)
	for _, stream := range []bool{false, true} {
		sent := thinking.ToolRoundTripSendsTheGoldenRequests(t, stream)
		if !bytes.Contains(sent[0].Body, []byte(`"thinking":{"budget_tokens":1024,"type":"enabled"}`)) {
			t.Fatalf("stream=%v: thinking is not turned on: %s", stream, sent[0].Body)
		}
		var body struct {
			Messages []struct {
				Role    string
				Content []map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal(sent[1].Body, &body); err != nil {
			t.Fatal(err)
		}
		turn := body.Messages[1]
		var types []string
		for _, b := range turn.Content {
			types = append(types, text(t, b["type"]))
		}
		if turn.Role != "assistant" || strings.Join(types, " ") != "thinking redacted_thinking text tool_use tool_use" {
			t.Fatalf("stream=%v: assistant turn sent as %s %v", stream, turn.Role, types)
		}
		th, rd := turn.Content[0], turn.Content[1]
		if len(th) != 3 || len(rd) != 2 {
			t.Fatalf("stream=%v: thinking sent with other fields: %v %v", stream, th, rd)
		}
		if !bytes.Equal(th["signature"], thought["signature"]) || !bytes.Equal(rd["data"], redacted["data"]) {
			t.Fatalf("stream=%v: signature or data changed:\n%s\n%s", stream, th["signature"], rd["data"])
		}
		if text(t, th["thinking"]) != text(t, thought["thinking"]) {
			t.Fatalf("stream=%v: thinking changed: %s", stream, th["thinking"])
		}
	}
}

// A thinking block without a signature (an answer cut short) cannot be
// checked by the API, which refuses it; it is left out, and a redacted block
// goes back whole.
func TestUnsignedThinkingIsLeftOutAndRedactedThinkingGoesBack(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "messages_final_text.json"))
	req := thinkingRequest()
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, Content: []model.Block{model.ThinkingBlock("Let me", ""), model.TextBlock("Cut")}},
		model.UserText("Go on"),
		model.Message{Role: model.RoleAssistant, Content: []model.Block{
			model.RedactedThinkingBlock("EmwKAhgB"),
			model.ThinkingBlock("", "c2ln"),
			model.ToolUse("toolu_1", "lookup_order", json.RawMessage(`{"order_id":"A-42"}`)),
		}},
		model.Message{Role: model.RoleUser, Content: []model.Block{model.ToolResult("toolu_1", "shipped", false)}},
	)
	if _, err := newModel(srv, thinkingOn).Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct{ Content []json.RawMessage }
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, b := range append(body.Messages[1].Content, body.Messages[3].Content...) {
		blocks = append(blocks, string(b))
	}
	got := strings.Join(blocks, ",")
	want := `{"text":"Cut","type":"text"},` +
		`{"data":"EmwKAhgB","type":"redacted_thinking"},` +
		`{"signature":"c2ln","thinking":"","type":"thinking"},` +
		`{"id":"toolu_1","input":{"order_id":"A-42"},"name":"lookup_order","type":"tool_use"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestSignatureForABlockThatIsNotThinkingIsErrBadResponse(t *testing.T) {
	srv := wiretest.NewServer(t, events(
		"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_stop", `{"type":"message_stop"}`,
	))
	_, err := model.Collect(newModel(srv).Stream(context.Background(), wiretest.FirstRequest()))
	if !errors.Is(err, model.ErrBadResponse) || !strings.Contains(err.Error(), "not a thinking block") {
		t.Fatalf("err = %v, want ErrBadResponse", err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
