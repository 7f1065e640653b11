package langgraph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Agent threads keep their conversation under "messages" as Interlude's
// messages (a role and content blocks); LangGraph's clients read and send
// LangChain's (a type, content, an id, tool_calls). These functions translate
// the messages field at the edge and leave every other field alone.

// imsg is the part of an Interlude message this translation reads.
type imsg struct {
	Role    string   `json:"role"`
	Content []iblock `json:"content"`
}

type iblock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []iblock        `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

func blocksText(bs []iblock) string {
	var b strings.Builder
	for _, x := range bs {
		if x.Type == "text" {
			b.WriteString(x.Text)
		}
	}
	return b.String()
}

// lcValues returns values with an Interlude messages field as LangChain
// messages, each with a stable id (its place in the transcript).
func lcValues(v json.RawMessage) json.RawMessage {
	if !bytes.Contains(v, []byte(`"messages"`)) && !bytes.Contains(v, []byte(`\u`)) {
		return v // no field can be named messages, even escaped: nothing to change
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) != nil || obj["messages"] == nil {
		return v
	}
	var msgs []imsg
	if json.Unmarshal(obj["messages"], &msgs) != nil {
		return v
	}
	out := []map[string]any{}
	for i, m := range msgs {
		id := fmt.Sprintf("msg-%d", i)
		switch m.Role {
		case "assistant":
			lm := map[string]any{"type": "ai", "id": id, "content": blocksText(m.Content)}
			calls := []map[string]any{}
			for _, b := range m.Content {
				if b.Type == "tool_use" {
					var args any = map[string]any{}
					json.Unmarshal(b.Input, &args)
					calls = append(calls, map[string]any{"id": b.ID, "name": b.Name, "args": args, "type": "tool_call"})
				}
			}
			lm["tool_calls"] = calls
			out = append(out, lm)
		case "system":
			out = append(out, map[string]any{"type": "system", "id": id, "content": blocksText(m.Content)})
		default:
			var results []iblock
			for _, b := range m.Content {
				if b.Type == "tool_result" {
					results = append(results, b)
				}
			}
			for j, b := range results {
				status := "success"
				if b.IsError {
					status = "error"
				}
				out = append(out, map[string]any{"type": "tool", "id": fmt.Sprintf("%s-%d", id, j), "tool_call_id": b.ToolUseID,
					"content": blocksText(b.Content), "status": status})
			}
			if len(results) == 0 || blocksText(m.Content) != "" {
				out = append(out, map[string]any{"type": "human", "id": id, "content": blocksText(m.Content)})
			}
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return v
	}
	obj["messages"] = data
	res, err := json.Marshal(obj)
	if err != nil {
		return v
	}
	return res
}

// interludeInput returns input whose messages are LangChain's (a type and
// content) as Interlude's: a human message becomes a user message with its
// text. Messages already in Interlude's form pass through, and other types are
// left for the graph to refuse.
func interludeInput(in json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(in, &obj) != nil {
		return in
	}
	return interludeInputOf(in, obj)
}

// interludeInputOf is interludeInput of in, already decoded as obj, which it
// may change.
func interludeInputOf(in json.RawMessage, obj map[string]json.RawMessage) json.RawMessage {
	if obj["messages"] == nil {
		return in
	}
	var msgs []map[string]json.RawMessage
	if json.Unmarshal(obj["messages"], &msgs) != nil {
		return in
	}
	changed := false
	out := make([]any, len(msgs))
	for i, m := range msgs {
		out[i] = m
		var typ string
		if json.Unmarshal(m["type"], &typ) != nil || m["role"] != nil {
			continue
		}
		role := map[string]string{"human": "user", "user": "user"}[typ]
		if role == "" {
			continue
		}
		out[i] = map[string]any{"role": role, "content": []map[string]string{{"type": "text", "text": contentText(m["content"])}}}
		changed = true
	}
	if !changed {
		return in
	}
	obj["messages"], _ = json.Marshal(out)
	res, err := json.Marshal(obj)
	if err != nil {
		return in
	}
	return res
}

// contentText reads LangChain content: a string, or blocks of which the text
// ones count.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, x := range blocks {
		if x.Type == "text" {
			b.WriteString(x.Text)
		}
	}
	return b.String()
}
