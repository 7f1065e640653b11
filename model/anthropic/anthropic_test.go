package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/anthropic"
	"github.com/interludehq/interlude/model/internal/wiretest"
)

const apiKey = "sk-ant-test-123"

func newModel(srv *wiretest.Server, opts ...anthropic.Option) *anthropic.Model {
	base := []anthropic.Option{
		anthropic.WithBaseURL(srv.URL),
		anthropic.WithAPIKey(apiKey),
		anthropic.WithMaxRetries(2),
	}
	m, err := anthropic.New(append(base, opts...)...)
	if err != nil {
		panic(err) // the options above are good: a refusal is a bug of the test
	}
	return m
}

// conversation is this provider's side of the canned conversation.
var conversation = wiretest.Conversation{
	ToolCalls:     "messages_tool_calls.json",
	FinalText:     "messages_final_text.json",
	Path:          "/v1/messages",
	NewModel:      func(srv *wiretest.Server) model.Model { return newModel(srv) },
	WantFinalText: wantFinalText,
}

func wantToolCalls(t *testing.T, resp *model.Response) {
	t.Helper()
	got, _ := json.Marshal(resp)
	want := `{"message":{"role":"assistant","content":[` +
		`{"type":"text","text":"I'll look up both orders."},` +
		`{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"lookup_order","input":{"order_id":"A-42"}},` +
		`{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"lookup_order","input":{"order_id":"B-7"}}]},` +
		`"usage":{"input_tokens":412,"output_tokens":108},"stop_reason":"tool_use","model":"claude-sonnet-4-5-20250929"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func wantFinalText(t *testing.T, resp *model.Response) {
	t.Helper()
	got, _ := json.Marshal(resp)
	want := `{"message":{"role":"assistant","content":[` +
		`{"type":"text","text":"Order A-42 shipped yesterday with DHL. I could not find order B-7; please check the number."}]},` +
		`"usage":{"input_tokens":598,"output_tokens":27},"stop_reason":"end_turn","model":"claude-sonnet-4-5-20250929"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestToolCallTurnGivesTextAndParallelToolCalls(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "messages_tool_calls.json"))
	resp, err := wiretest.Answer(t, newModel(srv), wiretest.FirstRequest(), false)
	if err != nil {
		t.Fatal(err)
	}
	wantToolCalls(t, resp)
}

func TestToolCallTurnStreamedAssemblesInputJSONDeltas(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "stream_tool_calls.sse"))
	var kinds []string
	var final *model.Response
	for c, err := range newModel(srv).Stream(context.Background(), wiretest.FirstRequest()) {
		if err != nil {
			t.Fatal(err)
		}
		switch c.Type {
		case model.ChunkText:
			kinds = append(kinds, "text")
		case model.ChunkToolStart:
			kinds = append(kinds, "start")
			if c.Index != 0 && c.Index != 1 {
				t.Fatalf("tool call index %d: want the position among tool calls, not the content block index", c.Index)
			}
		case model.ChunkToolDelta:
			kinds = append(kinds, "delta")
		case model.ChunkDone:
			final = c.Response
		}
	}
	wantToolCalls(t, final)
	got := strings.Join(kinds, " ")
	if got != "text text text text text start delta delta start delta delta delta" {
		t.Fatalf("chunks: %s", got)
	}
}

func TestFinalTextTurn(t *testing.T) { conversation.FinalTextTurn(t) }

func TestFinalTextTurnStreamedArrivesInPieces(t *testing.T) {
	conversation.FinalTextTurnStreamedArrivesInPieces(t)
}

func TestToolRoundTripSendsTheGoldenRequests(t *testing.T) {
	conversation.ToolRoundTripSendsTheGoldenRequests(t, false)
}

func TestToolRoundTripStreamedSendsTheGoldenRequests(t *testing.T) {
	conversation.ToolRoundTripSendsTheGoldenRequests(t, true)
}

