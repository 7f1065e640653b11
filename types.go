package interlude

import (
	"encoding/json"
	"time"

	"github.com/interludehq/interlude/internal/jsonerr"
	"github.com/interludehq/interlude/internal/vocab"
)

// Reasons commonly given for an interrupt. Any string is allowed.
const (
	// ReasonInputRequired is the default reason.
	ReasonInputRequired = "input_required"
	// ReasonToolApproval marks a question about whether a tool call may run.
	ReasonToolApproval = "tool_approval"
)

// Request describes a question to ask a person.
type Request struct {
	// Name optionally identifies the call within its task. Named calls keep their id
	// when code around them changes; two calls in one task may not share a name.
	// Unnamed calls are identified by their position among the unnamed calls.
	Name string
	// Message is the question as a person reads it.
	Message string
	// Reason is a machine-readable reason for the pause; ReasonInputRequired if empty.
	Reason string
	// Value is data for the person answering: what to approve, what to choose from.
	Value any
	// Schema is the JSON Schema (2020-12) the answer must match: a json.RawMessage,
	// []byte, string, or any value that encodes to a schema. Nil accepts any answer.
	Schema any
	// State is private state of the interrupting code, kept with the interrupt and
	// handed back by Resumption when the task runs again.
	State any
	// TTL, when positive, is how long the question stays open: it sets ExpiresAt,
	// which the API and the inbox show. Once it passes, the question takes no
	// answer but a cancellation, and it is closed as expired (Expire), which the
	// asking code sees as a cancellation: the server does so by itself within a
	// second or so; a program that runs graphs itself answers with Expire.
	TTL time.Duration
	// Assignees name who may answer: people (the names of API tokens) and
	// groups (as the tokens file assigns them). When set, only they and
	// admins can answer; anyone else is refused with CodeForbidden and the
	// thread is unchanged. Notifications go to them.
	Assignees []string
}

// Answerer is who answers a question, as the check of its assignees sees it
// (Interruption.MayAnswer, WithAnswerer).
type Answerer = vocab.Answerer

// Interruption is an interrupt: a question raised by Interrupt, as recorded in the
// thread. It carries its id, the node and task path that raised it, the message,
// reason, attached value, response schema and private state, and when it was
// raised and expires. Its Check method validates an answer against it.
type Interruption = vocab.Interruption

// ResolutionStatus says how an interrupt was resolved.
type ResolutionStatus = vocab.ResolutionStatus

// The ways an interrupt can be resolved.
const (
	// Resolved answers with data.
	Resolved = vocab.Resolved
	// Rejected declines with an error.
	Rejected = vocab.Rejected
	// Cancelled withdraws the question; Interrupt reports a cancelled answer.
	Cancelled = vocab.Cancelled
	// Expired is a cancellation made because the question's TTL passed (Expire).
	Expired = vocab.Expired
)

// Resolution is the answer to one interrupt, with who gave it and when: its Status,
// the Response data for Resolved, the Error of a rejection, By and At. Its Same
// method compares two answers, and Err reports an answer that could not be encoded.
type Resolution = vocab.Resolution

// Rejection is the error a rejecting person gives: a Name classifying it and a
// Message explaining it.
type Rejection = vocab.Rejection

// Resolve returns a resolution answering with v, encoded as JSON. A []byte, like a
// json.RawMessage, is taken as JSON text already encoded (as graph.Input takes it),
// not as bytes to encode; text that is not valid JSON is refused when the answer is
// checked.
func Resolve(v any) Resolution { return vocab.Resolve(v) }

// Expire returns the resolution that closes a question whose ExpiresAt has passed.
// The asking code sees it as a cancellation; a question that has not expired
// refuses it.
func Expire() Resolution { return Resolution{Status: Expired} }

// Reject returns a resolution declining the interrupt. A nil err gives no reason (the
// agent then tells the model the call was not approved); a *RejectedError keeps its
// name and message, even an empty message; any other error becomes a rejection
// named "Rejected" with the error's text.
func Reject(err error) Resolution {
	r := Resolution{Status: Rejected}
	switch e := err.(type) {
	case nil:
	case *RejectedError:
		r.Error = &Rejection{Name: e.Name, Message: e.Message}
	default:
		r.Error = &Rejection{Name: "Rejected", Message: err.Error()}
	}
	return r
}

// Cancel returns a resolution that withdraws the question.
func Cancel() Resolution { return Resolution{Status: Cancelled} }

// Exchange is one question and, once answered, its resolution: Interrupt is the
// question, Resolution its answer or nil while it is pending.
type Exchange = vocab.Exchange

// Answer is what Interrupt returns once a question is answered.
type Answer struct {
	// Data is the answer as JSON; nil when Cancelled.
	Data json.RawMessage
	// Cancelled reports that the question was withdrawn (cancelled or expired).
	Cancelled bool
	// Expired reports that it was withdrawn because its time to live passed
	// (Request.TTL); Cancelled is set too.
	Expired bool
	// By names who answered.
	By string
	// At is when the answer was committed.
	At time.Time
}

// Decode decodes the answer's data into v. It returns ErrCancelled for a cancelled
// answer.
func (a Answer) Decode(v any) error {
	if a.Cancelled {
		return ErrCancelled
	}
	if err := json.Unmarshal(a.Data, v); err != nil {
		return &Error{Code: CodeInvalidResponse, Message: "the answer does not fit the type it is read into: " + jsonerr.Explain(err), Err: err}
	}
	return nil
}
