package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/tool"
)

// Delegation is the transcript of an agent run as a tool of another (AsTool),
// kept in the outer agent's State.Subagents by the outer tool call's id.
type Delegation struct {
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Messages is the inner agent's transcript: the task it was given, its
	// turns and its tool results.
	Messages []model.Message `json:"messages"`
}

// TaskArgs are the arguments of an agent run as a tool.
type TaskArgs struct {
	// Task is what the inner agent is asked to do, as a user message.
	Task string `json:"task"`
}

// AsTool makes a an agent tool named name: a call gives the inner agent the task
// as a user message, runs it to its answer, and returns that answer's text as the
// call's result. The outer model sees only that answer; the inner transcript is
// kept in the outer agent's State.Subagents under the call's id.
//
// The inner agent runs as a subgraph (graph.Subgraph, namespace: the outer tool
// call's path and name) in the outer thread. A question it raises (an approval of
// one of its tool calls, say) is pending on the outer thread, with a path through
// both agents (["tools", "call_1", "billing", "tools", "call_2"]); answering it
// (approve, edit, reject, respond, or any answer) acts on the inner call, and the
// inner agent goes on from its own checkpoint: its finished tool calls and model
// turns are not made again. Sticky approvals given inside hold for that inner
// invocation only.
func AsTool(a *Agent, name, description string) tool.Tool {
	return &agentTool{a: a, name: name, description: description}
}

type agentTool struct {
	a                 *Agent
	name, description string
}

func (t *agentTool) Name() string        { return t.name }
func (t *agentTool) Description() string { return t.description }

func (t *agentTool) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"task":{"type":"string","description":"What to do, in plain words, with every detail needed"}},"required":["task"],"additionalProperties":false}`)
}

func (t *agentTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	var in TaskArgs
	if err := json.Unmarshal(args, &in); err != nil {
		return tool.Errorf("the arguments are not a task: %v", err), nil
	}
	final, err := graph.Subgraph(ctx, t.name, t.a.Graph, State{Messages: []model.Message{model.UserText(in.Task)}})
	if err != nil {
		return tool.Result{}, err
	}
	if id := graph.ToolCallID(ctx); id != "" {
		// Kept with the outer agent's state; refused, and skipped, by other graphs.
		_ = graph.Write(ctx, State{Subagents: map[string]Delegation{id: {Tool: t.name, Messages: final.Messages}}})
	}
	if n := len(final.Messages); n > 0 && final.Messages[n-1].Role == model.RoleAssistant {
		return tool.Result{Content: final.Messages[n-1].Text()}, nil
	}
	return tool.Result{}, &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: fmt.Sprintf("agent tool %s ended without an answer", t.name)}
}
