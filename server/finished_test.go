package server_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// streamLines decodes an NDJSON stream's {event, data} lines.
func streamLines(t *testing.T, body []byte) (names []string, data []json.RawMessage) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		var l struct {
			Event string          `json:"event"`
			Data  json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		names, data = append(names, l.Event), append(data, l.Data)
	}
	return names, data
}

func TestAWaitingTurnsThreadViewCarriesTheFinishedLookupResult(t *testing.T) {
	e := newEnv(t, setup{graphs: []builder{supportAgent}, tokens: allTokens})
	a := e.post("/v1/graph/stream", `{"graph":"support-agent","config":{"thread_id":"s"},"messages":[{"role":"user","content":[{"type":"text","text":"Please refund order A-1001 ($150), it arrived broken."}]}]}`, runner.Secret)
	expect(t, a, http.StatusOK, "")
	names, data := streamLines(t, a.body)

	// The lookup is reported as it finishes, before the pause, once.
	var lookupID string
	subtask, pause := -1, -1
	for i, n := range names {
		switch {
		case n == "subtask":
			var d struct {
				Node       string   `json:"node"`
				Path       []string `json:"path"`
				ToolCallID string   `json:"tool_call_id"`
				Result     struct {
					Type      string `json:"type"`
					ToolUseID string `json:"tool_use_id"`
				} `json:"result"`
			}
			if err := json.Unmarshal(data[i], &d); err != nil || subtask >= 0 {
				t.Fatalf("subtask events: %s", a.body)
			}
			if d.Node != "tools" || d.ToolCallID == "" || d.Result.Type != "tool_result" || d.Result.ToolUseID != d.ToolCallID || len(d.Path) != 2 {
				t.Fatalf("subtask %s", data[i])
			}
			subtask, lookupID = i, d.ToolCallID
		case n == "updates" && strings.Contains(string(data[i]), `"status":"interrupted"`) && pause < 0:
			pause = i
		}
	}
	if subtask < 0 || pause < 0 || subtask > pause {
		t.Fatalf("want one subtask event before the pause:\n%s", a.body)
	}

	th := e.do(http.MethodGet, "/v1/threads/s", "", reader.Secret)
	expect(t, th, http.StatusOK, "")
	var view struct {
		Status   string `json:"status"`
		Messages []struct {
			Content []struct {
				Type string `json:"type"`
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"content"`
		} `json:"messages"`
		Finished []json.RawMessage `json:"finished_tool_results"`
	}
	if err := json.Unmarshal(th.body, &view); err != nil {
		t.Fatal(err)
	}
	if view.Status != "interrupted" || len(view.Finished) != 1 {
		t.Fatalf("want the waiting turn's lookup result in finished_tool_results: %s", th.body)
	}
	var lookup struct {
		Type      string          `json:"type"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(view.Finished[0], &lookup); err != nil {
		t.Fatal(err)
	}
	last := view.Messages[len(view.Messages)-1].Content
	var named string
	for _, b := range last {
		if b.Type == "tool_use" && b.ID == lookupID {
			named = b.Name
		}
	}
	if lookup.Type != "tool_result" || lookup.ToolUseID != lookupID || named != "lookup_order" || !strings.Contains(string(lookup.Content), "A-1001") {
		t.Fatalf("finished_tool_results[0] = %s (call named %q)", view.Finished[0], named)
	}
	for _, m := range view.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				t.Fatalf("a tool result reached messages before the turn completed: %s", th.body)
			}
		}
	}

	// Once the refund is approved, the results are in messages and the field is gone.
	expect(t, e.post("/v1/threads/s/resume", `{"response":{"action":"approve"}}`, approver.Secret), http.StatusOK, "")
	th = e.do(http.MethodGet, "/v1/threads/s", "", reader.Secret)
	expect(t, th, http.StatusOK, "")
	m := th.json(t)
	if _, ok := m["finished_tool_results"]; ok || !strings.Contains(string(th.body), `"tool_use_id":"`+lookupID+`"`) {
		t.Fatalf("after the turn: %s", th.body)
	}
}
