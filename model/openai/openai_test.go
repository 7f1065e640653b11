package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/internal/wiretest"
	"github.com/interludehq/interlude/model/openai"
)

func newModel(srv *wiretest.Server, opts ...openai.Option) *openai.Model {
	base := []openai.Option{
		openai.WithBaseURL(srv.URL + "/v1"),
		openai.WithAPIKey("sk-test-123"),
		openai.WithMaxRetries(2),
	}
	m, err := openai.New(append(base, opts...)...)
	if err != nil {
		panic(err) // the options above are good: a refusal is a bug of the test
	}
	return m
}

// conversation is this provider's side of the canned conversation.
var conversation = wiretest.Conversation{
	ToolCalls:     "chat_tool_calls.json",
	FinalText:     "chat_final_text.json",
	Path:          "/v1/chat/completions",
	NewModel:      func(srv *wiretest.Server) model.Model { return newModel(srv) },
	WantFinalText: wantFinalText,
}

func wantToolCalls(t *testing.T, resp *model.Response) {
	t.Helper()
	got, _ := json.Marshal(resp)
	want := `{"message":{"role":"assistant","content":[` +
		`{"type":"tool_use","id":"call_Nq3WmvPz8kXbTg1cE7uYdL2a","name":"lookup_order","input":{"order_id":"A-42"}},` +
		`{"type":"tool_use","id":"call_Rf5HsKj2Wq9ZpLx4Mv8cTb1e","name":"lookup_order","input":{"order_id":"B-7"}}]},` +
		`"usage":{"input_tokens":96,"output_tokens":49},"stop_reason":"tool_use","model":"gpt-4o-mini-2024-07-18"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func wantFinalText(t *testing.T, resp *model.Response) {
	t.Helper()
	got, _ := json.Marshal(resp)
	want := `{"message":{"role":"assistant","content":[` +
		`{"type":"text","text":"Order A-42 shipped yesterday with DHL. I could not find order B-7; please check the number."}]},` +
		`"usage":{"input_tokens":187,"output_tokens":24},"stop_reason":"end_turn","model":"gpt-4o-mini-2024-07-18"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestToolCallTurnGivesParallelToolCalls(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "chat_tool_calls.json"))
	resp, err := wiretest.Answer(t, newModel(srv), wiretest.FirstRequest(), false)
	if err != nil {
		t.Fatal(err)
	}
	wantToolCalls(t, resp)
}

func TestToolCallTurnStreamedAssemblesArgumentsByIndex(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "stream_tool_calls.sse"))
	var kinds []string
	var final *model.Response
	for c, err := range newModel(srv).Stream(context.Background(), wiretest.FirstRequest()) {
		if err != nil {
			t.Fatal(err)
		}
		switch c.Type {
		case model.ChunkToolStart:
			kinds = append(kinds, "start:"+c.ID)
		case model.ChunkToolDelta:
			kinds = append(kinds, "delta")
		case model.ChunkDone:
			final = c.Response
		}
	}
	wantToolCalls(t, final)
	if kinds[0] != "start:call_Nq3WmvPz8kXbTg1cE7uYdL2a" || strings.Count(strings.Join(kinds, " "), "delta") != 15 {
		t.Fatalf("chunks: %v", kinds)
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

// Chat Completions has no place for another provider's thinking: an answer
// carrying it (as from the Messages API, earlier in the thread) is sent
// exactly as one without it.
func TestThinkingIsLeftOutOfRequests(t *testing.T) {
	c := conversation
	c.EditReply = func(m *model.Message) {
		m.Content = append([]model.Block{model.ThinkingBlock("Look both up.", "EqQBCg=="), model.RedactedThinkingBlock("EmwKAhgB")}, m.Content...)
		m.Content = append(m.Content, model.ThinkingBlock("", "c2ln"))
	}
	for _, stream := range []bool{false, true} {
		for _, r := range c.ToolRoundTripSendsTheGoldenRequests(t, stream) {
			if bytes.Contains(r.Body, []byte("EqQBCg")) || bytes.Contains(r.Body, []byte("EmwKAhgB")) || bytes.Contains(r.Body, []byte("c2ln")) {
				t.Fatalf("stream=%v: thinking was sent: %s", stream, r.Body)
			}
		}
	}
}

func TestAPIKeyAndModelNameReachTheServer(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "chat_final_text.json"))
	if _, err := newModel(srv, openai.WithModel("llama3.1:8b")).Generate(context.Background(), wiretest.FirstRequest()); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if got := r.Header.Get("Authorization"); got != "Bearer sk-test-123" {
		t.Fatalf("Authorization = %q", got)
	}
	var body struct{ Model string }
	_ = json.Unmarshal(r.Body, &body)
	if body.Model != "llama3.1:8b" {
		t.Fatalf("model = %q", body.Model)
	}
}

