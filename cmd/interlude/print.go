package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/internal/termform"
	"github.com/interludehq/interlude/model"
)

// printRun prints the answer of a run (run, resume, reject, cancel) for people.
// graph names the thread's graph, for the command that continues it past a
// breakpoint.
func printRun(w io.Writer, res *client.RunResult, graph string) {
	fmt.Fprintf(w, "Thread %s: %s\n", res.ThreadID, res.Status)
	if res.Error != "" {
		fmt.Fprintf(w, "Error: %s\n", res.Error)
	}
	if res.Breakpoint != nil {
		fmt.Fprintf(w, "Paused %s node %s. Continue with: %s run %s --thread %s\n", res.Breakpoint.When, res.Breakpoint.Node, self, quote(graph), quote(res.ThreadID))
	}
	printQuestions(w, res.ThreadID, res.Interrupts)
	if msgs := decodeMessages(res.Messages); len(msgs) > 0 {
		if last := msgs[len(msgs)-1]; last.Role == model.RoleAssistant && last.Text() != "" {
			fmt.Fprintf(w, "Agent: %s\n", oneLine(last.Text()))
		}
		return
	}
	if len(res.Values) > 0 {
		fmt.Fprintf(w, "Values: %s\n", compact(res.Values))
	}
}

// printQuestions prints pending questions with the command that answers each.
func printQuestions(w io.Writer, thread string, qs []interlude.Question) {
	if len(qs) == 0 {
		return
	}
	if len(qs) == 1 {
		fmt.Fprintf(w, "Waiting for 1 answer:\n")
	} else {
		fmt.Fprintf(w, "Waiting for %d answers:\n", len(qs))
	}
	for _, q := range qs {
		printQuestion(w, thread, q)
	}
}

// printQuestion prints one pending question and the commands that answer it.
// They name the interrupt even when it is the only one, so that running one
// again after it succeeded replays the recorded answer instead of being refused.
func printQuestion(w io.Writer, thread string, q interlude.Question) {
	where := "node " + q.Node
	if q.ToolCallID != "" {
		where += ", tool call " + q.ToolCallID
	}
	fmt.Fprintf(w, "  %s (%s, %s)\n", q.ID, where, q.Reason)
	fmt.Fprintf(w, "    %s\n", oneLine(q.Message))
	if actions := approvalActions(q); len(actions) > 0 {
		var v struct {
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(q.Value, &v)
		fmt.Fprintf(w, "    tool: %s %s\n", v.Tool, compact(v.Arguments))
		fmt.Fprintf(w, "    answer: {\"action\": %s} (edit with \"arguments\", reject or respond with \"message\")\n", strings.Join(actions, " | "))
	} else {
		if len(q.Value) > 0 && string(q.Value) != "null" {
			fmt.Fprintf(w, "    value: %s\n", compact(q.Value))
		}
		if len(q.Schema) > 0 {
			fmt.Fprintf(w, "    answer schema: %s\n", compact(q.Schema))
		}
	}
	if q.ExpiresAt != nil {
		fmt.Fprintf(w, "    open until: %s\n", stamp(*q.ExpiresAt))
	}
	id := " --id " + q.ID
	fmt.Fprintf(w, "    resume: %s resume %s%s %s\n", self, thread, id, exampleAnswer(q))
	fmt.Fprintf(w, "    reject: %s reject %s%s --message REASON\n", self, thread, id)
	fmt.Fprintf(w, "    cancel: %s cancel %s%s\n", self, thread, id)
}

// exampleAnswer suggests the shape of an answer, quoted for a shell.
func exampleAnswer(q interlude.Question) string {
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(q.Schema, &s)
	switch {
	case len(approvalActions(q)) > 0:
		return `'{"action": "approve"}'`
	case s.Type == "boolean":
		return "true"
	case s.Type == "object" && len(s.Required) == 1:
		var p struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(s.Properties[s.Required[0]], &p)
		if p.Type == "boolean" {
			return fmt.Sprintf(`'{"%s": true}'`, s.Required[0])
		}
	}
	return "VALUE_JSON"
}

// printConversation prints an agent's transcript.
func printConversation(w io.Writer, msgs []model.Message, indent string) {
	tools := map[string]string{}
	for _, m := range msgs {
		for _, b := range m.Content {
			switch b.Type {
			case model.BlockText:
				if strings.TrimSpace(b.Text) != "" {
					fmt.Fprintf(w, "%s%s: %s\n", indent, speaker(m.Role), oneLine(b.Text))
				}
			case model.BlockToolUse:
				tools[b.ID] = b.Name
				fmt.Fprintf(w, "%s  -> %s %s\n", indent, b.Name, compact(b.Input))
			case model.BlockToolResult:
				fmt.Fprintf(w, "%s  %s\n", indent, toolResult(b, tools))
				for _, x := range exchangesOf(b.Interrupts) {
					fmt.Fprintf(w, "%s     asked %q; %s\n", indent, oneLine(x.Interrupt.Message), answered(x.Resolution))
				}
			}
		}
	}
}

func speaker(r model.Role) string {
	switch r {
	case model.RoleAssistant:
		return "agent"
	case model.RoleUser:
		return "you"
	}
	return string(r)
}

func toolResult(b model.Block, tools map[string]string) string {
	name := tools[b.ToolUseID]
	if name == "" {
		name = b.ToolUseID
	}
	verdict := ""
	if b.IsError {
		verdict = " (error)"
	}
	return fmt.Sprintf("<- %s%s: %s", name, verdict, oneLine(b.ContentText()))
}

func exchangesOf(raw json.RawMessage) []interlude.Exchange {
	var xs []interlude.Exchange
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &xs)
	}
	return xs
}

// answered says how a question was answered, by whom and when.
func answered(r *interlude.Resolution) string {
	if r == nil {
		return "not answered yet"
	}
	s := termform.Describe(*r)
	return s + " (" + by(r.By) + ", " + stamp(r.At) + ")"
}

func by(name string) string {
	if name == "" {
		return "by anonymous"
	}
	return "by " + name
}

func decodeMessages(raw json.RawMessage) []model.Message {
	var msgs []model.Message
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &msgs)
	}
	return msgs
}

func compact(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// approvalActions returns the actions of an agent's tool approval, or nil for
// another question.
func approvalActions(q interlude.Question) []string {
	if q.Reason != interlude.ReasonToolApproval {
		return nil
	}
	var s struct {
		Properties struct {
			Action struct {
				Enum []string `json:"enum"`
			} `json:"action"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(q.Schema, &s)
	return s.Properties.Action.Enum
}
