package notify

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// Escalation is an escalation policy: a question its route selects (by graph
// and reason) that is still unanswered After it was asked is escalated: the
// people, groups or channels in Notify are told (an interrupt.escalated
// notice, which mail destinations send to them), and, with ReassignTo, the
// question's assignees are replaced. A question that reaches its time to live
// expires as always.
//
// The host applies the policies on its expiry watch (host.Host.
// EscalateQuestions), from each question's creation time: each step is
// recorded in the thread's log (graph.Escalation, in the history as an
// "escalate" checkpoint), once, however many processes watch the store and
// however often they restart.
type Escalation struct {
	// Route selects the questions (its Graphs and Reasons; Types is not used).
	Route
	// After is how long a question waits unanswered before this step.
	After time.Duration
	// Notify names the people and groups to tell (mail destinations map them
	// to addresses); unaddressed destinations, such as webhooks, get the
	// notice if their route takes interrupt.escalated.
	Notify []string
	// ReassignTo, if set, makes these people and groups the question's
	// assignees: only they (and admins) may answer it from then on.
	ReassignTo []string
}

// EscalationConfig is Escalation as a configuration file writes it.
type EscalationConfig struct {
	// Graphs and Reasons select the questions.
	Graphs  []string `json:"graphs,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	// After is a duration such as "30m".
	After string `json:"after"`
	// Notify and ReassignTo are as in Escalation.
	Notify     []string `json:"notify,omitempty"`
	ReassignTo []string `json:"reassign_to,omitempty"`
}

// escalation returns the policy c describes.
func (c EscalationConfig) escalation() (Escalation, error) {
	after, err := time.ParseDuration(c.After)
	if err != nil {
		return Escalation{}, fmt.Errorf("notify: escalation after %q: give a duration such as \"30m\"", c.After)
	}
	return Escalation{Route: Route{Graphs: c.Graphs, Reasons: c.Reasons}, After: after, Notify: c.Notify, ReassignTo: c.ReassignTo}, nil
}

// check refuses a policy that does nothing or never applies.
func (e Escalation) check() error {
	if e.After <= 0 {
		return errors.New("notify: an escalation needs a positive After")
	}
	if len(e.Notify) == 0 && len(e.ReassignTo) == 0 {
		return errors.New("notify: an escalation must notify someone or reassign the question")
	}
	if slices.Contains(e.Notify, "") || slices.Contains(e.ReassignTo, "") {
		return errors.New("notify: an escalation names an empty person or group")
	}
	return nil
}

// WithEscalations sets the escalation policies that the host applies to the
// questions of its graphs (host.Host.EscalateQuestions).
func WithEscalations(es ...Escalation) Option {
	return func(c *config) { c.ext.escalations = append(c.ext.escalations, es...) }
}

// EscalationsFor returns the escalation steps of question q, of the named
// graph, that are due at now and that q has not reached yet (its Escalations
// count), in order. A question's steps are the policies that select it,
// numbered from 1 by their After.
func (d *Dispatcher) EscalationsFor(graphName string, q interlude.Interruption, now time.Time) []graph.Escalation {
	if d == nil {
		return nil
	}
	var steps []Escalation
	n := &Notification{Data: graph.NoticeData{Graph: graphName, Interrupt: &q}}
	n.Notice.Graph = graphName
	for _, e := range d.ext.escalations {
		if (Route{Graphs: e.Graphs, Reasons: e.Reasons}).Wants(n) {
			steps = append(steps, e)
		}
	}
	slices.SortStableFunc(steps, func(a, b Escalation) int { return cmp.Compare(a.After, b.After) })
	var out []graph.Escalation
	for i, e := range steps {
		if i+1 <= q.Escalations || now.Before(q.CreatedAt.Add(e.After)) {
			continue
		}
		out = append(out, graph.Escalation{InterruptID: q.ID, Step: i + 1, Notify: slices.Clone(e.Notify),
			ReassignTo: slices.Clone(e.ReassignTo), By: fmt.Sprintf("escalation after %s", e.After)})
	}
	return out
}

// Escalates reports whether the dispatcher has escalation policies.
func (d *Dispatcher) Escalates() bool { return d != nil && len(d.ext.escalations) > 0 }

// check refuses escalation policies that do nothing or never apply.
func (x *extras) check() error {
	for _, e := range x.escalations {
		if err := e.check(); err != nil {
			return err
		}
	}
	return nil
}
