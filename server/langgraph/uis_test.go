package langgraph_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// humanInterrupt is agent-inbox's interrupt value item.
type humanInterrupt struct {
	ActionRequest struct {
		Action string         `json:"action"`
		Args   map[string]any `json:"args"`
	} `json:"action_request"`
	Config      map[string]bool `json:"config"`
	Description string          `json:"description"`
}

// inboxInterrupt reads a thread's interrupt as agent-inbox does
// (getInterruptFromThread): the first item of each task's list, whose value
// is a list of HumanInterrupt.
func inboxInterrupt(t *testing.T, th threadObj) []humanInterrupt {
	t.Helper()
	var items []humanInterrupt
	for _, list := range th.Interrupts {
		if len(list) == 0 {
			t.Fatal("a task's interrupt list is empty; agent-inbox marks such a thread invalid")
		}
		var his []humanInterrupt
		if err := json.Unmarshal(list[0].Value, &his); err != nil {
			t.Fatalf("the interrupt value %s is not a HumanInterrupt list: %v", list[0].Value, err)
		}
		items = append(items, his...)
	}
	return items
}

// TestAgentInboxShowsEditsAndAnswersAnApproval replays agent-inbox's calls
// (reference §6.1) against an agent whose approvals use its format: list the
// interrupted threads of the graph, read the question, answer it with an edit
// in an events stream, read the thread; ignore another; resolve a third.
func TestAgentInboxShowsEditsAndAnswersAnApproval(t *testing.T) {
	s := newLGServer(t)
	start := func() string {
		id := s.newThread()
		s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{
			map[string]any{"type": "human", "content": "Please refund order A-1001 $40"}}}, "assistant_id": "inbox-agent"}, nil)
		return id
	}
	edited, ignored, resolved := start(), start(), start()

	var list []threadObj
	r := s.must(200, "POST", "/threads/search", map[string]any{"offset": 0, "limit": 10, "status": "interrupted", "metadata": map[string]any{"graph_id": "inbox-agent"}}, &list)
	if len(list) != 3 || r.header.Get("X-Pagination-Total") != "3" {
		t.Fatalf("the inbox lists %d threads (total %s), want 3", len(list), r.header.Get("X-Pagination-Total"))
	}
	var th threadObj
	s.must(200, "GET", "/threads/"+edited, nil, &th)
	items := inboxInterrupt(t, th)
	if len(items) != 1 || items[0].ActionRequest.Action != "issue_refund" || items[0].ActionRequest.Args["order_id"] != "A-1001" ||
		!items[0].Config["allow_edit"] || !strings.Contains(items[0].Description, "$40") {
		t.Fatalf("agent-inbox reads the approval as %+v", items)
	}

	// An edit with arguments the tool refuses is refused, and the thread waits on.
	bad := map[string]any{"command": map[string]any{"resume": []any{map[string]any{"type": "edit",
		"args": map[string]any{"action": "issue_refund", "args": map[string]any{"order_id": "A-1001", "amount": -1}}}}},
		"stream_mode": "events", "assistant_id": "inbox-agent"}
	s.must(422, "POST", "/threads/"+edited+"/runs/stream", bad, nil)
	good := map[string]any{"command": map[string]any{"resume": []any{map[string]any{"type": "edit",
		"args": map[string]any{"action": "issue_refund", "args": map[string]any{"order_id": "A-1001", "amount": 25}}}}},
		"stream_mode": "events", "assistant_id": "inbox-agent"}
	r = s.must(200, "POST", "/threads/"+edited+"/runs/stream", good, nil)
	evs := events(t, r.body)
	var sawNode bool
	for _, e := range named(evs, "events") {
		var ev struct {
			Event    string         `json:"event"`
			Metadata map[string]any `json:"metadata"`
		}
		json.Unmarshal(e.data, &ev)
		sawNode = sawNode || ev.Metadata["langgraph_node"] != nil
	}
	if !sawNode || len(named(evs, "error")) > 0 {
		t.Fatalf("the events stream was %v, want node events and no error", evs)
	}
	th = threadObj{}
	s.must(200, "GET", "/threads/"+edited, nil, &th)
	msgs, _ := json.Marshal(th.Values["messages"])
	if th.Status != "idle" || !strings.Contains(string(msgs), "Refunded $25") {
		t.Fatalf("after the edit the thread reads %s %s", th.Status, msgs)
	}

	// Ignore: a background run; the call's question is withdrawn.
	var run map[string]any
	s.must(200, "POST", "/threads/"+ignored+"/runs", map[string]any{"command": map[string]any{"resume": []any{map[string]any{"type": "ignore", "args": nil}}}, "assistant_id": "inbox-agent"}, &run)
	if run["run_id"] == nil || run["thread_id"] != ignored {
		t.Fatalf("the background run is %v", run)
	}
	var joined map[string]any
	s.must(200, "GET", "/threads/"+ignored+"/runs/"+run["run_id"].(string)+"/join", nil, &joined)
	if joined["__interrupt__"] != nil || !strings.Contains(mustJSON(joined["messages"]), "cancelled") {
		t.Fatalf("the ignored approval ended with %v", joined)
	}

	// Resolve: the state update agent-inbox sends.
	var cp struct {
		Checkpoint checkpointObj `json:"checkpoint"`
	}
	s.must(200, "POST", "/threads/"+resolved+"/state", map[string]any{"values": nil, "as_node": "__end__"}, &cp)
	th = threadObj{}
	s.must(200, "GET", "/threads/"+resolved, nil, &th)
	if th.Status == "interrupted" || len(th.Interrupts) != 0 || cp.Checkpoint.CheckpointID == nil {
		t.Fatalf("the resolved thread reads %s with %v", th.Status, th.Interrupts)
	}
	list = nil
	s.must(200, "POST", "/threads/search", map[string]any{"offset": 0, "limit": 10, "status": "interrupted", "metadata": map[string]any{"graph_id": "inbox-agent"}}, &list)
	if len(list) != 0 {
		t.Fatalf("the inbox still lists %d threads", len(list))
	}
}

func mustJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// hitlRequest is LangChain v1's human-in-the-loop interrupt value.
type hitlRequest struct {
	ActionRequests []struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"action_requests"`
	ReviewConfigs []struct {
		ActionName       string   `json:"action_name"`
		AllowedDecisions []string `json:"allowed_decisions"`
	} `json:"review_configs"`
}

// TestAgentChatUIShowsAndAnswersAnApproval replays agent-chat-ui's calls
// (reference §6.2): check /info, list threads, create one, stream a message,
// read the interrupt from the stream's values and from history, answer it with
// decisions, and mark another thread resolved with goto __end__.
func TestAgentChatUIShowsAndAnswersAnApproval(t *testing.T) {
	s := newLGServer(t)
	s.must(200, "GET", "/info", nil, nil)
	s.must(200, "POST", "/threads/search", map[string]any{"metadata": map[string]any{"graph_id": "support-agent"}, "limit": 100, "offset": 0}, nil)
	send := func() string {
		id := s.newThread()
		r := s.must(200, "POST", "/threads/"+id+"/runs/stream", map[string]any{
			"input":       map[string]any{"messages": []any{map[string]any{"id": "m1", "type": "human", "content": []any{map[string]any{"type": "text", "text": "Refund order A-1001 $40"}}}}},
			"stream_mode": []string{"values", "messages-tuple", "custom"}, "stream_subgraphs": true, "stream_resumable": true,
			"on_disconnect": "continue", "assistant_id": "support-agent"}, nil)
		if !strings.HasPrefix(r.header.Get("Content-Location"), "/threads/"+id+"/runs/") || !strings.HasSuffix(r.header.Get("Location"), "/stream") {
			t.Fatalf("the stream's headers are %v", r.header)
		}
		evs := events(t, r.body)
		vals := named(evs, "values")
		if len(vals) == 0 {
			t.Fatal("the stream sent no values")
		}
		var tuple []map[string]any
		if ms := named(evs, "messages"); len(ms) == 0 || json.Unmarshal(ms[0].data, &tuple) != nil || len(tuple) != 2 ||
			tuple[0]["type"] != "AIMessageChunk" || tuple[1]["langgraph_node"] == nil {
			t.Fatalf("the messages-tuple events are %v, want [AIMessageChunk, metadata] pairs", ms)
		}
		var last struct {
			Messages  []map[string]any `json:"messages"`
			Interrupt []lgInterrupt    `json:"__interrupt__"`
		}
		json.Unmarshal(vals[len(vals)-1].data, &last)
		if len(last.Interrupt) != 1 || len(last.Messages) == 0 || last.Messages[len(last.Messages)-1]["type"] != "ai" {
			t.Fatalf("the last values are %s, want the interrupt after an ai message", vals[len(vals)-1].data)
		}
		var req hitlRequest
		if err := json.Unmarshal(last.Interrupt[0].Value, &req); err != nil || len(req.ActionRequests) != 1 || req.ActionRequests[0].Name != "issue_refund" ||
			len(req.ReviewConfigs) != 1 || req.ReviewConfigs[0].ActionName != "issue_refund" || len(req.ReviewConfigs[0].AllowedDecisions) == 0 {
			t.Fatalf("the interrupt value %s is not a HITL request for issue_refund", last.Interrupt[0].Value)
		}
		return id
	}
	answered, resolved := send(), send()

	var hist []stateObj
	s.must(200, "POST", "/threads/"+answered+"/history", map[string]any{"limit": 10}, &hist)
	if len(hist) == 0 || len(hist[0].Tasks) == 0 || len(hist[0].Tasks[len(hist[0].Tasks)-1].Interrupts) != 1 {
		t.Fatalf("history's head %+v does not carry the interrupt in its tasks", hist)
	}
	head := *hist[0].Checkpoint.CheckpointID
	r := s.must(200, "POST", "/threads/"+answered+"/runs/stream", map[string]any{
		"input": map[string]any{}, "command": map[string]any{"resume": map[string]any{"decisions": []any{map[string]any{"type": "approve"}}}},
		"stream_mode": []string{"values", "messages-tuple"}, "stream_resumable": false, "on_disconnect": "cancel",
		"checkpoint": map[string]any{"checkpoint_id": head, "checkpoint_ns": "", "checkpoint_map": nil}, "assistant_id": "support-agent"}, nil)
	vals := named(events(t, r.body), "values")
	if len(vals) == 0 || strings.Contains(string(vals[len(vals)-1].data), "__interrupt__") || !strings.Contains(string(vals[len(vals)-1].data), "Refunded $40") {
		t.Fatalf("after the approval the stream sent %v", vals)
	}
	hist = nil
	s.must(200, "POST", "/threads/"+answered+"/history", map[string]any{"limit": 10}, &hist)
	if len(hist[0].Next) != 0 || len(hist[0].Tasks) != 0 {
		t.Fatalf("history's head after the approval is %+v", hist[0])
	}

	r = s.must(200, "POST", "/threads/"+resolved+"/runs/stream", map[string]any{"input": map[string]any{}, "command": map[string]any{"goto": "__end__"},
		"stream_mode": []string{"values"}, "assistant_id": "support-agent"}, nil)
	var th threadObj
	s.must(200, "GET", "/threads/"+resolved, nil, &th)
	if th.Status == "interrupted" || len(th.Interrupts) != 0 {
		t.Fatalf("the resolved thread reads %s with %v", th.Status, th.Interrupts)
	}
}

// TestAnEditNamingAnotherToolIsRefused checks that an edit changes a call's
// arguments only: an edit naming another tool, in either answer format, is
// refused and the thread waits on; one without a name is the asked tool's.
func TestAnEditNamingAnotherToolIsRefused(t *testing.T) {
	s := newLGServer(t)
	id := s.newThread()
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{
		map[string]any{"type": "human", "content": "Refund order A-1001 $40"}}}, "assistant_id": "support-agent"}, nil)
	args := map[string]any{"order_id": "A-1001", "amount": 5}
	for _, c := range []struct {
		name   string
		resume any
	}{
		{"a decision", map[string]any{"decisions": []any{map[string]any{"type": "edit", "edited_action": map[string]any{"name": "delete_everything", "args": args}}}}},
		{"an agent-inbox response", []any{map[string]any{"type": "edit", "args": map[string]any{"action": "delete_everything", "args": args}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := s.state(id)
			r := s.call("POST", "/threads/"+id+"/runs/wait", map[string]any{"command": map[string]any{"resume": c.resume}, "assistant_id": "support-agent"})
			var e struct {
				Detail string `json:"detail"`
				Code   string `json:"code"`
			}
			r.json(t, &e)
			if r.status != 422 || e.Code != "invalid_response" || !strings.Contains(e.Detail, "issue_refund") {
				t.Fatalf("the edit naming another tool answered %d %s, want 422 invalid_response naming issue_refund", r.status, r.body)
			}
			after := s.state(id)
			if *after.Checkpoint.CheckpointID != *before.Checkpoint.CheckpointID || string(after.Values) != string(before.Values) {
				t.Fatal("the refused edit changed the thread")
			}
		})
	}
	var out map[string]any
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"command": map[string]any{"resume": map[string]any{"decisions": []any{
		map[string]any{"type": "edit", "edited_action": map[string]any{"args": args}}}}}, "assistant_id": "support-agent"}, &out)
	if out["__interrupt__"] != nil || !strings.Contains(mustJSON(out["messages"]), "Refunded $5") {
		t.Fatalf("the edit without a name ended with %v, want the refund of $5", out)
	}
}
