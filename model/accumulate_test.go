package model_test

import (
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/interludehq/interlude/model"
)

func TestAccumulatorAssemblesTextAndParallelToolCalls(t *testing.T) {
	var acc model.Accumulator
	chunks := []model.Chunk{
		model.TextDelta("Checking"),
		model.TextDelta(" both."),
		model.ToolCallStart(0, "call_a", "lookup_order"),
		model.ToolCallStart(1, "call_b", "weather"),
		model.ToolCallDelta(1, `{"city":`),
		model.ToolCallDelta(0, `{"order_id":"A-42"}`),
		model.ToolCallDelta(1, `"Oslo"}`),
	}
	for _, c := range chunks {
		if err := acc.Add(c); err != nil {
			t.Fatalf("Add(%+v): %v", c, err)
		}
	}
	resp, err := acc.Finish("test", "", model.Usage{InputTokens: 3, OutputTokens: 4}, "m")
	if err != nil {
		t.Fatal(err)
	}
	got := mustJSON(t, resp)
	want := `{"message":{"role":"assistant","content":[` +
		`{"type":"text","text":"Checking both."},` +
		`{"type":"tool_use","id":"call_a","name":"lookup_order","input":{"order_id":"A-42"}},` +
		`{"type":"tool_use","id":"call_b","name":"weather","input":{"city":"Oslo"}}]},` +
		`"usage":{"input_tokens":3,"output_tokens":4},"stop_reason":"tool_use","model":"m"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestAccumulatorKeepsThinkingBlocksInOrder(t *testing.T) {
	var acc model.Accumulator
	chunks := []model.Chunk{
		model.ThinkingDelta(0, ""),
		model.ThinkingDelta(0, "Two orders;"),
		model.ThinkingDelta(0, " look both up."),
		model.SignatureDelta(0, "EqQB"),
		model.SignatureDelta(0, "Cg=="),
		model.RedactedThinking("EmwK"),
		model.TextDelta("Checking."),
		model.SignatureDelta(1, "c2ln"), // a thinking block with no text
		model.ToolCallStart(0, "call_a", "lookup_order"),
		model.ToolCallDelta(0, `{"order_id":"A-42"}`),
	}
	for _, c := range chunks {
		if err := acc.Add(c); err != nil {
			t.Fatalf("Add(%+v): %v", c, err)
		}
	}
	resp, err := acc.Finish("test", "", model.Usage{}, "m")
	if err != nil {
		t.Fatal(err)
	}
	got := mustJSON(t, resp.Message)
	want := `{"role":"assistant","content":[` +
		`{"type":"thinking","thinking":"Two orders; look both up.","signature":"EqQBCg=="},` +
		`{"type":"redacted_thinking","data":"EmwK"},` +
		`{"type":"text","text":"Checking."},` +
		`{"type":"thinking","thinking":"","signature":"c2ln"},` +
		`{"type":"tool_use","id":"call_a","name":"lookup_order","input":{"order_id":"A-42"}}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if resp.StopReason != model.StopToolUse || resp.Message.Text() != "Checking." {
		t.Fatalf("stop %q, text %q", resp.StopReason, resp.Message.Text())
	}
}

func TestAccumulatorTreatsMissingArgumentsAsEmptyObject(t *testing.T) {
	var acc model.Accumulator
	_ = acc.Add(model.ToolCallStart(0, "c", "now"))
	resp, err := acc.Finish("test", model.StopToolUse, model.Usage{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if in := string(resp.Message.Content[0].Input); in != `{}` {
		t.Fatalf("input = %s", in)
	}
}

func TestAccumulatorRejectsChunksOutOfOrder(t *testing.T) {
	var acc model.Accumulator
	if err := acc.Add(model.ToolCallDelta(0, "{}")); err == nil {
		t.Fatal("arguments before start accepted")
	}
	_ = acc.Add(model.ToolCallStart(0, "c", "n"))
	if err := acc.Add(model.ToolCallStart(0, "c", "n")); err == nil {
		t.Fatal("second start of the same call accepted")
	}
	_ = acc.Add(model.Done(&model.Response{}))
	if err := acc.Add(model.TextDelta("late")); err == nil {
		t.Fatal("chunk after the final chunk accepted")
	}
}

func TestFinishRejectsArgumentsThatAreNotAJSONObject(t *testing.T) {
	var acc model.Accumulator
	_ = acc.Add(model.ToolCallStart(0, "c", "n"))
	_ = acc.Add(model.ToolCallDelta(0, `{"a":`))
	_, err := acc.Finish("openai", model.StopMaxTokens, model.Usage{}, "")
	if !errors.Is(err, model.ErrBadResponse) {
		t.Fatalf("err = %v, want ErrBadResponse", err)
	}
	if !strings.Contains(err.Error(), "raise MaxTokens") {
		t.Fatalf("error should say what to do: %v", err)
	}
}

func TestToolCallCutShortByTheTokenLimitIsNotRetryableAndPointsOnlyToMaxTokens(t *testing.T) {
	var acc model.Accumulator
	_ = acc.Add(model.ToolCallStart(0, "c", "n"))
	_ = acc.Add(model.ToolCallDelta(0, `{"a":`))
	_, err := acc.Finish("openai", model.StopMaxTokens, model.Usage{}, "")
	var me *model.Error
	if !errors.As(err, &me) || me.Retryable {
		t.Fatalf("err = %#v: the same request would be cut short again, so it is not retryable", err)
	}
	if msg := err.Error(); strings.Contains(msg, "base URL") || strings.Contains(msg, "retrying may help") {
		t.Fatalf("error should point to MaxTokens alone: %v", err)
	}
}

func TestAccumulatorMessageShowsTheAnswerSoFar(t *testing.T) {
	var acc model.Accumulator
	_ = acc.Add(model.TextDelta("Hel"))
	_ = acc.Add(model.TextDelta("lo"))
	if got := acc.Message().Text(); got != "Hello" {
		t.Fatalf("got %q", got)
	}
}

func seqOf(chunks []model.Chunk, err error) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for _, c := range chunks {
			if !yield(c, nil) {
				return
			}
		}
		if err != nil {
			yield(model.Chunk{}, err)
		}
	}
}

func TestCollectReturnsTheFinalResponse(t *testing.T) {
	want := &model.Response{Message: model.AssistantText("hi"), StopReason: model.StopEndTurn}
	got, err := model.Collect(seqOf([]model.Chunk{model.TextDelta("hi"), model.Done(want)}, nil))
	if err != nil || got != want {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestCollectReportsAStreamWithoutFinalChunk(t *testing.T) {
	_, err := model.Collect(seqOf([]model.Chunk{model.TextDelta("hi")}, nil))
	if !errors.Is(err, model.ErrBadResponse) {
		t.Fatalf("err = %v, want ErrBadResponse", err)
	}
}

func TestCollectReturnsTheStreamError(t *testing.T) {
	boom := errors.New("boom")
	_, err := model.Collect(seqOf([]model.Chunk{model.TextDelta("hi")}, boom))
	if err != boom {
		t.Fatalf("err = %v", err)
	}
}

func TestResponseRoundTripsThroughJSON(t *testing.T) {
	in := &model.Response{
		Message:    model.Message{Role: model.RoleAssistant, Content: []model.Block{model.ToolUse("c", "n", json.RawMessage(`{"x":[1,2]}`))}},
		Usage:      model.Usage{InputTokens: 1, OutputTokens: 2},
		StopReason: model.StopToolUse,
		Model:      "m",
	}
	var out model.Response
	if err := json.Unmarshal([]byte(mustJSON(t, in)), &out); err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, out) != mustJSON(t, in) {
		t.Fatalf("round trip changed the response")
	}
}

func TestFinishStoresToolArgumentsCompacted(t *testing.T) {
	for in, want := range map[string]string{
		`{"order_id":"A-42"}`:           `{"order_id":"A-42"}`,
		" { \"q\" : \"<a> & b\" }\n":    `{"q":"<a> & b"}`,
		`{"q":"<b>","n":[1, 2]}`:        `{"q":"<b>","n":[1,2]}`,
		`{"s":"tab\tin \u2028 string"}`: `{"s":"tab\tin \u2028 string"}`,
	} {
		var acc model.Accumulator
		for _, c := range []model.Chunk{model.ToolCallStart(0, "call_a", "search"), model.ToolCallDelta(0, in)} {
			if err := acc.Add(c); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := acc.Finish("test", "", model.Usage{}, "m")
		if err != nil {
			t.Fatal(err)
		}
		if got := string(resp.Message.Content[0].Input); got != want {
			t.Errorf("arguments %q are stored as %s; want %s", in, got, want)
		}
	}
}

// Text pieces join their block however the stream is read: a message read
// while a text block grows shows the text so far, and the block goes on
// growing after it; a text block after another block is a block of its own.
func TestAccumulatorTextGrowsAcrossReadsAndBlocks(t *testing.T) {
	var a model.Accumulator
	add := func(c model.Chunk) {
		t.Helper()
		if err := a.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	add(model.TextDelta("Hello"))
	add(model.TextDelta(","))
	if got := a.Message().Text(); got != "Hello," {
		t.Fatalf("so far: %q", got)
	}
	add(model.TextDelta(" world"))
	add(model.ToolCallStart(0, "c1", "f"))
	add(model.TextDelta("Then"))
	add(model.TextDelta(" more"))
	resp, err := a.Finish("p", "", model.Usage{}, "m")
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Message.Content
	if len(c) != 3 || c[0].Text != "Hello, world" || c[1].Type != model.BlockToolUse || c[2].Text != "Then more" {
		t.Fatalf("got %+v", c)
	}
}
