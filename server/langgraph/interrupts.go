package langgraph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/jsonappend"
)

// lgInterrupt is an interrupt as LangGraph clients see it: an id and a value.
// It stands for one Interlude interrupt or, for an agent's tool approvals,
// for all those its model turn raised.
type lgInterrupt struct {
	ID    string `json:"id"`
	Value any    `json:"value"`

	node     string                   // the node that raised it
	members  []interlude.Interruption // the Interlude interrupts it stands for
	approval bool                     // tool approvals of one turn
	format   InterruptFormat
}

// plainValue is the value of a plain interrupt: the question as Interlude
// asked it, so that a generic client shows its message.
type plainValue struct {
	Message     string          `json:"message"`
	Reason      string          `json:"reason"`
	Value       json.RawMessage `json:"value,omitempty"`
	Schema      json.RawMessage `json:"response_schema,omitempty"`
	InterruptID string          `json:"interrupt_id"`
}

// approvalValue is the value the agent attaches to a tool approval question.
type approvalValue struct {
	Tool        string          `json:"tool"`
	ToolCallID  string          `json:"tool_call_id"`
	Arguments   json.RawMessage `json:"arguments"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// isApproval reports whether q is an agent's question about a tool call.
func isApproval(q interlude.Interruption) bool {
	return q.Reason == interlude.ReasonToolApproval && q.ToolCallID != ""
}

func (h *Handler) formatOf(graphName string) InterruptFormat {
	if f, ok := h.formats[graphName]; ok {
		return f
	}
	return FormatHITL
}

// group turns pending Interlude interrupts into LangGraph interrupts: one per
// plain question, and one per node for the tool approvals it raised (an agent's
// tool node raises those of one model turn in one step).
func (h *Handler) group(graphName string, pending []interlude.Interruption) []lgInterrupt {
	out := h.groupMembers(graphName, pending)
	finishAll(out)
	return out
}

// finishAll sets the ids and values of the groups.
func finishAll(groups []lgInterrupt) {
	for i := range groups {
		groups[i].finish()
	}
}

// groupMembers is group without the ids and values (finishAll sets them),
// for what reads only which interrupts a group stands for.
func (h *Handler) groupMembers(graphName string, pending []interlude.Interruption) []lgInterrupt {
	var out []lgInterrupt
	byNode := map[string]int{}
	for _, q := range pending {
		if !isApproval(q) {
			out = append(out, lgInterrupt{node: q.Node, members: []interlude.Interruption{q}})
			continue
		}
		if i, ok := byNode[q.Node]; ok {
			out[i].members = append(out[i].members, q)
			continue
		}
		byNode[q.Node] = len(out)
		out = append(out, lgInterrupt{node: q.Node, members: []interlude.Interruption{q}, approval: true, format: h.formatOf(graphName)})
	}
	return out
}

// finish sets the interrupt's id and value from its members.
func (li *lgInterrupt) finish() {
	ids := make([]string, len(li.members))
	for i, q := range li.members {
		ids[i] = q.ID
	}
	li.ID = interruptID(ids...)
	if !li.approval {
		q := li.members[0]
		li.Value = plainValue{Message: q.Message, Reason: q.Reason, Value: q.Value, Schema: q.Schema, InterruptID: q.ID}
		return
	}
	if li.format == FormatAgentInbox {
		list := make([]map[string]any, len(li.members))
		for i, q := range li.members {
			av := readApproval(q)
			list[i] = map[string]any{
				"action_request": map[string]any{"action": av.Tool, "args": argsObject(av.Arguments)},
				"config":         map[string]bool{"allow_ignore": true, "allow_respond": true, "allow_edit": true, "allow_accept": true},
				"description":    q.Message,
			}
		}
		li.Value = list
		return
	}
	reqs := make([]map[string]any, len(li.members))
	cfgs := make([]map[string]any, len(li.members))
	for i, q := range li.members {
		av := readApproval(q)
		reqs[i] = map[string]any{"name": av.Tool, "args": argsObject(av.Arguments), "description": q.Message}
		cfg := map[string]any{"action_name": av.Tool, "allowed_decisions": []string{"approve", "edit", "reject", "respond"}}
		if len(av.InputSchema) > 0 {
			cfg["args_schema"] = av.InputSchema
		}
		cfgs[i] = cfg
	}
	li.Value = map[string]any{"action_requests": reqs, "review_configs": cfgs}
}

func readApproval(q interlude.Interruption) approvalValue {
	var av approvalValue
	json.Unmarshal(q.Value, &av)
	if av.Tool == "" && len(q.Path) > 0 {
		av.Tool = q.Path[len(q.Path)-1]
	}
	return av
}

// argsObject returns a tool call's arguments as an object: clients show args
// as one, and arguments that are not an object are shown under "arguments".
func argsObject(raw json.RawMessage) any {
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil && m != nil {
		return m
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return map[string]any{"arguments": s}
	}
	return map[string]any{}
}

var hexID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// earlierFunc finds an interrupt of the thread that is no longer pending by
// its LangGraph or Interlude id, as it was grouped while it was pending; it
// returns nil for an id the thread never had.
type earlierFunc func(id string) (*lgInterrupt, error)

// answers turns command.resume into Interlude resolutions of the pending
// interrupts: a map from interrupt id to value answers those named, any other
// value answers the single pending interrupt. Ids are LangGraph's or
// Interlude's own. An id no longer pending is looked up with earlier, and its
// answer passed on under the Interlude ids it stands for: the graph then
// takes the same answer again as a replay and refuses a different one.
func (h *Handler) answers(graphName string, pending []interlude.Interruption, resume json.RawMessage, earlier earlierFunc) (map[string]interlude.Resolution, error) {
	// The groups' ids and values are needed only to answer by id, or to
	// refuse: the usual answer to the one pending interrupt goes without.
	groups := h.groupMembers(graphName, pending)
	notInterrupted := &apiError{status: 409, code: string(interlude.CodeNotInterrupted),
		message: "the thread is not interrupted, so there is nothing to resume; send input instead of command.resume"}
	out := map[string]interlude.Resolution{}
	var keyed map[string]json.RawMessage
	if mayBeKeyed(resume) && json.Unmarshal(resume, &keyed) == nil && len(keyed) > 0 && looksLikeIDs(keyed) {
		finishAll(groups)
		for id, v := range keyed {
			g, member, ok := findInterrupt(groups, id)
			if !ok && earlier != nil {
				prev, err := earlier(id)
				if err != nil {
					return nil, err
				}
				if prev != nil {
					g, member, ok = findInterrupt([]lgInterrupt{*prev}, id)
				}
			}
			if !ok {
				if len(groups) == 0 {
					return nil, notInterrupted
				}
				return nil, &apiError{status: 409, code: string(interlude.CodeUnknownInterrupt), interrupts: lgIDs(groups),
					message: fmt.Sprintf("no pending interrupt has id %q (an answer to an earlier question, or a mistyped id); the pending ones are %s", id, strings.Join(lgIDs(groups), ", "))}
			}
			if member != nil {
				r, err := answerOne(*member, v)
				if err != nil {
					return nil, err
				}
				out[member.ID] = r
				continue
			}
			if err := answerGroup(g, v, out); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if len(groups) == 0 {
		return nil, notInterrupted
	}
	if len(groups) > 1 {
		finishAll(groups)
		return nil, &apiError{status: 409, code: string(interlude.CodeAmbiguousResume), interrupts: lgIDs(groups),
			message: fmt.Sprintf("%d interrupts are pending; resume them by id with a map {interrupt_id: value} (ids %s)", len(groups), strings.Join(lgIDs(groups), ", "))}
	}
	if err := answerGroup(&groups[0], resume, out); err != nil {
		return nil, err
	}
	return out, nil
}

// mayBeKeyed reports false for a resume value that is not a map of interrupt
// ids whatever follows: one whose first key, written without escapes, has
// not the shape of an id (an answer such as {"approved": true}), so that it
// is not decoded as a map for nothing.
func mayBeKeyed(resume json.RawMessage) bool {
	v := bytes.TrimLeft(resume, " \t\r\n")
	if len(v) == 0 || v[0] != '{' {
		return true
	}
	v = bytes.TrimLeft(v[1:], " \t\r\n")
	if len(v) == 0 || v[0] != '"' {
		return true
	}
	end := bytes.IndexByte(v[1:], '"')
	if end < 0 {
		return true
	}
	key := v[1 : 1+end]
	if bytes.IndexByte(key, '\\') >= 0 {
		return true
	}
	return hexID.Match(key) || bytes.HasPrefix(key, []byte("int_"))
}

// looksLikeIDs reports whether a resume object is a map of interrupt ids: all
// its keys have the shape of LangGraph's or Interlude's interrupt ids.
func looksLikeIDs(m map[string]json.RawMessage) bool {
	for k := range m {
		if !hexID.MatchString(k) && !strings.HasPrefix(k, "int_") {
			return false
		}
	}
	return true
}

func lgIDs(groups []lgInterrupt) []string {
	ids := make([]string, len(groups))
	for i, g := range groups {
		ids[i] = g.ID
	}
	return ids
}

// findInterrupt finds id among the LangGraph interrupts, or among the
// Interlude interrupts they stand for (then member is set).
func findInterrupt(groups []lgInterrupt, id string) (*lgInterrupt, *interlude.Interruption, bool) {
	for i := range groups {
		if groups[i].ID == id {
			return &groups[i], nil, true
		}
		for j := range groups[i].members {
			if groups[i].members[j].ID == id {
				return &groups[i], &groups[i].members[j], true
			}
		}
	}
	return nil, nil, false
}

// answerOne answers one Interlude interrupt with a value: null cancels it, a
// LangChain decision or an agent-inbox response answers an approval, anything
// else is the answer itself.
func answerOne(q interlude.Interruption, v json.RawMessage) (interlude.Resolution, error) {
	if isNull(v) {
		return interlude.Cancel(), nil
	}
	if isApproval(q) {
		return approvalAnswer(q, v)
	}
	return interlude.Resolve(json.RawMessage(v)), nil
}

// approvalAnswer reads the answer to tool approval q: a LangChain decision,
// an agent-inbox response (alone or in a list of one), or else the agent's
// own answer (agent.Decision), passed on as it is.
func approvalAnswer(q interlude.Interruption, v json.RawMessage) (interlude.Resolution, error) {
	var list []json.RawMessage
	if json.Unmarshal(v, &list) == nil && len(list) == 1 {
		v = list[0]
	}
	var d struct {
		Type         string          `json:"type"`
		EditedAction json.RawMessage `json:"edited_action"`
	}
	if json.Unmarshal(v, &d) == nil {
		switch d.Type {
		case "approve", "reject", "respond":
			return decision(q, v)
		case "edit":
			if d.EditedAction != nil {
				return decision(q, v)
			}
			return humanResponse(q, v)
		case "accept", "ignore", "response":
			return humanResponse(q, v)
		}
	}
	return interlude.Resolve(json.RawMessage(v)), nil
}

func isNull(v json.RawMessage) bool {
	s := bytes.TrimSpace(v)
	return len(s) == 0 || string(s) == "null"
}

// answerGroup answers the Interlude interrupts a LangGraph interrupt stands for.
func answerGroup(g *lgInterrupt, v json.RawMessage, out map[string]interlude.Resolution) error {
	if !g.approval {
		r, err := answerOne(g.members[0], v)
		out[g.members[0].ID] = r
		return err
	}
	if isNull(v) {
		for _, q := range g.members {
			out[q.ID] = interlude.Cancel()
		}
		return nil
	}
	var hitl struct {
		Decisions []json.RawMessage `json:"decisions"`
	}
	if json.Unmarshal(v, &hitl) == nil && hitl.Decisions != nil {
		if len(hitl.Decisions) != len(g.members) {
			return badRequest("command.resume.decisions has %d decisions, but the interrupt asks about %d tool calls; give one decision per action request, in order", len(hitl.Decisions), len(g.members))
		}
		for i, d := range hitl.Decisions {
			r, err := approvalAnswer(g.members[i], d)
			if err != nil {
				return err
			}
			out[g.members[i].ID] = r
		}
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(v, &list) == nil {
		if len(list) == 0 || len(list) > len(g.members) {
			return badRequest("command.resume has %d responses, but the interrupt asks about %d tool calls; give one response per action request, in order", len(list), len(g.members))
		}
		for i, item := range list {
			r, err := approvalAnswer(g.members[i], item)
			if err != nil {
				return err
			}
			out[g.members[i].ID] = r
		}
		return nil
	}
	if len(g.members) == 1 {
		r, err := approvalAnswer(g.members[0], v)
		out[g.members[0].ID] = r
		return err
	}
	return badRequest(`command.resume must be {"decisions": [...]} with one decision per action request, or a list of agent-inbox responses`)
}

// agentDecision is the answer an agent's approval question takes (the
// question's response schema).
type agentDecision struct {
	Action    string          `json:"action"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Message   *string         `json:"message,omitempty"`
}