func TestDefaultModelName(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "chat_final_text.json"))
	m := newModel(srv)
	if _, err := m.Generate(context.Background(), wiretest.FirstRequest()); err != nil {
		t.Fatal(err)
	}
	var body struct{ Model string }
	_ = json.Unmarshal(srv.Requests()[0].Body, &body)
	if body.Model != openai.DefaultModel || m.ModelName() != "gpt-4o-mini" {
		t.Fatalf("model = %q", body.Model)
	}
}

func TestLegacyMaxTokensOption(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "chat_final_text.json"))
	if _, err := newModel(srv, openai.WithLegacyMaxTokens()).Generate(context.Background(), wiretest.FirstRequest()); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.Unmarshal(srv.Requests()[0].Body, &body)
	if body["max_tokens"] != 300.0 || body["max_completion_tokens"] != nil {
		t.Fatalf("body = %v", body)
	}
}

func TestRateLimitIsRetriedThenSucceeds(t *testing.T) { conversation.RateLimitIsRetried(t) }

func TestServerErrorsEndInErrUnavailableAfterRetries(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := wiretest.NewServer(t, wiretest.File(t, 500, "error_500.json", wiretest.FastRetry...))
		_, err := wiretest.Answer(t, newModel(srv, openai.WithMaxRetries(2)), wiretest.FirstRequest(), stream)
		if !errors.Is(err, model.ErrUnavailable) {
			t.Fatalf("stream=%v: err = %v, want ErrUnavailable", stream, err)
		}
		var me *model.Error
		if !errors.As(err, &me) || me.Status != 500 || !me.Retryable || me.Provider != "openai" {
			t.Fatalf("stream=%v: got %#v", stream, me)
		}
		if srv.Hits() != 3 {
			t.Fatalf("stream=%v: server saw %d requests, want 1 + 2 retries", stream, srv.Hits())
		}
	}
}

func TestErrorBodyThatIsNotJSONIsClassifiedByStatus(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{Status: 502, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<html>Bad Gateway</html>")})
	_, err := newModel(srv, openai.WithMaxRetries(0)).Generate(context.Background(), wiretest.FirstRequest())
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

func TestResponseWithoutChoicesIsErrBadResponse(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"id":"x","object":"chat.completion","choices":[]}`)})
	_, err := newModel(srv).Generate(context.Background(), wiretest.FirstRequest())
	if !errors.Is(err, model.ErrBadResponse) {
		t.Fatalf("err = %v, want ErrBadResponse", err)
	}
}

func TestMalformedStreamIsErrBadResponse(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"\n\n")})
	_, err := model.Collect(newModel(srv).Stream(context.Background(), wiretest.FirstRequest()))
	if !errors.Is(err, model.ErrBadResponse) {
		t.Fatalf("err = %v, want ErrBadResponse", err)
	}
}

func TestStreamCutShortIsErrBadResponse(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.File(t, 200, "stream_truncated.sse"))
	_, err := model.Collect(newModel(srv).Stream(context.Background(), wiretest.FirstRequest()))
	if !errors.Is(err, model.ErrBadResponse) || !strings.Contains(err.Error(), "finish_reason") {
		t.Fatalf("err = %v, want ErrBadResponse about the missing finish_reason", err)
	}
}

func TestErrorEventInStreamIsReported(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: []byte(`data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","code":null}}` + "\n\n")})
	_, err := model.Collect(newModel(srv).Stream(context.Background(), wiretest.FirstRequest()))
	if !errors.Is(err, model.ErrUnavailable) || !strings.Contains(err.Error(), "server had an error") {
		t.Fatalf("err = %v, want ErrUnavailable with the server's message", err)
	}
}

func TestUnauthorizedIsErrAuthWithoutRetry(t *testing.T) {
	conversation.UnauthorizedIsErrAuthWithoutRetry(t, "invalid_api_key")
}

func TestCancelledContextIsReportedAsSuch(t *testing.T) {
	conversation.CancelledContextIsReportedAsSuch(t)
}

func TestStreamAndGenerateAgree(t *testing.T) { conversation.StreamAndGenerateAgree(t) }

func TestInvalidRequestIsRefusedBeforeSending(t *testing.T) {
	conversation.InvalidRequestIsRefusedBeforeSending(t)
}

func TestExhaustedQuotaIsNotRetried(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := wiretest.NewServer(t, wiretest.File(t, 429, "error_429_quota.json", wiretest.FastRetry...))
		_, err := wiretest.Answer(t, newModel(srv), wiretest.FirstRequest(), stream)
		var me *model.Error
		if !errors.Is(err, model.ErrRateLimited) || !errors.As(err, &me) || me.Code != "insufficient_quota" || me.Retryable {
			t.Fatalf("stream=%v: err = %v, want a non-retryable ErrRateLimited with code insufficient_quota", stream, err)
		}
		if strings.Contains(err.Error(), "Wait and retry") || !strings.Contains(err.Error(), "billing") {
			t.Fatalf("stream=%v: error should send the user to billing, not to retry: %v", stream, err)
		}
		if srv.Hits() != 1 {
			t.Fatalf("stream=%v: server saw %d requests, want no retry", stream, srv.Hits())
		}
	}
}

