package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/scripted"
)

func script() *scripted.Model {
	return scripted.New(
		scripted.Calls(
			scripted.Call("lookup_order", map[string]any{"order_id": "A-42"}),
			scripted.Call("weather", json.RawMessage(`{"city":"Oslo"}`)),
		),
		scripted.TextAndCalls("Refunding now.", scripted.Call("refund", `{"amount":150}`)),
		scripted.Text("Done: refunded $150 for order A-42."),
	)
}

// transcript returns the conversation after the given number of assistant
// turns, built from the script's own answers.
func transcript(t *testing.T, turns int) *model.Request {
	t.Helper()
	m := script()
	req := &model.Request{Messages: []model.Message{model.UserText("Refund order A-42")}}
	for range turns {
		resp, err := m.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		req.Messages = append(req.Messages, resp.Message)
		var results []model.Block
		for _, c := range resp.Message.ToolUses() {
			results = append(results, model.ToolResult(c.ID, "ok", false))
		}
		req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Content: results})
	}
	return req
}

func TestTurnIsChosenFromTheTranscriptNotACounter(t *testing.T) {
	req := transcript(t, 1) // user, assistant (calls), user (results)

	// A fresh model, as after a process restart, answers turn 1.
	restarted := script()
	resp, err := restarted.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Message.Text(); got != "Refunding now." {
		t.Fatalf("restarted model answered %q, want turn 1", got)
	}
	// Asking again (a re-run step) gets the same answer, with the same ids.
	again, err := restarted.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resp, again) {
		t.Fatalf("same transcript, different answers:\n%+v\n%+v", resp, again)
	}
	if id := resp.Message.ToolUses()[0].ID; id != "call_1_0" {
		t.Fatalf("id = %q, want call_1_0", id)
	}
	if restarted.Calls() != 2 {
		t.Fatalf("Calls() = %d", restarted.Calls())
	}
}

