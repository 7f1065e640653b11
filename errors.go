package interlude

import (
	"errors"

	"github.com/interludehq/interlude/internal/vocab"
)

// Code classifies an Error. Codes are stable strings that the HTTP API also uses.
type Code = vocab.Code

// The codes of Interlude's errors.
const (
	// CodeInvalidRequest: the call or its input is malformed.
	CodeInvalidRequest = vocab.CodeInvalidRequest
	// CodeNotInRun: Interrupt was called outside a running task.
	CodeNotInRun = vocab.CodeNotInRun
	// CodeThreadInterrupted: new input was sent to a thread waiting for answers.
	CodeThreadInterrupted = vocab.CodeThreadInterrupted
	// CodeNotInterrupted: an answer was sent to a thread that is not waiting for one.
	CodeNotInterrupted = vocab.CodeNotInterrupted
	// CodeUnknownInterrupt: the answer names an interrupt that is not pending.
	CodeUnknownInterrupt = vocab.CodeUnknownInterrupt
	// CodeAmbiguousResume: a bare answer was sent while several interrupts are pending.
	CodeAmbiguousResume = vocab.CodeAmbiguousResume
	// CodeInvalidResponse: the answer does not match the interrupt's response schema.
	CodeInvalidResponse = vocab.CodeInvalidResponse
	// CodeConflict: another writer changed the thread first.
	CodeConflict = vocab.CodeConflict
	// CodeThreadBusy: another run holds the thread.
	CodeThreadBusy = vocab.CodeThreadBusy
	// CodeNotFound: the thread does not exist.
	CodeNotFound = vocab.CodeNotFound
	// CodeCancelled: the question was withdrawn.
	CodeCancelled = vocab.CodeCancelled
	// CodeRecursionLimit: a run took more steps than allowed.
	CodeRecursionLimit = vocab.CodeRecursionLimit
	// CodeUnknownFormat: stored data has a format version this build cannot read.
	CodeUnknownFormat = vocab.CodeUnknownFormat
	// CodeInvalidUpdate: a node wrote state that cannot be applied or stored.
	CodeInvalidUpdate = vocab.CodeInvalidUpdate
	// CodeForbidden: the question names who may answer it, and the answerer
	// is not one of them (Request.Assignees).
	CodeForbidden = vocab.CodeForbidden
)

// Error is an Interlude error: a Code to match, a message that says what to do, and
// details where they help. Its Is method matches any *Error with the same code, so
// errors.Is(err, ErrThreadInterrupted) holds for every thread-interrupted error
// whatever its message.
type Error = vocab.Error

// Violation is one way an answer fails its response schema.
type Violation = vocab.Violation

