package vocab

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/internal/schema"
)

// Interruption is an interrupt: a question raised by Interrupt, as recorded in the thread.
type Interruption struct {
	// ID is stable: the same task re-running for a resume raises the same id.
	ID string `json:"id"`
	// Name is the Request's Name, if any.
	Name string `json:"name,omitempty"`
	// Node is the graph node whose task raised the interrupt.
	Node string `json:"node"`
	// Path is the task path: the node, then sub-task keys such as a tool call id.
	Path []string `json:"path,omitempty"`
	// ToolCallID is the tool call that raised the interrupt, or "".
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Message is the question.
	Message string `json:"message"`
	// Reason is the machine-readable reason.
	Reason string `json:"reason"`
	// Value is the data attached for the person answering, as JSON.
	Value json.RawMessage `json:"value,omitempty"`
	// Schema is the JSON Schema the answer must match, or nil.
	Schema json.RawMessage `json:"response_schema,omitempty"`
	// State is the interrupting code's private state, as JSON.
	State json.RawMessage `json:"state,omitempty"`
	// CreatedAt is when the interrupt was raised.
	CreatedAt time.Time `json:"created_at"`
	// ExpiresAt is when the question is meant to stop being open (see Request.TTL),
	// or nil.
	ExpiresAt *time.Time `json:"expires_at"`
	// Trace is the span context of the pause, in the W3C traceparent form
	// ("00-<trace id>-<span id>-<flags>"), when the run that raised it was
	// traced: the run that answers it links to that span, so that a tracing UI
	// joins the question and its answer across processes and days.
	Trace string `json:"trace,omitempty"`
	// Assignees name who may answer (people and groups, see Request.Assignees);
	// empty means anyone allowed to answer questions.
	Assignees []string `json:"assignees,omitempty"`
	// Escalations counts the escalations of the question so far (see
	// graph.Escalation): after each, it may name other assignees.
	Escalations int `json:"escalations,omitempty"`
}

// MayAnswer reports whether a may answer the question: anyone when it names
// no assignee, otherwise an admin, an assignee, or a member of an assigned
// group.
func (q Interruption) MayAnswer(a Answerer) bool {
	if len(q.Assignees) == 0 || a.Admin {
		return true
	}
	for _, who := range q.Assignees {
		if who == a.Name || slices.Contains(a.Groups, who) {
			return true
		}
	}
	return false
}

// Answerer is who answers a question, as the check of its assignees sees it.
type Answerer struct {
	// Name names the person (an API token's name).
	Name string
	// Groups are the groups the person belongs to.
	Groups []string
	// Admin may answer every question.
	Admin bool
}

// MarshalJSON encodes an interrupt with every field a reader looks for: an empty
// name, tool call id, value or response schema is written as null. The private
// state is left out when there is none. It writes the bytes encoding/json
// writes for the fields (see marshalPlain), directly: interrupts are encoded on
// every run answer and every commit of a paused thread.
func (q Interruption) MarshalJSON() ([]byte, error) {
	if b, ok := AppendInterruption(make([]byte, 0, 256+len(q.Message)+len(q.Value)+len(q.Schema)+len(q.State)), &q); ok {
		return b, nil
	}
	return q.marshalPlain()
}

// AppendInterruptionAddress appends the opening of q's encoding, the object's
// brace then its id, node and path, which name the question where it was asked.
func AppendInterruptionAddress(b []byte, q *Interruption) []byte {
	b = append(b, `{"id":`...)
	b = jsonappend.String(b, q.ID)
	b = append(b, `,"node":`...)
	b = jsonappend.String(b, q.Node)
	if len(q.Path) > 0 {
		b = append(b, `,"path":`...)
		b = jsonappend.Strings(b, q.Path)
	}
	return b
}

// AppendInterruption appends q's encoding by MarshalJSON to b, for encoders
// that write a question inside a larger document without a buffer of its own.
// It reports false, with b in any state past its original length, where
// MarshalJSON falls back on encoding/json: the caller then uses MarshalJSON.
func AppendInterruption(b []byte, q *Interruption) ([]byte, bool) {
	b = AppendInterruptionAddress(b, q)
	b = append(b, `,"message":`...)
	b = jsonappend.String(b, q.Message)
	b = append(b, `,"reason":`...)
	b = jsonappend.String(b, q.Reason)
	var ok bool
	if len(q.State) > 0 {
		b = append(b, `,"state":`...)
		if b, ok = jsonappend.Raw(b, q.State); !ok {
			return b, false
		}
	}
	b = append(b, `,"created_at":"`...)
	b, err := q.CreatedAt.AppendText(b)
	if err != nil {
		return b, false
	}
	b = append(b, `","expires_at":`...)
	if q.ExpiresAt == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		if b, err = q.ExpiresAt.AppendText(b); err != nil {
			return b, false
		}
		b = append(b, '"')
	}
	if q.Trace != "" {
		b = append(b, `,"trace":`...)
		b = jsonappend.String(b, q.Trace)
	}
	if len(q.Assignees) > 0 {
		b = append(b, `,"assignees":`...)
		b = jsonappend.Strings(b, q.Assignees)
	}
	if q.Escalations != 0 {
		b = append(b, `,"escalations":`...)
		b = strconv.AppendInt(b, int64(q.Escalations), 10)
	}
	b = append(b, `,"name":`...)
	b = appendStringOrNull(b, q.Name)
	b = append(b, `,"tool_call_id":`...)
	b = appendStringOrNull(b, q.ToolCallID)
	b = append(b, `,"value":`...)
	if b, ok = jsonappend.Raw(b, q.Value); !ok {
		return b, false
	}
	b = append(b, `,"response_schema":`...)
	if b, ok = jsonappend.Raw(b, q.Schema); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// AppendInterruptions appends qs as encoding/json writes a []Interruption: a