func TestSystemMessagesJoinTheSystemPromptAndResultsComeFirst(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "messages_final_text.json"))
	req := &model.Request{
		System: "Be brief.",
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: []model.Block{model.TextBlock("Answer in English.")}},
			model.UserText("Look it up"),
			{Role: model.RoleAssistant, Content: []model.Block{model.ToolUse("toolu_1", "lookup", nil)}},
			{Role: model.RoleUser, Content: []model.Block{model.TextBlock("Here you go:"), model.ToolResult("toolu_1", "found", false), model.ImageData("image/png", "iVBORw0K")}},
		},
	}
	if _, err := newModel(srv).Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		System    []struct{ Text string }
		Messages  []struct{ Content []map[string]any }
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.System) != 2 || body.System[0].Text != "Be brief." || body.System[1].Text != "Answer in English." {
		t.Fatalf("system = %+v", body.System)
	}
	if len(body.Messages) != 3 {
		t.Fatalf("messages = %+v", body.Messages)
	}
	var types []string
	for _, b := range body.Messages[2].Content {
		types = append(types, b["type"].(string))
	}
	if strings.Join(types, ",") != "tool_result,text,image" {
		t.Fatalf("last message blocks: %v", types)
	}
	if in := body.Messages[1].Content[0]["input"]; !reflect.DeepEqual(in, map[string]any{}) {
		t.Fatalf("empty tool input sent as %v", in)
	}
	if body.MaxTokens != anthropic.DefaultMaxTokens {
		t.Fatalf("max_tokens = %d, want the default %d", body.MaxTokens, anthropic.DefaultMaxTokens)
	}
}

func TestAPIKeyAndModelNameReachTheServer(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "messages_final_text.json"))
	if _, err := newModel(srv, anthropic.WithModel("claude-haiku-4-5")).Generate(context.Background(), wiretest.FirstRequest()); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	// The SDK decides the header: x-api-key, or a bearer token (which the
	// version in go.mod uses).
	if r.Header.Get("X-Api-Key") != apiKey && r.Header.Get("Authorization") != "Bearer "+apiKey {
		t.Fatalf("API key not sent: X-Api-Key=%q Authorization=%q", r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
	}
	var body struct{ Model string }
	_ = json.Unmarshal(r.Body, &body)
	if body.Model != "claude-haiku-4-5" {
		t.Fatalf("model = %q", body.Model)
	}
}

func TestDefaultModelAndMaxTokens(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "messages_final_text.json"))
	m := newModel(srv, anthropic.WithMaxTokens(2048))
	req := wiretest.FirstRequest()
	req.MaxTokens = 0
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Model     string
		MaxTokens int `json:"max_tokens"`
	}
	_ = json.Unmarshal(srv.Requests()[0].Body, &body)
	if body.Model != anthropic.DefaultModel || m.ModelName() != "claude-sonnet-4-5" || body.MaxTokens != 2048 {
		t.Fatalf("body = %+v", body)
	}
}

func TestRateLimitIsRetriedThenSucceeds(t *testing.T) { conversation.RateLimitIsRetried(t) }

func TestServerErrorsEndInErrUnavailableAfterRetries(t *testing.T) {
	for _, fixture := range []string{"error_500.json", "error_529.json"} {
		for _, stream := range []bool{false, true} {
			srv := wiretest.NewServer(t, wiretest.File(t, 500, fixture, wiretest.FastRetry...))
			_, err := wiretest.Answer(t, newModel(srv, anthropic.WithMaxRetries(2)), wiretest.FirstRequest(), stream)
			if !errors.Is(err, model.ErrUnavailable) {
				t.Fatalf("%s stream=%v: err = %v, want ErrUnavailable", fixture, stream, err)
			}
			var me *model.Error
			if !errors.As(err, &me) || me.Status != 500 || !me.Retryable || me.Provider != "anthropic" {
				t.Fatalf("%s stream=%v: got %#v", fixture, stream, me)
			}
			if srv.Hits() != 3 {
				t.Fatalf("%s stream=%v: server saw %d requests, want 1 + 2 retries", fixture, stream, srv.Hits())
			}
		}
	}
}

func TestOverloadedIsErrUnavailable(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 529, "error_529.json"))
	_, err := newModel(srv, anthropic.WithMaxRetries(0)).Generate(context.Background(), wiretest.FirstRequest())
	var me *model.Error
	if !errors.Is(err, model.ErrUnavailable) || !errors.As(err, &me) || me.Code != "overloaded_error" {
		t.Fatalf("err = %v, want ErrUnavailable with code overloaded_error", err)
	}
}

