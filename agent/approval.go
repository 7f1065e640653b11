package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/tool"
)

// approvalName is the Name of approval interrupts; hooks must use other names.
const approvalName = "approval"

// Action is what a person decides about a tool call.
type Action string

// The decisions an approval question accepts.
const (
	// ActionApprove runs the call as the model made it.
	ActionApprove Action = "approve"
	// ActionEdit runs the call with new arguments.
	ActionEdit Action = "edit"
	// ActionReject refuses the call; the model sees the message as an error result.
	ActionReject Action = "reject"
	// ActionRespond answers in the tool's place: the message becomes the call's
	// result and the tool does not run.
	ActionRespond Action = "respond"
)

// Decision is the answer to an approval question. Its JSON form is what the
// question's response schema describes.
type Decision struct {
	// Action is the decision.
	Action Action `json:"action"`
	// Arguments replace the model's arguments (ActionEdit); they must match the
	// tool's input schema, or the answer is refused.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Message is the rejection reason (ActionReject; absent means none given) or the
	// result text (ActionRespond).
	Message *string `json:"message,omitempty"`
	// Sticky, with ActionApprove, approves every later call of the same tool for the
	// rest of the current invocation, without asking.
	Sticky bool `json:"sticky,omitempty"`
}

// Approve is the resolution that lets the call run as it is.
func Approve() interlude.Resolution { return interlude.Resolve(Decision{Action: ActionApprove}) }

// ApproveForRun approves the call and every later call of the same tool in the
// current invocation. The approval is never stored: a restored thread asks again.
func ApproveForRun() interlude.Resolution {
	return interlude.Resolve(Decision{Action: ActionApprove, Sticky: true})
}

// Edit is the resolution that runs the call with args instead. A []byte, like a
// json.RawMessage, is taken as the arguments' JSON text.
func Edit(args any) interlude.Resolution {
	if b, ok := args.([]byte); ok {
		args = json.RawMessage(b)
	}
	data, err := json.Marshal(args)
	if err != nil {
		return interlude.Resolve(args) // reports the encoding error when used
	}
	return interlude.Resolve(Decision{Action: ActionEdit, Arguments: data})
}

// Deny is the resolution that refuses the call with message.
func Deny(message string) interlude.Resolution {
	return interlude.Resolve(Decision{Action: ActionReject, Message: &message})
}

// RespondWith is the resolution that answers in the tool's place with text.
func RespondWith(text string) interlude.Resolution {
	return interlude.Resolve(Decision{Action: ActionRespond, Message: &text})
}

type approval struct {
	when      func(args json.RawMessage) bool
	message   func(Call) string
	ttl       time.Duration
	assignees []string
	schema    atomic.Pointer[decisionSchemaOf] // the last decision schema built
}

// decisionSchemaOf is the decision schema built for a tool's input schema.
type decisionSchemaOf struct{ input, decision json.RawMessage }

// decisionSchema returns the response schema of the approval question for a
// tool with the input schema given, built once for as long as the tool's
// schema stays the same.
func (a *approval) decisionSchema(input json.RawMessage) json.RawMessage {
	if c := a.schema.Load(); c != nil && bytes.Equal(c.input, input) {
		return c.decision
	}
	c := &decisionSchemaOf{input: bytes.Clone(input), decision: decisionSchema(input)}
	a.schema.Store(c)
	return c.decision
}

// ApprovalOption configures an approval policy.
type ApprovalOption func(*approval)

// WithQuestion sets the question shown to the person, from the call.
func WithQuestion(f func(Call) string) ApprovalOption { return func(a *approval) { a.message = f } }

// WithApprovalTTL keeps each approval question open for d at most (interlude.Request.TTL).
// Once d passes, the question is closed as expired (a server does so by itself),
// the call does not run, and the model is told that it was not approved in time.
func WithApprovalTTL(d time.Duration) ApprovalOption { return func(a *approval) { a.ttl = d } }

// AssignTo names who may answer each approval question: people (API token
// names) and groups (interlude.Request.Assignees). Anyone else but an admin
// is refused, and the call waits for them.
func AssignTo(assignees ...string) ApprovalOption {
	return func(a *approval) { a.assignees = append(a.assignees, assignees...) }
}

// RequireApproval asks a person before every call of the tool.
func RequireApproval(toolName string, opts ...ApprovalOption) Option {
	return requireApproval(toolName, nil, opts)
}

// RequireApprovalIf asks a person before the calls of the tool for which when
// reports true. Calls whose arguments do not match the tool's schema are always
// asked about (fail closed), and approving them cannot run the tool on those
// arguments: only an edit with valid arguments can.
func RequireApprovalIf(toolName string, when func(args json.RawMessage) bool, opts ...ApprovalOption) Option {
	return requireApproval(toolName, when, opts)
}

func requireApproval(toolName string, when func(json.RawMessage) bool, opts []ApprovalOption) Option {
	return func(c *config) {
		if _, dup := c.approvals[toolName]; dup {
			c.Refuse("agent.RequireApproval", "approval for %q is required twice; give it once", toolName)
			return
		}
		a := &approval{when: when}
		for _, o := range opts {
			o(a)
		}
		if a.ttl < 0 {
			c.Refuse("agent.WithApprovalTTL", "%v is negative; give a positive time to live, or leave the option out", a.ttl)
			return
		}
		c.approvals[toolName] = a
	}
}

