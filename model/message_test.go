package model_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/interludehq/interlude/model"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

func TestUserTextHasTheHTTPAPIWireShape(t *testing.T) {
	got := mustJSON(t, model.UserText("Refund my order"))
	want := `{"role":"user","content":[{"type":"text","text":"Refund my order"}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestBlocksMarshalOnlyTheFieldsOfTheirType(t *testing.T) {
	tests := []struct {
		name  string
		block model.Block
		want  string
	}{
		{"empty text keeps text", model.TextBlock(""), `{"type":"text","text":""}`},
		{"tool use", model.ToolUse("call_1", "lookup_order", json.RawMessage(`{"order_id":"A-42"}`)),
			`{"type":"tool_use","id":"call_1","name":"lookup_order","input":{"order_id":"A-42"}}`},
		{"tool use without input sends {}", model.Block{Type: model.BlockToolUse, ID: "c", Name: "n"},
			`{"type":"tool_use","id":"c","name":"n","input":{}}`},
		{"tool result", model.ToolResult("call_1", "shipped", false),
			`{"type":"tool_result","tool_use_id":"call_1","content":[{"type":"text","text":"shipped"}]}`},
		{"failed tool result", model.ToolResult("call_1", "boom", true),
			`{"type":"tool_result","tool_use_id":"call_1","content":[{"type":"text","text":"boom"}],"is_error":true}`},
		{"tool result with interrupts", model.Block{Type: model.BlockToolResult, ToolUseID: "c", Interrupts: json.RawMessage(`[{"id":"int_1"}]`)},
			`{"type":"tool_result","tool_use_id":"c","content":[],"interrupts":[{"id":"int_1"}]}`},
		{"base64 image", model.ImageData("image/png", "iVBORw0K"),
			`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}}`},
		{"url image", model.ImageAt("https://example.com/a.png"),
			`{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustJSON(t, tt.block)
			if got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			var back model.Block
			if err := json.Unmarshal([]byte(got), &back); err != nil {
				t.Fatal(err)
			}
			if again := mustJSON(t, back); again != got {
				t.Fatalf("round trip changed the block:\n%s\n%s", got, again)
			}
		})
	}
}

func TestToolResultContentMayBeAPlainString(t *testing.T) {
	var b model.Block
	if err := json.Unmarshal([]byte(`{"type":"tool_result","tool_use_id":"c1","content":"42 apples","is_error":true}`), &b); err != nil {
		t.Fatal(err)
	}
	if b.ContentText() != "42 apples" || !b.IsError || b.ToolUseID != "c1" {
		t.Fatalf("got %+v", b)
	}
}

func TestMessageWithoutContentMarshalsAnEmptyList(t *testing.T) {
	got := mustJSON(t, model.Message{Role: model.RoleAssistant})
	if got != `{"role":"assistant","content":[]}` {
		t.Fatal(got)
	}
}

func TestMessageTextAndToolUses(t *testing.T) {
	m := model.Message{Role: model.RoleAssistant, Content: []model.Block{
		model.TextBlock("Let me check. "),
		model.ToolUse("a", "lookup", nil),
		model.TextBlock("One moment."),
		model.ToolUse("b", "weather", json.RawMessage(`{"city":"Oslo"}`)),
	}}
	if got := m.Text(); got != "Let me check. One moment." {
		t.Fatalf("Text() = %q", got)
	}
	uses := m.ToolUses()
	if len(uses) != 2 || uses[0].ID != "a" || uses[1].Name != "weather" {
		t.Fatalf("ToolUses() = %+v", uses)
	}
	if string(uses[0].Input) != `{}` {
		t.Fatalf("nil input should become {}, got %s", uses[0].Input)
	}
	if len(m.ToolResults()) != 0 {
		t.Fatal("no tool results expected")
	}
}