// editedTool refuses an edit that names a tool other than the one approval q
// asks about: an edit changes a call's arguments, never which tool runs. An
// empty name is the asked tool's.
func editedTool(q interlude.Interruption, name string) error {
	if name == "" {
		return nil
	}
	if tool := readApproval(q).Tool; name != tool {
		return &apiError{status: http.StatusUnprocessableEntity, code: string(interlude.CodeInvalidResponse),
			message: fmt.Sprintf("the edit names tool %q, but the question asks about a call of %q; an edit changes only the arguments: name %q or leave the name out", name, tool, tool)}
	}
	return nil
}

// decision turns a LangChain v1 decision answering approval q into the
// agent's answer.
func decision(q interlude.Interruption, raw json.RawMessage) (interlude.Resolution, error) {
	var d struct {
		Type         string  `json:"type"`
		Message      *string `json:"message"`
		EditedAction *struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"edited_action"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return interlude.Resolution{}, badRequest("a decision must be an object with a type: %v", err)
	}
	switch d.Type {
	case "approve":
		return interlude.Resolve(agentDecision{Action: "approve"}), nil
	case "edit":
		if d.EditedAction == nil || len(d.EditedAction.Args) == 0 {
			return interlude.Resolution{}, badRequest(`an edit decision needs edited_action with the new args: {"type": "edit", "edited_action": {"name": ..., "args": {...}}}`)
		}
		if err := editedTool(q, d.EditedAction.Name); err != nil {
			return interlude.Resolution{}, err
		}
		return interlude.Resolve(agentDecision{Action: "edit", Arguments: d.EditedAction.Args}), nil
	case "reject":
		return interlude.Resolve(agentDecision{Action: "reject", Message: d.Message}), nil
	case "respond":
		if d.Message == nil {
			return interlude.Resolution{}, badRequest(`a respond decision needs a message: {"type": "respond", "message": "..."}`)
		}
		return interlude.Resolve(agentDecision{Action: "respond", Message: d.Message}), nil
	}
	return interlude.Resolution{}, badRequest("unknown decision type %q; use approve, edit, reject or respond", d.Type)
}

