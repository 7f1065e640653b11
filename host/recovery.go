package host

import (
	"context"
	"errors"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
)

// recoveryPage is how many unfinished threads one look finishes, and
// recoveryRuns how many of their runs go at once.
const (
	recoveryPage = 100
	recoveryRuns = 4
)

// RecoverThreads finishes the runs that stopped before their end, leaving their
// threads running (see WithRecoveryWatch), running them on a few at a time, and
// reports how many it finished. A thread that a live run holds (in this process
// or another) is left to that run, and threads of graphs this host does not
// host to a host that does. The recovery watch calls it when the host starts
// and every second (WithRecoveryWatch); it fails if the store does not list
// such threads.
func (h *Host) RecoverThreads(ctx context.Context) (int, error) {
	idx, ok := store.As[store.RecoveryIndex](h.store)
	if !ok {
		return 0, errors.New("host: the store does not list the threads whose run is unfinished (store.RecoveryIndex)")
	}
	due, err := idx.Unfinished(ctx, h.names, recoveryPage)
	if err != nil {
		return 0, err
	}
	finished := h.eachThread(ctx, due, recoveryRuns, func(g graph.Erased, m store.Meta) int {
		if h.recover(ctx, g, m) {
			return 1
		}
		return 0
	})
	return finished, ctx.Err()
}

// recover finishes the thread's unfinished run and reports whether it did.
func (h *Host) recover(ctx context.Context, g graph.Erased, m store.Meta) bool {
	ctx, span := h.startWatch(ctx, "interlude.recover", m)
	res, err := h.run(ctx, m.ThreadID, false, graph.Recover())
	defer endWatch(span, res, err)
	switch {
	case err == nil, res != nil && res.Status == interlude.RunFailed:
		if err != nil {
			h.log.Warn("a thread failed in the run it was finishing after its last run stopped", "thread_id", m.ThreadID, "graph", m.Graph, "err", err)
		}
		h.log.Info("finished the run that had stopped before its end", "thread_id", m.ThreadID, "graph", m.Graph, "status", res.Status)
		return true
	case ctx.Err() != nil, raced(err):
	default:
		h.log.Warn("finishing a run that had stopped before its end failed", "thread_id", m.ThreadID, "graph", m.Graph, "err", err)
	}
	return false
}