func TestErrorBodyThatIsNotJSONIsClassifiedByStatus(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{Status: 502, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<html>Bad Gateway</html>")})
	_, err := newModel(srv, anthropic.WithMaxRetries(0)).Generate(context.Background(), wiretest.FirstRequest())
	if !errors.Is(err, model.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestMalformedBodyIsErrBadResponse(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "malformed.json"))
	_, err := newModel(srv).Generate(context.Background(), wiretest.FirstRequest())
	if !errors.Is(err, model.ErrBadResponse) {
		t.Fatalf("err = %v, want ErrBadResponse", err)
	}
	if srv.Hits() != 1 {
		t.Fatalf("server saw %d requests", srv.Hits())
	}
}

func TestBodyThatIsNotAMessageIsErrBadResponse(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"type":"completion","completion":"hi"}`)})
	_, err := newModel(srv).Generate(context.Background(), wiretest.FirstRequest())
	if !errors.Is(err, model.ErrBadResponse) {
		t.Fatalf("err = %v, want ErrBadResponse", err)
	}
}

func TestMalformedStreamIsErrBadResponse(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\n\n")})
	_, err := model.Collect(newModel(srv).Stream(context.Background(), wiretest.FirstRequest()))
	if !errors.Is(err, model.ErrBadResponse) {
		t.Fatalf("err = %v, want ErrBadResponse", err)
	}
}

func TestStreamCutShortIsErrBadResponse(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "stream_truncated.sse"))
	_, err := model.Collect(newModel(srv).Stream(context.Background(), wiretest.FirstRequest()))
	if !errors.Is(err, model.ErrBadResponse) || !strings.Contains(err.Error(), "message_stop") {
		t.Fatalf("err = %v, want ErrBadResponse about the missing message_stop", err)
	}
}

func TestOverloadedErrorEventInStreamIsErrUnavailable(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "stream_overloaded.sse"))
	var texts int
	var err error
	for c, e := range newModel(srv).Stream(context.Background(), wiretest.FirstRequest()) {
		if e != nil {
			err = e
			break
		}
		if c.Type == model.ChunkText {
			texts++
		}
	}
	var me *model.Error
	if !errors.Is(err, model.ErrUnavailable) || !errors.As(err, &me) || me.Code != "overloaded_error" || !me.Retryable {
		t.Fatalf("err = %v, want a retryable ErrUnavailable with code overloaded_error", err)
	}
	if texts != 2 {
		t.Fatalf("got %d text chunks before the error, want 2", texts)
	}
}

func TestUnauthorizedIsErrAuthWithoutRetry(t *testing.T) {
	conversation.UnauthorizedIsErrAuthWithoutRetry(t, "authentication_error")
}

func TestCancelledContextIsReportedAsSuch(t *testing.T) {
	conversation.CancelledContextIsReportedAsSuch(t)
}

func TestStreamAndGenerateAgree(t *testing.T) { conversation.StreamAndGenerateAgree(t) }

func TestToolInputGivenWholeAtBlockStartIsKept(t *testing.T) {
	srv := wiretest.NewServer(t, events(
		"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"lookup_order","input":{"order_id":"A-42"}}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
		"message_stop", `{"type":"message_stop"}`,
	))
	resp, err := model.Collect(newModel(srv).Stream(context.Background(), wiretest.FirstRequest()))
	if err != nil {
		t.Fatal(err)
	}
	if calls := resp.Message.ToolUses(); len(calls) != 1 || string(calls[0].Input) != `{"order_id":"A-42"}` {
		t.Fatalf("calls = %+v", calls)
	}
}

func TestInvalidRequestIsRefusedBeforeSending(t *testing.T) {
	conversation.InvalidRequestIsRefusedBeforeSending(t)
}

func TestServerToolBlocksAreDroppedFromAStreamAndThinkingIsKept(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "stream_server_tool.sse"))
	resp, err := model.Collect(newModel(srv).Stream(context.Background(), wiretest.FirstRequest()))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(resp)
	want := `{"message":{"role":"assistant","content":[` +
		`{"type":"thinking","thinking":"The user asks about DHL delays; search the web.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},` +
		`{"type":"text","text":"DHL reports no delays this week."}]},` +
		`"usage":{"input_tokens":2679,"output_tokens":65},"stop_reason":"end_turn","model":"claude-sonnet-4-5-20250929"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// events returns a 200 reply streaming the given events, each a type and its
// data.
func events(typeAndData ...string) wiretest.Reply {
	var sb strings.Builder
	for i := 0; i+1 < len(typeAndData); i += 2 {
		sb.WriteString("event: " + typeAndData[i] + "\ndata: " + typeAndData[i+1] + "\n\n")
	}
	return wiretest.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(sb.String())}
}

func TestStreamedUsageKeepsCacheReadsThatTheFinalDeltaLeavesOut(t *testing.T) {
	srv := wiretest.NewServer(t, events(
		"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":500,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Shipped."}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":10,"cache_read_input_tokens":null,"output_tokens":20}}`,
		"message_stop", `{"type":"message_stop"}`,
	))
	resp, err := model.Collect(newModel(srv).Stream(context.Background(), wiretest.FirstRequest()))
	if err != nil {
		t.Fatal(err)
	}
	if want := (model.Usage{InputTokens: 510, OutputTokens: 20}); resp.Usage != want {
		t.Fatalf("usage = %+v, want %+v", resp.Usage, want)
	}
}

// The API refuses a tool_result with is_error and no content ("content cannot
// be empty if is_error is true"); an agent sends one when a person rejects a
// call with an empty message.
func TestFailedToolResultWithoutTextIsSentWithContent(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "messages_final_text.json"))
	req := wiretest.FirstRequest()
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, Content: []model.Block{model.ToolUse("toolu_1", "lookup_order", json.RawMessage(`{"order_id":"A-42"}`))}},
		model.Message{Role: model.RoleUser, Content: []model.Block{model.ToolResult("toolu_1", "", true)}},
	)
	if _, err := newModel(srv).Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Content []struct {
				Type    string
				IsError bool `json:"is_error"`
				Content []struct{ Type, Text string }
			}
		}
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	r := body.Messages[2].Content[0]
	if r.Type != "tool_result" || !r.IsError || len(r.Content) != 1 || strings.TrimSpace(r.Content[0].Text) == "" {
		t.Fatalf("failed result sent as %+v", r)
	}
}

