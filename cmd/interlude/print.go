package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/termform"
	"github.com/interludehq/interlude/internal/termtext"
	"github.com/interludehq/interlude/model"
)

// printRun prints the answer of a run (run, resume, reject, cancel) for people.
// graph names the thread's graph, for the command that continues it past a
// breakpoint; srv ends each command printed (see remote.serverArg).
func printRun(w io.Writer, res *graph.Result[json.RawMessage], graph, srv string) {
	for _, rp := range res.Replays {
		who := "anonymous"
		if rp.By != "" {
			who = line(rp.By)
		}
		fmt.Fprintf(w, "Interrupt %s was already answered by %s at %s; your answer was not applied again.\n", line(rp.InterruptID), who, stamp(rp.At))
	}
	fmt.Fprintf(w, "Thread %s: %s\n", line(res.ThreadID), line(string(res.Status)))
	if res.Error != "" {
		fmt.Fprintf(w, "Error: %s\n", oneLine(res.Error))
	}
	if res.Breakpoint != nil {
		fmt.Fprintf(w, "Paused %s node %s. Continue with: %s run %s --thread %s%s\n", line(string(res.Breakpoint.When)), line(res.Breakpoint.Node), self, line(quote(graph)), line(quote(res.ThreadID)), srv)
	}
	printQuestions(w, graph, res.ThreadID, res.Interrupts, srv)
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

// printQuestions prints pending questions with the command that answers each,
// ending with srv.
func printQuestions(w io.Writer, graph, thread string, qs []interlude.Interruption, srv string) {
	if len(qs) == 0 {
		return
	}
	if len(qs) == 1 {
		fmt.Fprintf(w, "Waiting for 1 answer:\n")
	} else {
		fmt.Fprintf(w, "Waiting for %d answers:\n", len(qs))
	}
	for _, q := range qs {
		printQuestion(w, graph, thread, q, srv)
	}
}

// breadcrumb is where a question raised inside a subgraph or an inner agent was
// asked, for people: the graph, the subgraphs (an agent's tool calls shown by
// the agent tool's name), and the tool asked about, as in
// "team-agent › billing › issue_refund". It is "" for a question of a plain node
// or a top-level tool call, whose place the node and tool call say.
func breadcrumb(graph string, q interlude.Interruption) string {
	if len(q.Path) < 2 || len(q.Path) == 2 && q.ToolCallID != "" {
		return ""
	}
	parts := []string{graph}
	for i := 0; i < len(q.Path); i++ {
		if q.Path[i] == agent.ToolsNode && i+1 < len(q.Path) {
			i++ // a tool call: the agent tool's name follows, or the tool below
			continue
		}
		parts = append(parts, q.Path[i])
	}
	var v struct {
		Tool string `json:"tool"`
	}
	if q.Reason == interlude.ReasonToolApproval && json.Unmarshal(q.Value, &v) == nil && v.Tool != "" {
		parts = append(parts, v.Tool)
	}
	for i, p := range parts {
		parts[i] = line(p)
	}
	return strings.Join(parts, " › ")
}

// printQuestion prints one pending question and the commands that answer it.
// They name the interrupt even when it is the only one, so that running one
// again after it succeeded replays the recorded answer instead of being refused.
func printQuestion(w io.Writer, graph, thread string, q interlude.Interruption, srv string) {
	where := "node " + line(q.Node)
	if q.ToolCallID != "" {
		where += ", tool call " + line(q.ToolCallID)
	}
	thread = line(thread)
	fmt.Fprintf(w, "  %s (%s, %s)\n", line(q.ID), where, line(q.Reason))
	if b := breadcrumb(graph, q); b != "" {
		fmt.Fprintf(w, "    at: %s\n", b)
	}
	fmt.Fprintf(w, "    %s\n", oneLine(q.Message))
	if actions := approvalActions(q); len(actions) > 0 {
		var v struct {
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(q.Value, &v)
		fmt.Fprintf(w, "    tool: %s %s\n", line(v.Tool), compact(v.Arguments))
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
	id := " --id " + line(q.ID)
	fmt.Fprintf(w, "    resume: %s resume %s%s %s%s\n", self, thread, id, exampleAnswer(q), srv)
	fmt.Fprintf(w, "    reject: %s reject %s%s --message REASON%s\n", self, thread, id, srv)
	fmt.Fprintf(w, "    cancel: %s cancel %s%s%s\n", self, thread, id, srv)
}

// exampleAnswer suggests the shape of an answer, quoted for a shell.
func exampleAnswer(q interlude.Interruption) string {
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
				fmt.Fprintf(w, "%s  -> %s %s\n", indent, line(b.Name), compact(b.Input))
			case model.BlockToolResult:
				printToolResult(w, b, tools, indent)
			}
		}
	}
}

