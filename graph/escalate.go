package graph

import (
	"context"
	"fmt"
	"slices"

	"github.com/interludehq/interlude"
)

// Escalation is a step taken about a question that has waited too long
// without an answer, as the thread's log records it (a checkpoint of kind
// "escalate"): more people are told, or the question is given to others.
// With WithOutbox, the commit writes an interrupt.escalated notice with it.
type Escalation struct {
	// InterruptID names the pending question.
	InterruptID string `json:"interrupt_id"`
	// Step numbers the question's escalations from 1; a step the question
	// has reached already is refused, so that processes that race to
	// escalate it record it once.
	Step int `json:"step"`
	// Notify names the people, groups or channels to tell.
	Notify []string `json:"notify,omitempty"`
	// ReassignTo, if set, replaces the question's assignees
	// (interlude.Request.Assignees).
	ReassignTo []string `json:"reassign_to,omitempty"`
	// By names who escalated (the policy or person).
	By string `json:"by,omitempty"`
}

// Escalate records an escalation of one of the thread's pending questions,
// reassigning it if e says so, and returns the thread as it then is. A step at
// or below the question's count of escalations (Interruption.Escalations) has
// been taken already: it is refused with an error matching
// interlude.ErrConflict. An unknown or closed question is an error matching
// interlude.ErrUnknownInterrupt. Nothing runs.
func (g *Graph[S]) Escalate(ctx context.Context, threadID string, e Escalation) (*Result[S], error) {
	if e.InterruptID == "" || e.Step < 1 {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "an escalation names its interrupt and a step from 1"}
	}
	if slices.Contains(e.ReassignTo, "") {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "an escalation reassigns to an empty name; name people and groups"}
	}
	return g.locked(ctx, threadID, nil, nil, true, func(r *runner[S]) (*Result[S], error) {
		st := r.c.st
		if st == nil {
			return nil, &interlude.Error{Code: interlude.CodeNotFound, Message: fmt.Sprintf("thread %q does not exist", threadID)}
		}
		x := st.exchange(e.InterruptID)
		if x == nil || x.Resolution != nil {
			return nil, &interlude.Error{Code: interlude.CodeUnknownInterrupt, Interrupts: []string{e.InterruptID},
				Message: fmt.Sprintf("thread %q has no pending interrupt %s to escalate", threadID, e.InterruptID)}
		}
		if x.Interrupt.Escalations >= e.Step {
			return nil, &interlude.Error{Code: interlude.CodeConflict, Interrupts: []string{e.InterruptID},
				Message: fmt.Sprintf("interrupt %s has been escalated to step %d already", e.InterruptID, x.Interrupt.Escalations)}
		}
		d := r.control(kindEsc)
		d.Esc = []Escalation{e}
		if err := r.commit(&d); err != nil {
			return nil, err
		}
		return r.result(), nil
	})
}

// applyEscalations applies recorded escalations to the step's questions.
func applyEscalations(xs []interlude.Exchange, es []Escalation) {
	for _, e := range es {
		for i := range xs {
			if xs[i].Interrupt.ID != e.InterruptID {
				continue
			}
			xs[i].Interrupt.Escalations = max(xs[i].Interrupt.Escalations, e.Step)
			if len(e.ReassignTo) > 0 {
				xs[i].Interrupt.Assignees = slices.Clone(e.ReassignTo)
			}
		}
	}
}