func TestRefusalIsTextWithStopOther(t *testing.T) {
	const chunk = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1751884800,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}` + "\n\n"
	stream := fmt.Sprintf(chunk, `{"role":"assistant","content":null,"refusal":""}`, "null") +
		fmt.Sprintf(chunk, `{"refusal":"I'm sorry, I can't"}`, "null") +
		fmt.Sprintf(chunk, `{"refusal":" help with that."}`, "null") +
		fmt.Sprintf(chunk, `{}`, `"stop"`) + "data: [DONE]\n\n"
	srv := wiretest.NewServer(t,
		wiretest.Reply{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1751884800,"model":"gpt-4o-mini-2024-07-18",` +
			`"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I'm sorry, I can't help with that."},"logprobs":null,"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29}}`)},
		wiretest.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(stream)},
	)
	for _, streamed := range []bool{false, true} {
		resp, err := wiretest.Answer(t, newModel(srv), wiretest.FirstRequest(), streamed)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Message.Text() != "I'm sorry, I can't help with that." || resp.StopReason != model.StopOther {
			t.Fatalf("stream=%v: text %q, stop reason %q; want the refusal with %q", streamed, resp.Message.Text(), resp.StopReason, model.StopOther)
		}
	}
}

func TestErrorEventInStreamIsClassifiedByItsTypeWhenItsCodeSaysLess(t *testing.T) {
	srv := wiretest.NewServer(t, wiretest.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: []byte(`data: {"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}` + "\n\n")})
	_, err := model.Collect(newModel(srv).Stream(context.Background(), wiretest.FirstRequest()))
	var me *model.Error
	if !errors.Is(err, model.ErrInvalidRequest) || !errors.As(err, &me) || me.Retryable || me.Code != "context_length_exceeded" {
		t.Fatalf("err = %v, want a non-retryable ErrInvalidRequest with code context_length_exceeded", err)
	}
}

func TestCallsAreTracedAsGenAIClientSpansThatCarryTheTraceContext(t *testing.T) {
	want := wiretest.Traced{Provider: "openai", RequestModel: openai.DefaultModel, ResponseModel: "gpt-4o-mini-2024-07-18",
		InputTokens: 187, OutputTokens: 24, FinishReason: "stop"}
	for _, stream := range []bool{false, true} {
		file := "chat_final_text.json"
		if stream {
			file = "stream_final_text.sse"
		}
		srv := wiretest.NewServer(t, wiretest.File(t, 200, file))
		wiretest.CheckTraced(t, srv, stream, want, func(tp trace.TracerProvider) model.Model {
			return newModel(srv, openai.WithTracerProvider(tp))
		})
	}
}