// question AppendInterruption leaves is written by its MarshalJSON. It reports
// false, with b in any state past its original length, where that fails.
func AppendInterruptions(b []byte, qs []Interruption) ([]byte, bool) {
	b = append(b, '[')
	ok := true
	for i := range qs {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendEncoded(b, &qs[i]); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// appendEncoded appends q as its MarshalJSON writes it, which is compact with
// HTML characters escaped, as encoding/json leaves it inside a larger value.
func appendEncoded(b []byte, q *Interruption) ([]byte, bool) {
	n := len(b)
	if b, ok := AppendInterruption(b, q); ok {
		return b, true
	}
	data, err := q.MarshalJSON()
	if err != nil {
		return b[:n], false
	}
	return append(b[:n], data...), true
}

// marshalPlain is the interrupt's encoding by encoding/json, which MarshalJSON
// writes directly; MarshalJSON falls back on it for what it does not write
// itself (a raw value to compact or escape, a time out of range), so that
// its output and errors are always these.
func (q Interruption) marshalPlain() ([]byte, error) {
	type plain Interruption
	return json.Marshal(struct {
		plain
		Name       *string         `json:"name"`
		ToolCallID *string         `json:"tool_call_id"`
		Value      json.RawMessage `json:"value"`
		Schema     json.RawMessage `json:"response_schema"`
	}{plain(q), orNull(q.Name), orNull(q.ToolCallID), q.Value, q.Schema})
}

func appendStringOrNull(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return jsonappend.String(b, s)
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// UnmarshalJSON decodes an interrupt, reading a JSON null in an optional field
// (name, tool_call_id, value, response_schema, state, expires_at) as the field
// left out, so that a decoded interrupt equals the one encoded.
func (q *Interruption) UnmarshalJSON(data []byte) error {
	type plain Interruption
	if err := json.Unmarshal(data, (*plain)(q)); err != nil {
		return err
	}
	for _, p := range []*json.RawMessage{&q.Value, &q.Schema, &q.State} {
		if string(*p) == "null" {
			*p = nil
		}
	}
	return nil
}

// Exchange is one question and, once answered, its resolution: in a task's
// interrupt history, in a thread's history, and as the interrupt a task is
// resumed from.
type Exchange struct {
	// Interrupt is the question, with the private State attached.
	Interrupt Interruption `json:"interrupt"`
	// Resolution is its answer, or nil while it is pending.
	Resolution *Resolution `json:"resolution,omitempty"`
}

// DecodeState decodes the private state attached to the interrupt into v; it
// leaves v alone when none was attached.
func (x Exchange) DecodeState(v any) error {
	if len(x.Interrupt.State) == 0 {
		return nil
	}
	return json.Unmarshal(x.Interrupt.State, v)
}

// Check validates a resolution for q: its data against q's response schema for a
// resolved answer. It returns an error matching ErrInvalidResponse that lists the
// first violations and counts them all, or ErrInvalidRequest when the resolution itself is malformed.
// Runtimes call it before accepting an answer; it changes nothing.
func (q Interruption) Check(r Resolution) error {
	if r.err != nil {
		return &Error{Code: CodeInvalidRequest, Message: r.err.Error(), Interrupts: []string{q.ID}, Err: r.err}
	}
	switch r.Status {
	case Resolved:
	case Rejected, Cancelled, Expired:
		return nil
	default:
		return &Error{Code: CodeInvalidRequest, Message: "unknown resolution status " + string(r.Status) + `; use "resolved", "rejected" or "cancelled"`, Interrupts: []string{q.ID}}
	}
	data := r.Response
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	notJSON := func() error {
		return &Error{Code: CodeInvalidRequest, Message: "the answer to " + q.ID + " is not valid JSON", Interrupts: []string{q.ID}}
	}
	var (
		vs    []schema.Violation
		total int
	)
	problem := "does not match its response schema"
	if len(q.Schema) == 0 {
		// Without a schema the answer is still refused if Go would decode it to
		// another value than the one recorded (a key repeated, or twice in two
		// cases); Validate checks that too.
		if !json.Valid(data) {
			return notJSON()
		}
		problem = "is ambiguous"
		vs, total = schema.AmbiguousKeys(data)
	} else {
		s, err := schema.Compile(q.Schema)
		if err != nil {
			if !json.Valid(data) {
				return notJSON()
			}
			return &Error{Code: CodeInvalidRequest, Message: "interrupt " + q.ID + " has an unusable response schema: " + err.Error(), Interrupts: []string{q.ID}}
		}
		var isJSON bool
		// One read of the answer tells whether it is JSON and validates it.
		if vs, total, isJSON = s.ValidateJSON(data); !isJSON {
			return notJSON()
		}
	}
	if total == 0 {
		return nil
	}
	out := &Error{Code: CodeInvalidResponse, Message: "the answer to " + q.ID + " " + problem, Interrupts: []string{q.ID}, TotalViolations: total}
	for _, v := range vs {
		out.Violations = append(out.Violations, Violation(v))
	}
	return out
}
