package model

import (
	"encoding/json"
	"testing"
)

// Messages encode exactly as encoding/json encodes their fields, whatever their
// text holds.
func TestMessagesEncodeAsEncodingJSONDoes(t *testing.T) {
	texts := []string{"", "plain", `quo"te \ back`, "<b>&</b>", "tab\tnew\nline\x01", "é ünï \u2028 \u2029", "bad \xff utf8"}
	var msgs []Message
	for _, s := range texts {
		msgs = append(msgs,
			Message{Role: RoleUser, Content: []Block{TextBlock(s)}},
			Message{Role: RoleAssistant, Imported: true, Content: []Block{
				{Type: BlockToolUse, ID: "call " + s, Name: s, Input: json.RawMessage(` { "a" : "` + "<&>" + `", "b":[1, 2 ] } `)},
				{Type: BlockToolUse, ID: "c2", Name: "n"},
			}},
			Message{Role: RoleUser, Content: []Block{
				{Type: BlockToolResult, ToolUseID: s, Content: []Block{TextBlock(s)}, IsError: true, Interrupts: json.RawMessage(`[ {"x": "\u2028"} ]`)},
				{Type: BlockToolResult, ToolUseID: "r"},
				{Type: BlockThinking, Thinking: s, Signature: "sig"},
			}},
			Message{Role: RoleSystem},
		)
	}
	for _, m := range msgs {
		got, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if appended, err := m.AppendJSON([]byte("x")); err != nil || string(appended) != "x"+string(got) {
			t.Errorf("AppendJSON wrote %s (%v), json.Marshal %s", appended, err, got)
		}
		type plain Message
		p := plain(m)
		if p.Content == nil {
			p.Content = []Block{}
		}
		// The fields as encoding/json encodes them, each block as marshalBlock does.
		blocks := make([]json.RawMessage, len(p.Content))
		for i, b := range p.Content {
			if b.Type == BlockToolResult {
				inner := make([]json.RawMessage, len(b.Content))
				for j, c := range b.Content {
					inner[j], _ = marshalBlock(c)
				}
				data, _ := json.Marshal(struct {
					Type       BlockType         `json:"type"`
					ToolUseID  string            `json:"tool_use_id"`
					Content    []json.RawMessage `json:"content"`
					IsError    bool              `json:"is_error,omitempty"`
					Interrupts json.RawMessage   `json:"interrupts,omitempty"`
				}{b.Type, b.ToolUseID, append([]json.RawMessage{}, inner...), b.IsError, b.Interrupts})
				blocks[i] = data
				continue
			}
			blocks[i], _ = marshalBlock(b)
		}
		want, _ := json.Marshal(struct {
			Role     Role              `json:"role"`
			Content  []json.RawMessage `json:"content"`
			Imported bool              `json:"imported,omitempty"`
		}{p.Role, blocks, p.Imported})
		if string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}
