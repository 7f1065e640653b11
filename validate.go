package interlude

import (
	"encoding/json"

	"github.com/interludehq/interlude/internal/schema"
)

// Check validates a resolution for q: its data against q's response schema for a
// resolved answer. It returns an error matching ErrInvalidResponse that lists the
// first violations and counts them all, or ErrInvalidRequest when the resolution itself is malformed.
// Runtimes call it before accepting an answer; it changes nothing.
func (q Question) Check(r Resolution) error {
	if r.err != nil {
		return &Error{Code: CodeInvalidRequest, Message: r.err.Error(), Interrupts: []string{q.ID}, Err: r.err}
	}
	switch r.Kind {
	case KindResolved:
	case KindRejected, KindCancelled, KindExpired:
		return nil
	default:
		return &Error{Code: CodeInvalidRequest, Message: "unknown resolution status " + string(r.Kind) + `; use "resolved", "rejected" or "cancelled"`, Interrupts: []string{q.ID}}
	}
	data := r.Response
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	if !json.Valid(data) {
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
		problem = "is ambiguous"
		vs, total = schema.AmbiguousKeys(data)
	} else {
		s, err := schema.Compile(q.Schema)
		if err != nil {
			return &Error{Code: CodeInvalidRequest, Message: "interrupt " + q.ID + " has an unusable response schema: " + err.Error(), Interrupts: []string{q.ID}}
		}
		vs, total = s.Validate(data)
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
