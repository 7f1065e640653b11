package interlude

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/interludehq/interlude/internal/schema"
	"github.com/interludehq/interlude/internal/task"
	"github.com/interludehq/interlude/internal/tracing"
)

// Interrupt asks a person a question from inside a running node, tool or approval
// hook.
//
// The first time it is reached it records the question and returns a *PausedError
// (matching ErrPaused), which the code must return; the run then ends with status
// interrupted and the pause is committed. When the thread is resumed, the task runs
// again from its top and the k-th Interrupt call returns the k-th answer: the data
// for a resume, an Answer with Cancelled set for a cancel, or a *RejectedError for a
// rejection. The first unanswered call pauses again.
//
// Outside a running task it returns an error matching ErrNotInRun. A Request whose
// Value, State or Schema cannot be encoded, whose Schema does not compile, or whose
// Name repeats an earlier call's in the same task returns an error matching
// ErrInvalidRequest.
func Interrupt(ctx context.Context, req Request) (Answer, error) {
	s := task.From(ctx)
	if s == nil {
		return Answer{}, ErrNotInRun
	}
	id, err := s.NextID(req.Name)
	if err != nil {
		return Answer{}, &Error{Code: CodeInvalidRequest, Message: err.Error()}
	}
	recorded := s.Lookup(id)
	if recorded != nil && recorded.Resolution != nil {
		return answerOf(id, recorded.Resolution)
	}
	in, err := buildInterrupt(id, req, s)
	if err != nil {
		return Answer{}, err
	}
	if recorded != nil {
		// Still pending from an earlier attempt: raise the recorded question again so
		// its creation time and content stay those the person was shown.
		in = recorded.Interrupt
	} else {
		in.Trace = tracing.Pause(ctx, id, req.Name, in.Reason)
	}
	s.Raise(in)
	return Answer{}, &PausedError{Interrupt: in}
}

func answerOf(id string, r *Resolution) (Answer, error) {
	switch r.Status {
	case Resolved:
		return Answer{Data: r.Response, By: r.By, At: r.At}, nil
	case Cancelled, Expired:
		return Answer{Cancelled: true, Expired: r.Status == Expired, By: r.By, At: r.At}, nil
	case Rejected:
		e := &RejectedError{InterruptID: id, By: r.By}
		if r.Error != nil {
			e.Name, e.Message, e.Given = r.Error.Name, r.Error.Message, true
		}
		return Answer{}, e
	}
	return Answer{}, &Error{Code: CodeUnknownFormat, Message: fmt.Sprintf("interrupt %s has a resolution of unknown kind %q", id, r.Status)}
}

func buildInterrupt(id string, req Request, s *task.Scope) (Interruption, error) {
	in := Interruption{ID: id, Name: req.Name, Message: req.Message, Reason: req.Reason, CreatedAt: s.Now()}
	if in.Reason == "" {
		in.Reason = ReasonInputRequired
	}
	var err error
	if in.Value, err = encodeValue(req.Value); err != nil {
		return in, invalidRequest("Request.Value", err)
	}
	if in.State, err = encodeValue(req.State); err != nil {
		return in, invalidRequest("Request.State", err)
	}
	if in.Schema, err = encodeSchema(req.Schema); err != nil {
		return in, invalidRequest("Request.Schema", err)
	}
	if in.Schema != nil {
		if _, err := schema.Compile(in.Schema); err != nil {
			return in, invalidRequest("Request.Schema", err)
		}
	}
	if req.TTL > 0 {
		t := in.CreatedAt.Add(req.TTL)
		in.ExpiresAt = &t
	}
	for _, a := range req.Assignees {
		if a = strings.TrimSpace(a); a == "" {
			return in, &Error{Code: CodeInvalidRequest, Message: "Request.Assignees holds an empty name; name people and groups, or leave it empty for anyone"}
		}
		if !slices.Contains(in.Assignees, a) {
			in.Assignees = append(in.Assignees, a)
		}
	}
	return in, nil
}

func invalidRequest(field string, err error) error {
	return &Error{Code: CodeInvalidRequest, Message: field + " cannot be used: " + err.Error(), Err: err}
}

// Resumption reports the interrupt the running task is being resumed from: the most
// recently raised of its answered interrupts, with the private State the code
// attached to it and the resolution. It reports false on a first attempt and
// outside a running task.
func Resumption(ctx context.Context) (Exchange, bool) {
	s := task.From(ctx)
	if s == nil {
		return Exchange{}, false
	}
	xs := s.Exchanges()
	for i := len(xs) - 1; i >= 0; i-- {
		if xs[i].Resolution != nil {
			return xs[i], true
		}
	}
	return Exchange{}, false
}

// Exchanges returns the interrupt history of the running task (or sub-task, such as
// one tool call) in the current step: each question and its resolution, in the order
// asked. Outside a running task it returns nil.
func Exchanges(ctx context.Context) []Exchange {
	s := task.From(ctx)
	if s == nil {
		return nil
	}
	return s.Exchanges()
}

// IsPaused reports whether err is (or wraps) the pause of an Interrupt call.
func IsPaused(err error) bool { return errors.Is(err, ErrPaused) }