// humanResponse turns an agent-inbox HumanResponse answering approval q into
// the agent's answer.
func humanResponse(q interlude.Interruption, raw json.RawMessage) (interlude.Resolution, error) {
	var hr struct {
		Type string          `json:"type"`
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(raw, &hr); err != nil {
		return interlude.Resolution{}, badRequest("a response must be an object with a type: %v", err)
	}
	switch hr.Type {
	case "accept":
		return interlude.Resolve(agentDecision{Action: "approve"}), nil
	case "ignore":
		return interlude.Cancel(), nil
	case "response":
		var text string
		if err := json.Unmarshal(hr.Args, &text); err != nil {
			return interlude.Resolution{}, badRequest(`a response's args must be the text: {"type": "response", "args": "..."}`)
		}
		return interlude.Resolve(agentDecision{Action: "respond", Message: &text}), nil
	case "edit":
		var ea struct {
			Action string          `json:"action"`
			Args   json.RawMessage `json:"args"`
		}
		if err := json.Unmarshal(hr.Args, &ea); err != nil || len(ea.Args) == 0 {
			return interlude.Resolution{}, badRequest(`an edit response's args must be {"action": ..., "args": {...}}`)
		}
		if err := editedTool(q, ea.Action); err != nil {
			return interlude.Resolution{}, err
		}
		return interlude.Resolve(agentDecision{Action: "edit", Arguments: ea.Args}), nil
	}
	return interlude.Resolution{}, badRequest("unknown response type %q; use accept, edit, response or ignore", hr.Type)
}

// appendInterrupts appends json.Marshal(flat(h.group(graphName, pending))),
// written field by field when every interrupt is a plain question (as a
// paused graph's usually are), and reports false when it is not, or a value
// is not compact JSON, leaving b as it was.
func appendInterrupts(b []byte, pending []interlude.Interruption) ([]byte, bool) {
	start := len(b)
	b = append(b, '[')
	for i, q := range pending {
		if isApproval(q) {
			return b[:start], false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendInterruptID(b, q.ID)
		b = append(b, `,"value":{"message":`...)
		b = jsonappend.String(b, q.Message)
		b = append(b, `,"reason":`...)
		b = jsonappend.String(b, q.Reason)
		ok1, ok2 := true, true
		if len(q.Value) > 0 {
			b = append(b, `,"value":`...)
			b, ok1 = jsonappend.Raw(b, q.Value)
		}
		if len(q.Schema) > 0 {
			b = append(b, `,"response_schema":`...)
			b, ok2 = jsonappend.Raw(b, q.Schema)
		}
		if !ok1 || !ok2 {
			return b[:start], false
		}
		b = append(b, `,"interrupt_id":`...)
		b = jsonappend.String(b, q.ID)
		b = append(b, "}}"...)
	}
	return append(b, ']'), true
}

// flat lists the LangGraph interrupts of a list of groups, for top-level
// fields.
func flat(groups []lgInterrupt) []lgInterrupt {
	if groups == nil {
		return []lgInterrupt{}
	}
	return slices.Clone(groups)
}
