package notify_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
)

// escalate runs the host's escalation and returns how many steps it took.
func (r *mailRig) escalate() int {
	r.t.Helper()
	n, err := r.h.EscalateQuestions(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return n
}

func TestAnUnansweredQuestionIsEscalatedOnceAfterItsDelayAndReassigned(t *testing.T) {
	r := newMailRig(t, 4*time.Hour, []string{"finance"},
		notify.Escalation{Route: notify.Route{Graphs: []string{"payout"}, Reasons: []string{"payout"}}, After: 30 * time.Minute, Notify: []string{"alice"}},
		notify.Escalation{Route: notify.Route{Reasons: []string{"payout"}}, After: time.Hour, ReassignTo: []string{"ops"}, Notify: []string{"ops"}},
		notify.Escalation{Route: notify.Route{Reasons: []string{"other"}}, After: time.Minute, Notify: []string{"gary"}})
	q := r.ask("t1")
	start := r.clock.Now()
	if len(r.mb.mails()) != 2 {
		t.Fatalf("mail on asking: %+v", r.mb.mails())
	}

	r.clock.Set(start.Add(29 * time.Minute))
	if n := r.escalate(); n != 0 {
		t.Fatalf("escalated %d steps before the delay", n)
	}
	r.clock.Set(start.Add(30 * time.Minute))
	if n := r.escalate(); n != 1 {
		t.Fatalf("escalated %d steps at 30m, want 1", n)
	}
	if n := r.escalate(); n != 0 {
		t.Fatalf("escalated the same step again: %d", n)
	}
	r.deliver()
	toAlice := r.mb.to("alice@example.com")
	if len(toAlice) != 1 || !strings.HasPrefix(toAlice[0].Subject, "Still waiting") || !strings.Contains(toAlice[0].Text, "Pay out 500 EUR?") {
		t.Fatalf("the escalation's mail: %+v", toAlice)
	}
	if p := r.pending("t1"); len(p) != 1 || !slices.Equal(p[0].Assignees, []string{"finance"}) || p[0].Escalations != 1 {
		t.Fatalf("after notifying: %+v", p)
	}

	// A restarted host over the same store escalates the next step only.
	r.clock.Set(start.Add(2 * time.Hour))
	r.h = r.newHost(payoutGraph(t, r.st, r.clock.Now, 4*time.Hour, "finance"))
	if n := r.escalate(); n != 1 {
		t.Fatalf("escalated %d steps at 2h after a restart, want 1", n)
	}
	if n := r.escalate(); n != 0 {
		t.Fatalf("escalated again: %d", n)
	}
	r.deliver()
	if m := r.mb.to("olga@example.com"); len(m) != 1 {
		t.Fatalf("the reassigned group was not told: %+v", r.mb.mails())
	}
	if m := r.mb.to("alice@example.com"); len(m) != 1 {
		t.Fatalf("the first step was mailed again: %+v", m)
	}
	p := r.pending("t1")
	if len(p) != 1 || !slices.Equal(p[0].Assignees, []string{"ops"}) || p[0].Escalations != 2 {
		t.Fatalf("after reassigning: %+v", p)
	}

	// The reassignment has authority: finance may no longer answer.
	_, err := r.h.Invoke(interlude.WithAnswerer(context.Background(), interlude.Answerer{Name: "fiona", Groups: []string{"finance"}}),
		"t1", "payout", graph.Resume(interlude.Resolve(true).For(q.ID)))
	if !errors.Is(err, interlude.ErrForbidden) {
		t.Fatalf("an answer from the former assignees: %v", err)
	}

	hist, err := r.h.History(context.Background(), "t1", graph.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var steps []graph.Escalation
	for _, c := range hist {
		if c.Kind == "escalate" {
			steps = append(steps, c.Escalations...)
		}
	}
	slices.SortFunc(steps, func(a, b graph.Escalation) int { return a.Step - b.Step })
	if len(steps) != 2 || !slices.Equal(steps[0].Notify, []string{"alice"}) || !slices.Equal(steps[1].ReassignTo, []string{"ops"}) {
		t.Fatalf("the history's escalations: %+v", steps)
	}

	// At its time to live the question expires as always.
	r.clock.Set(start.Add(4 * time.Hour))
	if n, err := r.h.ExpireQuestions(context.Background()); err != nil || n != 1 {
		t.Fatalf("expired %d, %v", n, err)
	}
	if n := r.escalate(); n != 0 {
		t.Fatalf("escalated a closed question: %d", n)
	}
}

func TestUnaddressedChannelsGetEveryQuestionTheirRouteAllows(t *testing.T) {
	rcv, srv := newReceiver(t)
	r := newMailRigWith(t, 0, []string{"zed"}, []notify.Destination{webhook(t, srv.URL, notify.Route{Types: []string{store.NoticeRaised}})})
	r.ask("t1")
	if len(r.mb.mails()) != 0 {
		t.Fatalf("mailed someone the question does not name: %+v", r.mb.mails())
	}
	got := rcv.wait(t, 1)
	if got[0].Data.Interrupt == nil || !slices.Equal(got[0].Data.Interrupt.Assignees, []string{"zed"}) {
		t.Fatalf("webhook got %+v", got)
	}
}
