package server_test

import (
	"strings"
	"testing"
)

// Clients are told what was wrong with a body in its own terms: the field and
// the JSON types, never the Go types the server decodes into.
func TestWrongTypedBodiesAreExplainedWithoutGoTypeNames(t *testing.T) {
	e := newEnv(t, setup{graphs: []builder{supportAgent}, tokens: allTokens})
	e.start("refund", "r", `{"amount":1}`)
	cases := []struct {
		name, path, body, field string
	}{
		{"a string for a number", "/v1/graph/invoke", `{"graph":"refund","input":{"amount":"150"}}`, "amount"},
		{"an object for a number", "/v1/graph/invoke", `{"graph":"refund","input":{"amount":{"x":1}}}`, "amount"},
		{"a number for a string", "/v1/graph/invoke", `{"graph":123,"input":{"amount":1}}`, "graph"},
		{"an array for the input", "/v1/graph/invoke", `{"graph":"refund","input":[1]}`, "input"},
		{"a string for the messages", "/v1/graph/invoke", `{"graph":"support-agent","messages":"hi"}`, "messages"},
		{"a number for a role", "/v1/graph/invoke", `{"graph":"support-agent","messages":[{"role":1,"content":[]}]}`, "role"},
		{"a string for the content", "/v1/graph/invoke", `{"graph":"support-agent","messages":[{"role":"user","content":"hi"}]}`, "content"},
		{"a number for a block's text", "/v1/graph/invoke", `{"graph":"support-agent","messages":[{"role":"user","content":[{"type":"text","text":5}]}]}`, "text"},
		{"an object for a thread id", "/v1/graph/invoke", `{"graph":"refund","config":{"thread_id":{}},"input":{"amount":1}}`, "thread_id"},
		{"a string for responses", "/v1/threads/r/resume", `{"responses":"yes"}`, "responses"},
		{"a number for an error message", "/v1/threads/r/reject", `{"error":{"name":"x","message":5}}`, "message"},
		{"a string for the answer", "/v1/threads/r/resume", `{"response":"yes"}`, ""},
		{"a number for a response's status", "/v1/threads/r/resume", `{"responses":[{"interrupt_id":"x","status":1}]}`, "status"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := e.post(c.path, c.body, admin.Secret)
			if a.status < 400 || a.status >= 500 {
				t.Fatalf("status %d: %s", a.status, a.body)
			}
			msg := a.json(t)["error"].(map[string]any)["message"].(string)
			for _, bad := range []string{"Go value", "Go struct", "float64", "int64", "map[string]", "interface {}", "json.RawMessage", "[]model.", "model.", "struct field", "unmarshal"} {
				if strings.Contains(msg, bad) {
					t.Errorf("the message shows %q: %s", bad, msg)
				}
			}
			if !strings.Contains(msg, c.field) {
				t.Errorf("the message does not name %q: %s", c.field, msg)
			}
		})
	}
}
