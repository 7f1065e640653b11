package vocab

import (
	"strconv"
	"strings"
)

// Code classifies an Error. Codes are stable strings that the HTTP API also uses.
type Code string

// The codes of Interlude's errors.
const (
	// CodeInvalidRequest: the call or its input is malformed.
	CodeInvalidRequest Code = "invalid_request"
	// CodeNotInRun: Interrupt was called outside a running task.
	CodeNotInRun Code = "not_in_run"
	// CodeThreadInterrupted: new input was sent to a thread waiting for answers.
	CodeThreadInterrupted Code = "thread_interrupted"
	// CodeNotInterrupted: an answer was sent to a thread that is not waiting for one.
	CodeNotInterrupted Code = "not_interrupted"
	// CodeUnknownInterrupt: the answer names an interrupt that is not pending.
	CodeUnknownInterrupt Code = "unknown_interrupt"
	// CodeAmbiguousResume: a bare answer was sent while several interrupts are pending.
	CodeAmbiguousResume Code = "ambiguous_resume"
	// CodeInvalidResponse: the answer does not match the interrupt's response schema.
	CodeInvalidResponse Code = "invalid_response"
	// CodeConflict: another writer changed the thread first.
	CodeConflict Code = "conflict"
	// CodeThreadBusy: another run holds the thread.
	CodeThreadBusy Code = "thread_busy"
	// CodeNotFound: the thread does not exist.
	CodeNotFound Code = "not_found"
	// CodeCancelled: the question was withdrawn.
	CodeCancelled Code = "cancelled"
	// CodeRecursionLimit: a run took more steps than allowed.
	CodeRecursionLimit Code = "recursion_limit"
	// CodeUnknownFormat: stored data has a format version this build cannot read.
	CodeUnknownFormat Code = "unknown_format"
	// CodeInvalidUpdate: a node wrote state that cannot be applied or stored.
	CodeInvalidUpdate Code = "invalid_update"
	// CodeForbidden: the question names who may answer it, and the answerer
	// is not one of them (Request.Assignees).
	CodeForbidden Code = "forbidden"
)

// Error is an Interlude error: a Code to match, a message that says what to do, and
// details where they help.
type Error struct {
	// Code classifies the error.
	Code Code
	// Message explains the error and what to do about it.
	Message string
	// Interrupts lists the interrupt ids concerned, such as the pending ones.
	Interrupts []string
	// Violations lists why an answer failed its response schema: the first
	// 20 of them, ordered by path.
	Violations []Violation
	// TotalViolations counts every violation found, described or not; it is
	// larger than len(Violations) when some were left out.
	TotalViolations int
	// Err is an underlying cause, if any.
	Err error
}

// Violation is one way an answer fails its response schema.
type Violation struct {
	// Path is the JSON Pointer of the offending value ("" for the whole answer).
	Path string `json:"path"`
	// Message says what is wrong.
	Message string `json:"message"`
}

// Error returns the message prefixed with "interlude: ", followed by the schema
// violations if there are any.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("interlude: ")
	b.WriteString(e.Message)
	for i, v := range e.Violations {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		p := v.Path
		if p == "" {
			p = "(root)"
		}
		b.WriteString(p + ": " + v.Message)
	}
	if more := e.TotalViolations - len(e.Violations); more > 0 {
		b.WriteString("; and " + strconv.Itoa(more) + " more")
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches any *Error with the same code, so errors.Is(err, ErrThreadInterrupted)
// holds for every thread-interrupted error whatever its message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}