// Values to match with errors.Is. Each matches every *Error of its code, whatever
// the message.
var (
	// ErrInvalidRequest matches errors with CodeInvalidRequest: a malformed call or input.
	ErrInvalidRequest = &Error{Code: CodeInvalidRequest, Message: "invalid request"}
	// ErrNotInRun matches errors with CodeNotInRun: Interrupt called outside a running task.
	ErrNotInRun = &Error{Code: CodeNotInRun, Message: "Interrupt was called outside a running graph task; call it from a node, a tool or an approval hook"}
	// ErrThreadInterrupted matches errors with CodeThreadInterrupted: new input sent
	// to a thread that is waiting for answers.
	ErrThreadInterrupted = &Error{Code: CodeThreadInterrupted, Message: "the thread is waiting for answers to its interrupts; resume, reject or cancel them first"}
	// ErrNotInterrupted matches errors with CodeNotInterrupted: an answer sent to a
	// thread that is not waiting for one.
	ErrNotInterrupted = &Error{Code: CodeNotInterrupted, Message: "the thread is not interrupted; send input instead of an answer"}
	// ErrUnknownInterrupt matches errors with CodeUnknownInterrupt: an answer naming
	// an interrupt that is not pending.
	ErrUnknownInterrupt = &Error{Code: CodeUnknownInterrupt, Message: "no pending interrupt has that id"}
	// ErrAmbiguousResume matches errors with CodeAmbiguousResume: a bare answer sent
	// while several interrupts are pending.
	ErrAmbiguousResume = &Error{Code: CodeAmbiguousResume, Message: "several interrupts are pending; answer them by id"}
	// ErrInvalidResponse matches errors with CodeInvalidResponse: an answer that fails
	// the interrupt's response schema.
	ErrInvalidResponse = &Error{Code: CodeInvalidResponse, Message: "the answer does not match the response schema"}
	// ErrConflict matches errors with CodeConflict: another writer changed the thread first.
	ErrConflict = &Error{Code: CodeConflict, Message: "the thread was changed by another writer; reload it and try again"}
	// ErrForbidden matches errors with CodeForbidden: the answerer is not among
	// the question's assignees.
	ErrForbidden = &Error{Code: CodeForbidden, Message: "only the question's assignees or an admin may answer it"}
	// ErrThreadBusy matches errors with CodeThreadBusy: another run holds the thread.
	ErrThreadBusy = &Error{Code: CodeThreadBusy, Message: "another run holds the thread; try again when it finishes"}
	// ErrNotFound matches errors with CodeNotFound: the thread does not exist.
	ErrNotFound = &Error{Code: CodeNotFound, Message: "no such thread"}
	// ErrCancelled matches errors with CodeCancelled: the question was withdrawn.
	ErrCancelled = &Error{Code: CodeCancelled, Message: "the question was cancelled"}
	// ErrRecursionLimit matches errors with CodeRecursionLimit: a run took more steps
	// than allowed.
	ErrRecursionLimit = &Error{Code: CodeRecursionLimit, Message: "the run exceeded its step limit"}
	// ErrUnknownFormat matches errors with CodeUnknownFormat: stored data has a format
	// version this build cannot read.
	ErrUnknownFormat = &Error{Code: CodeUnknownFormat, Message: "stored data has an unknown format version"}
	// ErrInvalidUpdate matches errors with CodeInvalidUpdate: a node wrote state that
	// cannot be applied or stored.
	ErrInvalidUpdate = &Error{Code: CodeInvalidUpdate, Message: "a node wrote an update that cannot be applied"}

	errPausedSentinel = errors.New("interlude: paused for a human answer")
)

// ErrPaused matches the error Interrupt returns when it pauses the task. Pass it up
// unchanged; the runtime records the pause even if it is swallowed, but code after
// the swallowing point would run on an answer it does not have.
var ErrPaused = errPausedSentinel

// PausedError is the error Interrupt returns when it pauses: the task must stop and
// return it.
type PausedError struct {
	// Interrupt is the question that paused the task.
	Interrupt Interruption
}

// Error names the interrupt that paused the task and reminds the caller to return
// the error unchanged.
func (e *PausedError) Error() string {
	return "interlude: paused for a human answer to interrupt " + e.Interrupt.ID + " (" + e.Interrupt.Message + "); return this error"
}

// Is matches ErrPaused.
func (e *PausedError) Is(target error) bool { return target == ErrPaused }

// RejectedError is what Interrupt returns in a node whose interrupt was rejected.
type RejectedError struct {
	// InterruptID is the rejected interrupt.
	InterruptID string `json:"interrupt_id,omitempty"`
	// Name classifies the rejection.
	Name string `json:"name"`
	// Message explains it; it may be empty.
	Message string `json:"message"`
	// Given reports whether the rejecting person gave a name or message at all.
	Given bool `json:"-"`
	// By names who rejected.
	By string `json:"by,omitempty"`
}

// Error returns "rejected" with the message, or else the name, when there is one.
func (e *RejectedError) Error() string {
	switch {
	case e.Message != "":
		return "rejected: " + e.Message
	case e.Name != "":
		return "rejected: " + e.Name
	}
	return "rejected"
}
