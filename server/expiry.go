package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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

// WithExpiryWatch sets how often the server closes the questions whose time to live
// (interlude.Request.TTL) has passed: each is resolved as expired, by ExpiryActor,
// and its thread runs on as it does after a cancellation. With replicas, each
// question is closed once, by whichever replica gets to it first. The default is
// every second; 0 turns it off, for a program that calls ExpireQuestions itself.
// The store must list expiries (store.ExpiryIndex, as the stores of this module do).
func WithExpiryWatch(every time.Duration) Option { return func(c *config) { c.expiry = every } }

// WithClock sets the clock the server judges expiries by (default time.Now). The
// graphs judge them by theirs (graph.WithClock), so give both the same.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// watchExpiries closes expired questions every period until the server closes.
func (s *Server) watchExpiries(every time.Duration) {
	s.every(every, func() {
		if _, err := s.ExpireQuestions(s.runCtx); err != nil && s.runCtx.Err() == nil {
			s.log.Warn("closing expired questions failed", "err", err)
		}
	})
}

// ExpireQuestions closes, as expired, the pending questions whose time to live has
// passed, and runs their threads on, a few at a time, so that one slow run (an
// agent waiting for its model) does not hold the others up; it reports how many
// questions it closed. A thread that another run holds, or whose question was
// answered meanwhile, is left to that run. Threads of graphs this server does not
// host are left to a server that does. The server calls it every second
// (WithExpiryWatch); it fails if the store does not list expiries.
func (s *Server) ExpireQuestions(ctx context.Context) (int, error) {
	idx, ok := store.As[store.ExpiryIndex](s.store)
	if !ok {
		return 0, errors.New("server: the store does not list expired questions (store.ExpiryIndex)")
	}
	now := s.now()
	due, err := idx.Expired(ctx, now, s.hosted, expiryPage)
	if err != nil {
		return 0, err
	}
	closed := s.eachThread(ctx, due, expiryRuns, func(g graph.Erased, m store.Meta) int {
		if answers := dueAnswers(m, now); len(answers) > 0 {
			return s.expire(ctx, g, m, answers)
		}
		return 0
	})
	return closed, ctx.Err()
}

// eachThread calls run for each thread of due whose graph this server hosts, at
// most parallel at a time, so that one slow run (an agent waiting for its model)
// does not hold the others up, and adds up what the calls return. It starts no
// call once ctx is done.
func (s *Server) eachThread(ctx context.Context, due []store.Meta, parallel int, run func(g graph.Erased, m store.Meta) int) int {
	var (
		sum   atomic.Int64
		wg    sync.WaitGroup
		slots = make(chan struct{}, parallel)
	)
	for _, m := range due {
		g := s.graphs[m.Graph]
		if g == nil {
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			sum.Add(int64(run(g, m)))
		})
	}
	wg.Wait()
	return int(sum.Load())
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
func (s *Server) expire(ctx context.Context, g graph.Erased, m store.Meta, answers map[string]interlude.Resolution) int {
	res, err := g.Invoke(interlude.WithActor(ctx, ExpiryActor), m.ThreadID, graph.Respond(answers))
	failed := err != nil && res != nil && res.Status == graph.Failed // closed, then the thread failed
	if failed {
		s.log.Warn("a thread failed after its expired questions were closed", "thread_id", m.ThreadID, "graph", m.Graph, "err", err)
	}
	switch {
	case err == nil || failed:
		for range answers {
			s.metrics.resolution(m.Graph, string(interlude.KindExpired))
		}
		s.log.Info("closed expired questions", "thread_id", m.ThreadID, "graph", m.Graph, "questions", len(answers))
		return len(answers)
	case ctx.Err() != nil, raced(err):
	default:
		s.log.Warn("closing a thread's expired questions failed", "thread_id", m.ThreadID, "graph", m.Graph, "err", err)
	}
	return 0
}

// raced reports whether err says that another run or answer got to the thread
// first: the question is no longer there to close, or is being closed elsewhere.
func raced(err error) bool {
	for _, target := range []error{interlude.ErrThreadBusy, interlude.ErrConflict, interlude.ErrUnknownInterrupt,
		interlude.ErrNotInterrupted, interlude.ErrNotFound} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
