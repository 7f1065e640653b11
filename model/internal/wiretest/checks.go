package wiretest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/interludehq/interlude/model"
)

// The checks below hold for every provider: each provider's test of the same
// name calls them with its side of the conversation.

// RateLimitIsRetried checks that a 429 (testdata/error_429.json) is retried
// and the retry's answer returned, generated and streamed.
func (c Conversation) RateLimitIsRetried(t *testing.T) {
	t.Helper()
	for _, stream := range []bool{false, true} {
		_, ok := c.Replies(t, stream)
		srv := NewServer(t, File(t, 429, "error_429.json", FastRetry...), ok)
		resp, err := Answer(t, c.NewModel(srv), FirstRequest(), stream)
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		c.WantFinalText(t, resp)
		if srv.Hits() != 2 {
			t.Fatalf("stream=%v: server saw %d requests, want 2", stream, srv.Hits())
		}
	}
}

// UnauthorizedIsErrAuthWithoutRetry checks that a 401
// (testdata/error_401.json, whose error code is code) is ErrAuth, says what to
// do, and is not retried.
func (c Conversation) UnauthorizedIsErrAuthWithoutRetry(t *testing.T, code string) {
	t.Helper()
	for _, stream := range []bool{false, true} {
		srv := NewServer(t, File(t, 401, "error_401.json"))
		_, err := Answer(t, c.NewModel(srv), FirstRequest(), stream)
		if !errors.Is(err, model.ErrAuth) {
			t.Fatalf("stream=%v: err = %v, want ErrAuth", stream, err)
		}
		var me *model.Error
		if !errors.As(err, &me) || me.Code != code || me.Retryable {
			t.Fatalf("stream=%v: got %#v", stream, me)
		}
		if !strings.Contains(err.Error(), "Check the API key") {
			t.Fatalf("error should say what to do: %v", err)
		}
		if srv.Hits() != 1 {
			t.Fatalf("stream=%v: server saw %d requests, want no retry", stream, srv.Hits())
		}
	}
}

// CancelledContextIsReportedAsSuch checks that a request under a cancelled
// context fails with context.Canceled, generated and streamed.
func (c Conversation) CancelledContextIsReportedAsSuch(t *testing.T) {
	t.Helper()
	srv := NewServer(t, File(t, 200, c.FinalText))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.NewModel(srv).Generate(ctx, FirstRequest())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	_, err = model.Collect(c.NewModel(srv).Stream(ctx, FirstRequest()))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stream err = %v", err)
	}
}

// StreamAndGenerateAgree checks that the streamed answer, collected, is the
// generated one.
func (c Conversation) StreamAndGenerateAgree(t *testing.T) {
	t.Helper()
	srv := NewServer(t, File(t, 200, c.ToolCalls), File(t, 200, "stream_tool_calls.sse"))
	m := c.NewModel(srv)
	a, err := Answer(t, m, FirstRequest(), false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Answer(t, m, FirstRequest(), true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("Generate and Stream differ:\n%+v\n%+v", a, b)
	}
}

// InvalidRequestIsRefusedBeforeSending checks that a request the provider
// cannot express (a tool result without its call) is refused, naming the
// problem, without reaching the server.
func (c Conversation) InvalidRequestIsRefusedBeforeSending(t *testing.T) {
	t.Helper()
	srv := NewServer(t, File(t, 500, "error_500.json"))
	req := FirstRequest()
	req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Content: []model.Block{model.ToolResult("", "orphan", false)}})
	for _, stream := range []bool{false, true} {
		_, err := Answer(t, c.NewModel(srv), req, stream)
		if !errors.Is(err, model.ErrInvalidRequest) || !strings.Contains(err.Error(), "tool_use_id") {
			t.Fatalf("stream=%v: err = %v, want ErrInvalidRequest naming the problem", stream, err)
		}
	}
	if srv.Hits() != 0 {
		t.Fatalf("server saw %d requests, want none", srv.Hits())
	}
}

// FinalTextTurn checks the final answer, not streamed.
func (c Conversation) FinalTextTurn(t *testing.T) {
	t.Helper()
	srv := NewServer(t, File(t, 200, c.FinalText))
	resp, err := Answer(t, c.NewModel(srv), FirstRequest(), false)
	if err != nil {
		t.Fatal(err)
	}
	c.WantFinalText(t, resp)
}

// FinalTextTurnStreamedArrivesInPieces checks the final answer streamed: its
// text comes in many chunks and the last chunk carries the whole answer.
func (c Conversation) FinalTextTurnStreamedArrivesInPieces(t *testing.T) {
	t.Helper()
	srv := NewServer(t, File(t, 200, "stream_final_text.sse"))
	var pieces int
	var final *model.Response
	for ch, err := range c.NewModel(srv).Stream(context.Background(), FirstRequest()) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.Type == model.ChunkText {
			pieces++
		}
		final = ch.Response
	}
	c.WantFinalText(t, final)
	if pieces < 10 {
		t.Fatalf("text arrived in %d pieces", pieces)
	}
}

// ToolRoundTripSendsTheGoldenRequests plays RoundTrip and compares the two
// requests sent with the golden files <Golden>[_stream]_request_N.json, and
// returns them.
func (c Conversation) ToolRoundTripSendsTheGoldenRequests(t *testing.T, stream bool) []Request {
	t.Helper()
	sent := c.RoundTrip(t, stream)
	prefix := c.Golden
	if prefix == "" {
		prefix = "tool_roundtrip"
	}
	if stream {
		prefix += "_stream"
	}
	prefix += "_request_"
	Golden(t, prefix+"1.json", sent[0].Body)
	Golden(t, prefix+"2.json", sent[1].Body)
	return sent
}