// The API refuses text blocks that hold only whitespace ("text content blocks
// must contain non-whitespace text"); a streamed answer can hold one, such as
// a line break before a tool call.
func TestWhitespaceOnlyTextIsNotSent(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "messages_final_text.json"))
	req := wiretest.FirstRequest()
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, Content: []model.Block{
			model.TextBlock("\n\n"),
			model.ToolUse("toolu_1", "lookup_order", json.RawMessage(`{"order_id":"A-42"}`)),
		}},
		model.Message{Role: model.RoleUser, Content: []model.Block{model.ToolResult("toolu_1", " ", false), model.TextBlock(" \n")}},
	)
	if _, err := newModel(srv).Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Content []struct {
				Type, Text string
				Content    []struct{ Type, Text string }
			}
		}
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	for i, m := range body.Messages {
		for _, b := range m.Content {
			blocks := append(b.Content, struct{ Type, Text string }{b.Type, b.Text})
			for _, x := range blocks {
				if x.Type == "text" && strings.TrimSpace(x.Text) == "" {
					t.Fatalf("message %d carries a whitespace-only text block: %s", i, srv.Requests()[0].Body)
				}
			}
		}
	}
	if len(body.Messages) != 3 || len(body.Messages[1].Content) != 1 || len(body.Messages[2].Content) != 1 {
		t.Fatalf("messages = %+v", body.Messages)
	}
}

func TestCallsAreTracedAsGenAIClientSpansThatCarryTheTraceContext(t *testing.T) {
	want := wiretest.Traced{Provider: "anthropic", RequestModel: anthropic.DefaultModel, ResponseModel: "claude-sonnet-4-5-20250929",
		InputTokens: 598, OutputTokens: 27, FinishReason: "end_turn"}
	for _, stream := range []bool{false, true} {
		file := "messages_final_text.json"
		if stream {
			file = "stream_final_text.sse"
		}
		srv := wiretest.NewServer(t, wiretest.File(t, 200, file))
		wiretest.CheckTraced(t, srv, stream, want, func(tp trace.TracerProvider) model.Model {
			return newModel(srv, anthropic.WithTracerProvider(tp))
		})
	}
}