func TestCallsTurnMakesParallelToolCallsWithDeterministicIDs(t *testing.T) {
	resp, err := script().Generate(context.Background(), transcript(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != model.StopToolUse || resp.Model != scripted.Name {
		t.Fatalf("got %+v", resp)
	}
	got := mustJSON(t, resp.Message)
	want := `{"role":"assistant","content":[` +
		`{"type":"tool_use","id":"call_0_0","name":"lookup_order","input":{"order_id":"A-42"}},` +
		`{"type":"tool_use","id":"call_0_1","name":"weather","input":{"city":"Oslo"}}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestUsageCountsWords(t *testing.T) {
	req := transcript(t, 2)
	req.System = "be brief"
	resp, err := script().Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// system 2 + "Refund order A-42" 3 + "Refunding now." 2 + 3 results "ok" 3 = 10
	// answer: "Done: refunded $150 for order A-42." = 6 words
	if want := (model.Usage{InputTokens: 10, OutputTokens: 6}); resp.Usage != want {
		t.Fatalf("usage = %+v, want %+v", resp.Usage, want)
	}
}

func TestStreamAssemblesToTheSameResponseAsGenerate(t *testing.T) {
	for turn := range 3 {
		req := transcript(t, turn)
		m := script()
		want, err := m.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []model.ChunkType
		var text strings.Builder
		for c, err := range m.Stream(context.Background(), req) {
			if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, c.Type)
			text.WriteString(c.Text)
		}
		got, err := model.Collect(m.Stream(context.Background(), req))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("turn %d: stream gave\n%s\nGenerate gave\n%s", turn, mustJSON(t, got), mustJSON(t, want))
		}
		if kinds[len(kinds)-1] != model.ChunkDone {
			t.Fatalf("turn %d: last chunk is %s", turn, kinds[len(kinds)-1])
		}
		if text.String() != want.Message.Text() {
			t.Fatalf("turn %d: text chunks %q", turn, text.String())
		}
		if turn == 2 && countOf(kinds, model.ChunkText) < 5 {
			t.Fatalf("text should arrive word by word, got %v", kinds)
		}
		if turn == 0 && (countOf(kinds, model.ChunkToolStart) != 2 || countOf(kinds, model.ChunkToolDelta) < 4) {
			t.Fatalf("tool calls should arrive as start + argument pieces, got %v", kinds)
		}
	}
}

func countOf(kinds []model.ChunkType, k model.ChunkType) int {
	n := 0
	for _, x := range kinds {
		if x == k {
			n++
		}
	}
	return n
}

func TestPastTheEndOfTheScriptIsAClearError(t *testing.T) {
	req := transcript(t, 3)
	_, err := script().Generate(context.Background(), req)
	if !errors.Is(err, scripted.ErrScriptEnded) {
		t.Fatalf("err = %v, want ErrScriptEnded", err)
	}
	if !strings.Contains(err.Error(), "3 assistant messages") || !strings.Contains(err.Error(), "3 turns") {
		t.Fatalf("error should explain itself: %v", err)
	}
	_, err = model.Collect(script().Stream(context.Background(), req))
	if !errors.Is(err, scripted.ErrScriptEnded) {
		t.Fatalf("stream err = %v, want ErrScriptEnded", err)
	}
}

func TestFailTurnReturnsItsError(t *testing.T) {
	m := scripted.New(scripted.Fail(model.StatusError("scripted", 429, "", "slow down")))
	_, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{model.UserText("hi")}})
	if !errors.Is(err, model.ErrRateLimited) {
		t.Fatalf("err = %v", err)
	}
}

func TestFuncAnswersFromTheTranscriptAndGetsIDs(t *testing.T) {
	m := scripted.Func(func(_ context.Context, req *model.Request) (model.Message, error) {
		last := req.Messages[len(req.Messages)-1].Text()
		return model.Message{Content: []model.Block{
			model.TextBlock("echo: " + last),
			{Type: model.BlockToolUse, Name: "log"},
		}}, nil
	})
	resp, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{model.UserText("ping")}})
	if err != nil {
		t.Fatal(err)
	}
	got := mustJSON(t, resp.Message)
	want := `{"role":"assistant","content":[{"type":"text","text":"echo: ping"},{"type":"tool_use","id":"call_0_0","name":"log","input":{}}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestRequestsAreRecordedAsCopies(t *testing.T) {
	m := script()
	req := transcript(t, 0)
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	req.Messages[0].Content[0].Text = "changed by the caller"
	got := m.Requests()
	if len(got) != 1 || got[0].Messages[0].Text() != "Refund order A-42" {
		t.Fatalf("recorded request changed: %+v", got)
	}
	got[0].Messages[0].Content[0].Text = "changed by the test"
	if m.Requests()[0].Messages[0].Text() != "Refund order A-42" {
		t.Fatal("Requests() returned shared memory")
	}
}

func TestCallsIsSafeForConcurrentUse(t *testing.T) {
	m := script()
	req := transcript(t, 0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := m.Generate(context.Background(), req); err != nil {
				t.Error(err)
			}
			for _, err := range m.Stream(context.Background(), req) {
				if err != nil {
					t.Error(err)
				}
			}
			_ = m.Requests()
		})
	}
	wg.Wait()
	if m.Calls() != 16 {
		t.Fatalf("Calls() = %d, want 16", m.Calls())
	}
}

func TestStreamStopsWhenTheContextIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := script()
	var err error
	n := 0
	for _, e := range m.Stream(ctx, transcript(t, 2)) {
		if e != nil {
			err = e
			break
		}
		n++
		cancel()
	}
	if n != 1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %d chunks, err %v", n, err)
	}
}

func TestCallPanicsOnInputThatIsNotAnObject(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	scripted.Call("n", "[1,2]")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEmptyOrInvalidRequestIsRefusedLikeAProviderWould(t *testing.T) {
	cases := []struct {
		name string
		req  *model.Request
		want string
	}{
		{"nil request", nil, "no messages"},
		{"no messages", &model.Request{System: "You help."}, "no messages"},
		{"unknown role", &model.Request{Messages: []model.Message{{Role: "wizard", Content: []model.Block{model.TextBlock("hi")}}}}, `unknown message role "wizard"`},
		{"unknown block type", &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{{Type: "spell"}}}}}, `unknown block type "spell"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			called := false
			m := scripted.Func(func(ctx context.Context, req *model.Request) (model.Message, error) {
				called = true
				return model.AssistantText(req.Messages[len(req.Messages)-1].Text()), nil
			})
			_, genErr := m.Generate(context.Background(), c.req)
			var streamErr error
			for _, err := range m.Stream(context.Background(), c.req) {
				if err != nil {
					streamErr = err
				}
			}
			for _, err := range []error{genErr, streamErr} {
				var me *model.Error
				if !errors.Is(err, model.ErrInvalidRequest) || !errors.As(err, &me) || me.Provider != scripted.Name || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err = %v, want an invalid-request error saying %q", err, c.want)
				}
			}
			if called || m.Calls() != 2 {
				t.Fatalf("the answering function ran (%v) or the requests were not recorded (%d)", called, m.Calls())
			}
		})
	}
}

func TestUsageCountsWordsAsStringsFieldsSplitsThem(t *testing.T) {
	for _, text := range []string{"one", "  two words ", "tab\tnew\nline", "nbsp\u00a0x\u2003y", "bad \xff utf8", "\xff\xfe"} {
		m := scripted.New(scripted.Text(text))
		resp, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{model.UserText(text)}})
		if err != nil {
			t.Fatal(err)
		}
		want := len(strings.Fields(text))
		if resp.Usage.OutputTokens != want || resp.Usage.InputTokens != want {
			t.Errorf("%q: usage %+v, want %d words each way", text, resp.Usage, want)
		}
	}
}
