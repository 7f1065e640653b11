package host

import (
	"context"
	"errors"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// escalationPage is how many waiting threads one read of the store lists,
// and escalationEvery how often the expiry watch looks for due escalations:
// each look lists every waiting thread of the hosted graphs, so it is kept
// rarer than expiries, and a step is taken within this long of being due.
const (
	escalationPage  = 500
	escalationEvery = 15 * time.Second
)

// EscalateQuestions takes the escalation steps that are due (the policies
// of the host's dispatcher, notify.WithEscalations) for the pending questions
// of the host's graphs, and reports how many it took. Each step is judged
// from the question's creation time and recorded in its thread
// (graph.Graph.Escalate), so a host that restarts, or several sharing a store,
// take each step once. The expiry watch calls it (WithExpiryWatch) at most
// every 15 seconds; without policies it does nothing.
func (h *Host) EscalateQuestions(ctx context.Context) (int, error) {
	d := h.notifier
	if !d.Escalates() {
		return 0, nil
	}
	now, taken := h.now(), 0
	for _, name := range h.names {
		g := h.graphs[name]
		q := store.Query{Status: interlude.ThreadInterrupted, Graph: name, Limit: escalationPage}
		for {
			page, err := h.store.List(ctx, q)
			if err != nil {
				return taken, err
			}
			for _, m := range page.Threads {
				for _, question := range m.Interrupts {
					for _, e := range d.EscalationsFor(name, question, now) {
						_, err := g.Escalate(ctx, m.ThreadID, e)
						switch {
						case err == nil:
							taken++
							h.log.Info("escalated a question", "thread_id", m.ThreadID, "graph", name, "interrupt_id", e.InterruptID, "step", e.Step)
						case errors.Is(err, interlude.ErrUnknownInterrupt), raced(err), ctx.Err() != nil:
						default:
							h.log.Warn("escalating a question failed", "thread_id", m.ThreadID, "graph", name, "interrupt_id", e.InterruptID, "err", err)
						}
						if err != nil {
							break
						}
					}
				}
			}
			if page.NextCursor == "" || ctx.Err() != nil {
				break
			}
			q.Cursor = page.NextCursor
		}
	}
	if taken > 0 {
		d.Wake() // their notices are due now
	}
	return taken, ctx.Err()
}
