package termform

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/internal/schema"
	"github.com/interludehq/interlude/internal/termtext"
)

// approvalQuestion is what an agent's tool approval carries in its value.
type approvalQuestion struct {
	Tool        string            `json:"tool"`
	ToolCallID  string            `json:"tool_call_id"`
	Arguments   json.RawMessage   `json:"arguments"`
	InputSchema json.RawMessage   `json:"input_schema"`
	Violations  []json.RawMessage `json:"violations"`
	actions     []string
}

// approvalOf reports whether q is an agent's tool approval: reason tool_approval
// and a response schema whose action property is an enum.
func approvalOf(q interlude.Interruption) (*approvalQuestion, bool) {
	if q.Reason != interlude.ReasonToolApproval || len(q.Schema) == 0 {
		return nil, false
	}
	var s struct {
		Properties struct {
			Action struct {
				Enum []string `json:"enum"`
			} `json:"action"`
		} `json:"properties"`
	}
	if json.Unmarshal(q.Schema, &s) != nil || len(s.Properties.Action.Enum) == 0 {
		return nil, false
	}
	ap := &approvalQuestion{actions: s.Properties.Action.Enum}
	_ = json.Unmarshal(q.Value, ap)
	return ap, true
}

var actionHelp = map[string]string{
	string(agent.ActionApprove): "run the call as it is",
	string(agent.ActionEdit):    "change the arguments, then run it",
	string(agent.ActionReject):  "refuse the call, with a reason the model sees",
	string(agent.ActionRespond): "answer in the tool's place; the tool does not run",
	"cancel":                    "withdraw the question",
}

// approval asks a tool approval as a menu of the actions the schema offers, plus
// cancel.
func (a *Asker) approval(q interlude.Interruption, ap *approvalQuestion) (interlude.Resolution, error) {
	if ap.Tool != "" {
		a.printf("  tool: %s\n", termtext.Line(ap.Tool))
	}
	if len(ap.Arguments) > 0 {
		a.printf("  arguments:\n")
		a.printArguments(ap.Arguments, "    ")
	}
	if len(ap.Violations) > 0 {
		a.printf("  ! the arguments do not match the tool's schema; approving will not run the call, edit them instead:\n")
		for _, v := range ap.Violations {
			var vv struct{ Path, Message string }
			_ = json.Unmarshal(v, &vv)
			a.printf("    %s\n", formatViolation(schema.Violation{Path: vv.Path, Message: vv.Message}))
		}
	}
	options := append(append([]string(nil), ap.actions...), "cancel")
	width := 0
	for _, o := range options {
		width = max(width, len(o))
	}
	menu := func() {
		for i, o := range options {
			a.printf("  %d) %-*s  %s\n", i+1, width, termtext.Line(o), actionHelp[o])
		}
	}
	menu()
	for {
		in, err := a.prompt(fmt.Sprintf("  choice (1-%d): ", len(options)), menu)
		if err != nil {
			return interlude.Resolution{}, err
		}
		choice, msg := pickAction(options, in.text)
		if choice == "" {
			a.printf("  ! %s\n", msg)
			continue
		}
		res, err := a.decide(ap, choice)
		if err != nil {
			return interlude.Resolution{}, err
		}
		if res.Status == "" {
			continue // back to the menu
		}
		if err := q.Check(res); err != nil {
			a.printf("  ! %s\n", oneLine(strings.TrimPrefix(err.Error(), "interlude: ")))
			continue
		}
		return res, nil
	}
}

// Approves reports whether text, typed at a yes/no prompt about a tool call,
// approves it, taking the words the approval form takes for approve: y, yes,
// approve or a prefix of it, in any case. Anything else declines.
func Approves(text string) bool {
	if _, err := strconv.Atoi(strings.TrimSpace(text)); err == nil {
		return false // a number picks from the form's menu, which a prompt has not shown
	}
	action, _ := pickAction([]string{string(agent.ActionApprove), string(agent.ActionReject)}, text)
	return action == string(agent.ActionApprove)
}

// pickAction maps what was typed to an option: its number, its name, a prefix
// naming one option only, or yes/no for approve/reject.
func pickAction(options []string, text string) (string, string) {
	t := strings.ToLower(strings.TrimSpace(text))
	if t == "" {
		return "", fmt.Sprintf("choose one of 1-%d", len(options))
	}
	if i, err := strconv.Atoi(t); err == nil {
		if i >= 1 && i <= len(options) {
			return options[i-1], ""
		}
		return "", fmt.Sprintf("choose one of 1-%d", len(options))
	}
	switch t {
	case "y", "yes":
		t = string(agent.ActionApprove)
	case "n", "no":
		t = string(agent.ActionReject)
	}
	var matches []string
	for _, o := range options {
		if o == t {
			return o, ""
		}
		if strings.HasPrefix(o, t) {
			matches = append(matches, o)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], ""
	case 0:
		return "", fmt.Sprintf("choose one of 1-%d", len(options))
	}
	return "", "did you mean " + strings.Join(matches, " or ") + "?"
}

// decide asks what the chosen action needs. A zero resolution goes back to the
// menu.
func (a *Asker) decide(ap *approvalQuestion, action string) (interlude.Resolution, error) {
	switch action {
	case "cancel":
		return interlude.Cancel(), nil
	case string(agent.ActionApprove):
		return agent.Approve(), nil
	case string(agent.ActionReject):
		in, err := a.prompt("  reason (optional, the model sees it): ", nil)
		if err != nil {
			return interlude.Resolution{}, err
		}
		if in.text == "" && !in.literal {
			return interlude.Resolve(agent.Decision{Action: agent.ActionReject}), nil
		}
		return agent.Deny(in.text), nil
	case string(agent.ActionRespond):
		for {
			in, err := a.prompt("  response* (text the model gets as the tool's result): ", nil)
			if err != nil {
				return interlude.Resolution{}, err
			}
			if in.text != "" || in.literal {
				return agent.RespondWith(in.text), nil
			}
			a.printf("  ! a response is required\n")
		}
	case string(agent.ActionEdit):
		a.printf("  Edit the arguments (Enter keeps the model's value):\n")
		root, err := parseSchema(ap.InputSchema)
		if err != nil {
			return interlude.Resolution{}, err
		}
		f, err := newForm(a, ap.InputSchema, root)
		if err != nil {
			return interlude.Resolution{}, err
		}
		args, err := f.run(ap.Arguments)
		if err != nil {
			return interlude.Resolution{}, err
		}
		return interlude.Resolve(agent.Decision{Action: agent.ActionEdit, Arguments: args}), nil
	}
	// An action this build does not know: answer with it alone and let the
	// schema decide.
	return interlude.Resolve(agent.Decision{Action: agent.Action(action)}), nil
}

// printArguments prints a JSON object as one "key: value" line per field.
func (a *Asker) printArguments(args json.RawMessage, indent string) {
	kvs, err := orderedObject(args)
	if err != nil {
		a.printf("%s%s\n", indent, compact(args))
		return
	}
	for _, kv := range kvs {
		a.printf("%s%s: %s\n", indent, termtext.Line(kv.key), compact(kv.value))
	}
}
