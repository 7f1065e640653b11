package host

import (
	"context"
	"errors"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
)

// ExpiryActor is the name an expiry is recorded as given by, in each question's
// resolution and in the history.
const ExpiryActor = "interlude"

// expiryPage is how many threads with expired questions one look closes, and
// expiryRuns how many of their runs go at once.
const (
	expiryPage = 100
	expiryRuns = 4
)

// ExpireQuestions closes, as expired, the pending questions whose time to live has
// passed, and runs their threads on, a few at a time, so that one slow run (an
// agent waiting for its model) does not hold the others up; it reports how many
// questions it closed. A thread that another run holds, or whose question was
// answered meanwhile, is left to that run. Threads of graphs this host does not
// host are left to a host that does. The expiry watch calls it every second
// (WithExpiryWatch); it fails if the store does not list expiries.
func (h *Host) ExpireQuestions(ctx context.Context) (int, error) {
	idx, ok := store.As[store.ExpiryIndex](h.store)
	if !ok {
		return 0, errors.New("host: the store does not list expired questions (store.ExpiryIndex)")
	}
	now := h.now()
	due, err := idx.Expired(ctx, now, h.names, expiryPage)
	if err != nil {
		return 0, err
	}
	closed := h.eachThread(ctx, due, expiryRuns, func(g graph.Erased, m store.Meta) int {
		if answers := dueAnswers(m, now); len(answers) > 0 {
			return h.expire(ctx, g, m, answers)
		}
		return 0
	})
	return closed, ctx.Err()
}

// dueAnswers returns an expiry for each of m's pending questions whose time has
// passed at now.
func dueAnswers(m store.Meta, now time.Time) map[string]interlude.Resolution {
	answers := map[string]interlude.Resolution{}
	for _, q := range m.Interrupts {
		if q.ExpiresAt != nil && !now.Before(*q.ExpiresAt) {
			answers[q.ID] = interlude.Expire()
		}
	}
	return answers
}

// expire closes the thread's expired questions (answers) and runs it on, and
// reports how many it closed.
func (h *Host) expire(ctx context.Context, g graph.Erased, m store.Meta, answers map[string]interlude.Resolution) int {
	ctx, span := h.startWatch(ctx, "interlude.expire", m)
	res, err := h.run(interlude.WithActor(ctx, ExpiryActor), m.ThreadID, true, graph.Respond(answers))
	defer endWatch(span, res, err)
	failed := err != nil && res != nil && res.Status == interlude.RunFailed // closed, then the thread failed
	if failed {
		h.log.Warn("a thread failed after its expired questions were closed", "thread_id", m.ThreadID, "graph", m.Graph, "err", err)
	}
	switch {
	case err == nil || failed:
		if h.onExpired != nil {
			h.onExpired(m.Graph, len(answers))
		}
		h.log.Info("closed expired questions", "thread_id", m.ThreadID, "graph", m.Graph, "questions", len(answers))
		return len(answers)
	case ctx.Err() != nil, raced(err):
	default:
		h.log.Warn("closing a thread's expired questions failed", "thread_id", m.ThreadID, "graph", m.Graph, "err", err)
	}
	return 0
}
