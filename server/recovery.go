package server

import (
	"context"
	"errors"
	"time"

	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
)

// recoveryPage is how many unfinished threads one look finishes, and
// recoveryRuns how many of their runs go at once.
const (
	recoveryPage = 100
	recoveryRuns = 4
)

// WithRecoveryWatch sets how often the server finishes the runs that stopped
// before their end (their process died, or Close cancelled them) after
// committing work that left more to do: answers that started a step, or a
// step after which nodes were due. Such a thread reads as running, with no
// question pending, and the server runs it on from its last checkpoint
// (graph.Recover): an answered step's tasks receive the recorded answers, and
// committed steps are not run again. The server looks once when it starts and
// then every period; with replicas, each thread is finished by one of them,
// under the thread's lease, once the lease of the run that stopped has expired
// or been given up. The default is every second; 0 turns it off, for a program
// that calls RecoverThreads itself. The store must list such threads
// (store.RecoveryIndex, as the stores of this module do).
func WithRecoveryWatch(every time.Duration) Option { return func(c *config) { c.recovery = every } }

// watchRecoveries finishes unfinished runs now and every period until the
// server closes.
func (s *Server) watchRecoveries(every time.Duration) {
	look := func() {
		if _, err := s.RecoverThreads(s.runCtx); err != nil && s.runCtx.Err() == nil {
			s.log.Warn("finishing the runs that stopped before their end failed", "err", err)
		}
	}
	look()
	s.every(every, look)
}

// RecoverThreads finishes the runs that stopped before their end, leaving their
// threads running (see WithRecoveryWatch), running them on a few at a time, and
// reports how many it finished. A thread that a live run holds (in this process or, with
// replicas, in another) is left to that run, and threads of graphs this server
// does not host to a server that does. The server calls it when it starts and
// every second (WithRecoveryWatch); it fails if the store does not list such
// threads.
func (s *Server) RecoverThreads(ctx context.Context) (int, error) {
	idx, ok := store.As[store.RecoveryIndex](s.store)
	if !ok {
		return 0, errors.New("server: the store does not list the threads whose run is unfinished (store.RecoveryIndex)")
	}
	due, err := idx.Unfinished(ctx, s.hosted, recoveryPage)
	if err != nil {
		return 0, err
	}
	finished := s.eachThread(ctx, due, recoveryRuns, func(g graph.Erased, m store.Meta) int {
		if s.recover(ctx, g, m) {
			return 1
		}
		return 0
	})
	return finished, ctx.Err()
}

// recover finishes the thread's unfinished run and reports whether it did.
func (s *Server) recover(ctx context.Context, g graph.Erased, m store.Meta) bool {
	res, err := g.Invoke(ctx, m.ThreadID, graph.Recover())
	switch {
	case err == nil, res != nil && res.Status == graph.Failed:
		if err != nil {
			s.log.Warn("a thread failed in the run it was finishing after its last run stopped", "thread_id", m.ThreadID, "graph", m.Graph, "err", err)
		}
		s.log.Info("finished the run that had stopped before its end", "thread_id", m.ThreadID, "graph", m.Graph, "status", res.Status)
		return true
	case ctx.Err() != nil, raced(err):
	default:
		s.log.Warn("finishing a run that had stopped before its end failed", "thread_id", m.ThreadID, "graph", m.Graph, "err", err)
	}
	return false
}