func TestValidateNamesTheProblem(t *testing.T) {
	tests := []struct {
		name string
		msg  model.Message
		want string // substring of the error, "" for valid
	}{
		{"valid user text", model.UserText("hi"), ""},
		{"valid tool round", model.Message{Role: model.RoleUser, Content: []model.Block{model.ToolResult("c", "ok", false)}}, ""},
		{"no role", model.Message{Content: []model.Block{model.TextBlock("x")}}, "no role"},
		{"unknown role", model.Message{Role: "tool"}, `unknown message role "tool"`},
		{"unknown block", model.Message{Role: model.RoleUser, Content: []model.Block{{Type: "video"}}}, `unknown block type "video"`},
		{"tool use in user message", model.Message{Role: model.RoleUser, Content: []model.Block{model.ToolUse("c", "n", nil)}}, "assistant messages"},
		{"tool use without id", model.Message{Role: model.RoleAssistant, Content: []model.Block{model.ToolUse("", "n", nil)}}, "needs an id"},
		{"tool use with array input", model.Message{Role: model.RoleAssistant, Content: []model.Block{model.ToolUse("c", "n", json.RawMessage(`[1]`))}}, "JSON object"},
		{"result without id", model.Message{Role: model.RoleUser, Content: []model.Block{model.ToolResult("", "x", false)}}, "tool_use_id"},
		{"image without data", model.Message{Role: model.RoleUser, Content: []model.Block{model.ImageData("image/png", "")}}, "media_type and data"},
		{"thinking before a tool call", model.Message{Role: model.RoleAssistant, Content: []model.Block{model.ThinkingBlock("hmm", "sig"), model.RedactedThinkingBlock("enc"), model.ToolUse("c", "n", nil)}}, ""},
		{"thinking cut short, without signature", model.Message{Role: model.RoleAssistant, Content: []model.Block{model.ThinkingBlock("hm", "")}}, ""},
		{"thinking in user message", model.Message{Role: model.RoleUser, Content: []model.Block{model.ThinkingBlock("hmm", "sig")}}, "thinking blocks belong in assistant messages"},
		{"redacted thinking in user message", model.Message{Role: model.RoleUser, Content: []model.Block{model.RedactedThinkingBlock("enc")}}, "redacted_thinking blocks belong in assistant messages"},
		{"redacted thinking without data", model.Message{Role: model.RoleAssistant, Content: []model.Block{model.RedactedThinkingBlock("")}}, "needs its data"},
		{"thinking in a tool result", model.Message{Role: model.RoleUser, Content: []model.Block{{Type: model.BlockToolResult, ToolUseID: "c", Content: []model.Block{model.ThinkingBlock("x", "s")}}}}, "not \"thinking\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.msg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestRequestCloneIsDeep(t *testing.T) {
	temp := 0.5
	req := &model.Request{
		System:      "be brief",
		Messages:    []model.Message{model.UserText("hi"), {Role: model.RoleAssistant, Content: []model.Block{model.ToolUse("c", "n", json.RawMessage(`{"a":1}`))}}},
		Tools:       []model.ToolSpec{{Name: "n", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens:   10,
		Temperature: &temp,
	}
	c := req.Clone()
	if !reflect.DeepEqual(c, req) {
		t.Fatalf("clone differs:\n%+v\n%+v", c, req)
	}
	c.Messages[0].Content[0].Text = "changed"
	c.Messages[1].Content[0].Input[2] = 'b'
	c.Tools[0].InputSchema[2] = 'x'
	*c.Temperature = 1
	if req.Messages[0].Content[0].Text != "hi" || string(req.Messages[1].Content[0].Input) != `{"a":1}` ||
		string(req.Tools[0].InputSchema) != `{"type":"object"}` || *req.Temperature != 0.5 {
		t.Fatal("changing the clone changed the original")
	}
}

func TestChunkJSONKeepsToolIndexZero(t *testing.T) {
	if got := mustJSON(t, model.ToolCallStart(0, "c", "n")); got != `{"type":"tool_call_start","index":0,"id":"c","name":"n"}` {
		t.Fatal(got)
	}
	if got := mustJSON(t, model.ToolCallDelta(0, `{"a"`)); got != `{"type":"tool_call_delta","index":0,"input_delta":"{\"a\""}` {
		t.Fatal(got)
	}
	if got := mustJSON(t, model.TextDelta("hi")); got != `{"type":"text_delta","text":"hi"}` {
		t.Fatal(got)
	}
}

func TestChunkJSONKeepsThinkingIndexZero(t *testing.T) {
	if got := mustJSON(t, model.ThinkingDelta(0, "")); got != `{"type":"thinking_delta","index":0}` {
		t.Fatal(got)
	}
	if got := mustJSON(t, model.SignatureDelta(0, "c2ln")); got != `{"type":"signature_delta","index":0,"signature":"c2ln"}` {
		t.Fatal(got)
	}
	if got := mustJSON(t, model.RedactedThinking("ZW5j")); got != `{"type":"redacted_thinking","data":"ZW5j"}` {
		t.Fatal(got)
	}
}

// Thinking blocks keep their exact bytes through JSON, as they do through a
// checkpoint, and are not part of the message's text.
func TestThinkingBlocksRoundTripAndAreNotText(t *testing.T) {
	m := model.Message{Role: model.RoleAssistant, Content: []model.Block{
		model.ThinkingBlock("Check <both> orders & \"quote\"\n\u00e9", "EqQB+/Cg=="),
		model.RedactedThinkingBlock("EmwKAhgBEgy3va3pzix/LafPsn4a"),
		model.TextBlock("Looking."),
		model.ToolUse("c", "lookup", nil),
	}}
	data := mustJSON(t, m)
	want := `{"role":"assistant","content":[` +
		`{"type":"thinking","thinking":"Check \u003cboth\u003e orders \u0026 \"quote\"\né","signature":"EqQB+/Cg=="},` +
		`{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},` +
		`{"type":"text","text":"Looking."},` +
		`{"type":"tool_use","id":"c","name":"lookup","input":{}}]}`
	if data != want {
		t.Fatalf("got  %s\nwant %s", data, want)
	}
	var back model.Message
	if err := json.Unmarshal([]byte(data), &back); err != nil {
		t.Fatal(err)
	}
	m.Content[3].Input = json.RawMessage(`{}`)
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("read back %+v\nwant %+v", back, m)
	}
	if back.Text() != "Looking." {
		t.Fatalf("text = %q", back.Text())
	}
}

func TestRequestValidateNamesTheMessageAndTool(t *testing.T) {
	bad := &model.Request{Messages: []model.Message{model.UserText("hi"), {Role: model.RoleUser, Content: []model.Block{model.ToolUse("c", "n", nil)}}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "message 1: user message, block 0") {
		t.Fatalf("err = %v", err)
	}
	bad = &model.Request{Tools: []model.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`"string"`)}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `tool "t"`) {
		t.Fatalf("err = %v", err)
	}
	if err := (&model.Request{Messages: []model.Message{model.UserText("hi")}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// A cloned message is what cloning each block gives, nil and empty lists
// kept apart, and no two of its lists share room to grow into.
func TestMessageCloneIsBlockByBlock(t *testing.T) {
	m := model.Message{Role: model.RoleUser, Content: []model.Block{
		{Type: model.BlockToolResult, ToolUseID: "a", Content: []model.Block{model.TextBlock("x"), {Type: model.BlockText, Content: []model.Block{}}},
			Interrupts: json.RawMessage(`[1]`), Input: json.RawMessage{}},
		model.ToolUse("c", "n", json.RawMessage(`{"a":1}`)),
		{Type: model.BlockImage, Source: &model.ImageSource{Type: "base64", Data: "AA"}},
	}}
	want := model.Message{Role: m.Role, Content: make([]model.Block, len(m.Content))}
	for i, b := range m.Content {
		want.Content[i] = b.Clone()
	}
	got := m.Clone()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if got.Content[0].Content[1].Content == nil || got.Content[0].Input != nil {
		t.Fatal("nil and empty lists are not kept apart")
	}
	inner := got.Content[0].Content
	_ = append(inner, model.TextBlock("grown"))
	got.Content[0].Interrupts = append(got.Content[0].Interrupts, '!')
	if !reflect.DeepEqual(got.Content[1:], want.Content[1:]) || got.Content[1].Input[0] != '{' {
		t.Fatal("appending to one list wrote into another")
	}
	got.Content[2].Source.Data = "BB"
	if m.Content[2].Source.Data != "AA" {
		t.Fatal("the clone shares the image source")
	}
}