// printToolResult prints a tool's result with the questions its call asked.
func printToolResult(w io.Writer, b model.Block, tools map[string]string, indent string) {
	fmt.Fprintf(w, "%s  %s\n", indent, toolResult(b, tools))
	for _, x := range exchangesOf(b.Interrupts) {
		fmt.Fprintf(w, "%s     asked \"%s\"; %s\n", indent, oneLine(x.Interrupt.Message), answered(x.Resolution))
	}
}

// printWaitingTurn follows a conversation whose last turn's tool calls wait:
// it prints, in call order, the results of the calls that have finished
// (finished, not yet in the transcript) and, for each call a pending question
// is about, that it waits for an answer. It returns the tool call ids whose
// results it printed.
func printWaitingTurn(w io.Writer, msgs []model.Message, finished []model.Block, pending []interlude.Interruption, indent string) []string {
	if len(msgs) == 0 {
		return nil
	}
	calls := msgs[len(msgs)-1].ToolUses()
	tools := make(map[string]string, len(calls))
	for _, c := range calls {
		tools[c.ID] = c.Name
	}
	var shown []string
	for _, c := range calls {
		if i := slices.IndexFunc(finished, func(b model.Block) bool { return b.ToolUseID == c.ID }); i >= 0 {
			printToolResult(w, finished[i], tools, indent)
			shown = append(shown, c.ID)
			continue
		}
		if slices.ContainsFunc(pending, func(q interlude.Interruption) bool { return q.ToolCallID == c.ID }) {
			fmt.Fprintf(w, "%s  .. %s waits for an answer\n", indent, line(c.Name))
		}
	}
	return shown
}

func speaker(r model.Role) string {
	switch r {
	case model.RoleAssistant:
		return "agent"
	case model.RoleUser:
		return "you"
	}
	return line(string(r))
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
	return fmt.Sprintf("<- %s%s: %s", line(name), verdict, oneLine(b.ContentText()))
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
	s := oneLine(termform.Describe(*r))
	return s + " (" + by(r.By) + ", " + stamp(r.At) + ")"
}

func by(name string) string {
	if name == "" {
		return "by anonymous"
	}
	return "by " + line(name)
}

func decodeMessages(raw json.RawMessage) []model.Message {
	var msgs []model.Message
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &msgs)
	}
	return msgs
}

// compact shows a JSON value on one line, safe to print.
func compact(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return line(string(v))
	}
	return line(b.String())
}

// oneLine shows text from a thread on one line, its runs of white space folded
// into single spaces and its control characters escaped.
func oneLine(s string) string { return line(strings.Join(strings.Fields(s), " ")) }

// line shows text from a thread or the server as one line, with its control
// characters and bidirectional overrides escaped, so that it cannot act on the
// terminal. Everything the commands print that they did not write themselves
// goes through it.
func line(s string) string { return termtext.Line(s) }

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// approvalActions returns the actions of an agent's tool approval, or nil for
// another question.
func approvalActions(q interlude.Interruption) []string {
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