// applies reports whether the call must be asked about. The arguments' validity is
// checked by ask, which asks regardless of when for invalid arguments.
func (a *approval) applies(args json.RawMessage, valid bool) bool {
	return a.when == nil || !valid || a.when(args)
}

func stickyKey(toolName string) string { return "agent.sticky-approval:" + toolName }

// ask puts the approval question for call c of tool t. It returns a result when the
// decision settles the call without running the tool, nil to run it (c's arguments
// possibly edited), or the pause. valid reports that c's arguments, as they are
// on return, have just passed the tool's schema, so that running the call need
// not validate them again.
func (a *approval) ask(ctx context.Context, t tool.Tool, c *Call) (res *tool.Result, valid bool, err error) {
	vs, err := tool.Validate(t, c.Arguments)
	if err != nil {
		return nil, false, err
	}
	if !a.applies(c.Arguments, len(vs) == 0) {
		return nil, len(vs) == 0, nil
	}
	if mem := graph.RunMemory(ctx); mem != nil && len(vs) == 0 {
		if _, ok := mem.Load(stickyKey(c.Tool)); ok {
			return nil, true, nil
		}
	}
	msg := fmt.Sprintf("Allow %s to run with %s?", c.Tool, c.Arguments)
	if a.message != nil {
		msg = a.message(*c)
	}
	ans, err := interlude.Interrupt(ctx, interlude.Request{
		Name:      approvalName,
		Message:   msg,
		Reason:    interlude.ReasonToolApproval,
		Value:     approvalValue(c, t.InputSchema(), vs),
		Schema:    a.decisionSchema(t.InputSchema()),
		TTL:       a.ttl,
		Assignees: a.assignees,
	})
	if err != nil {
		return nil, false, err
	}
	if ans.Cancelled {
		return withdrawn(c.Tool, ans.Expired), false, nil
	}
	var d Decision
	if err := ans.Decode(&d); err != nil {
		return nil, false, err
	}
	switch d.Action {
	case ActionApprove:
		if len(vs) > 0 {
			return &tool.Result{Content: fmt.Sprintf("The call to %s was approved, but its arguments do not match the tool's schema, so it was not run.", c.Tool), IsError: true}, false, nil
		}
		if d.Sticky {
			if mem := graph.RunMemory(ctx); mem != nil {
				mem.Store(stickyKey(c.Tool), true)
			}
		}
		return nil, true, nil
	case ActionEdit:
		c.Arguments = d.Arguments
		return nil, false, nil // the tool's schema may have changed since the answer was checked
	case ActionReject:
		msg, given := "", d.Message != nil
		if given {
			msg = *d.Message
		}
		return &tool.Result{Content: rejectionText(c.Tool, msg, given), IsError: true}, false, nil
	case ActionRespond:
		return &tool.Result{Content: *d.Message}, false, nil
	}
	return nil, false, fmt.Errorf("unknown approval action %q", d.Action)
}

// decisionSchema is the response schema of an approval question: a Decision whose
// edited arguments must match the tool's input schema.
func decisionSchema(input json.RawMessage) json.RawMessage {
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"action":    map[string]any{"enum": []Action{ActionApprove, ActionEdit, ActionReject, ActionRespond}, "description": "approve the call, edit its arguments, reject it, or respond in the tool's place"},
			"arguments": embedded(input),
			"message":   map[string]any{"type": "string", "description": "the reason for a rejection, or the result text of a response"},
			"sticky":    map[string]any{"type": "boolean", "description": "with approve: approve every call of this tool for the rest of this run"},
		},
		"required":             []string{"action"},
		"additionalProperties": false,
		"allOf": []any{
			map[string]any{"if": map[string]any{"properties": map[string]any{"action": map[string]any{"const": ActionEdit}}, "required": []string{"action"}}, "then": map[string]any{"required": []string{"arguments"}}},
			map[string]any{"if": map[string]any{"properties": map[string]any{"action": map[string]any{"const": ActionRespond}}, "required": []string{"action"}}, "then": map[string]any{"required": []string{"message"}}},
		},
	}
	data, _ := json.Marshal(s)
	return data
}

// argumentsID is the base URI given to a tool's input schema inside an approval
// question's schema.
const argumentsID = "urn:interlude:tool-arguments"

// embedded returns the tool's input schema ready to sit inside another schema: an
// object schema with references and without an "$id" gets one, so that its
// references (such as "#/$defs/Node", which Func derives for recursive types)
// still resolve against it rather than against the enclosing schema.
func embedded(input json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if !bytes.Contains(input, []byte(`"$ref"`)) || json.Unmarshal(input, &obj) != nil || obj == nil {
		return input
	}
	if _, ok := obj["$id"]; ok {
		return input
	}
	obj["$id"], _ = json.Marshal(argumentsID)
	data, err := json.Marshal(obj)
	if err != nil {
		return input
	}
	return data
}

// withdrawn is what the model sees for a call whose approval question was
// cancelled, or closed because its time to live passed.
func withdrawn(toolName string, expired bool) *tool.Result {
	if expired {
		return &tool.Result{Content: fmt.Sprintf("The call to %s was not approved in time, so it did not run.", toolName), IsError: true}
	}
	return &tool.Result{Content: fmt.Sprintf("The call to %s was cancelled before it ran.", toolName), IsError: true}
}
