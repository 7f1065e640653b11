package host

import (
	"context"
	"errors"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
)

// watchLeases announces how each thread whose run died with its process (its
// lease expired) now reads, looking every period until the host closes.
func (h *Host) watchLeases(w store.LeaseWatcher, every time.Duration) {
	h.every(every, false, func() {
		ctx, cancel := context.WithTimeout(h.life, every)
		expired, err := w.ExpiredLeases(ctx)
		cancel()
		if err != nil {
			if h.life.Err() == nil {
				h.log.Warn("looking for runs that died with their process failed", "err", err)
			}
			return
		}
		for _, e := range expired {
			h.announceDeadRun(e)
		}
	})
}

// announceDeadRun tells the listeners of a thread whose run died with its
// process how the thread now reads.
func (h *Host) announceDeadRun(e store.ExpiredLease) {
	ctx, cancel := context.WithTimeout(h.life, 10*time.Second)
	m, err := h.store.Meta(ctx, e.ThreadID)
	cancel()
	if err != nil {
		if !errors.Is(err, interlude.ErrNotFound) && h.life.Err() == nil {
			h.log.Warn("reading a thread whose run died with its process failed", "thread_id", e.ThreadID, "err", err)
		}
		return
	}
	switch m.Status {
	case interlude.ThreadFailed:
		h.log.Warn("a run died with its process; its thread reads as failed until it is continued", "thread_id", e.ThreadID, "checkpoint", m.Version)
		h.hub.Publish(graph.Event{Type: graph.EventEnd, ThreadID: e.ThreadID, Status: interlude.RunFailed, Checkpoint: m.Version})
	case interlude.ThreadInterrupted:
		h.log.Warn("a run died with its process after pausing; its thread waits for its answers", "thread_id", e.ThreadID, "checkpoint", m.Version)
		h.hub.Publish(graph.Event{Type: graph.EventEnd, ThreadID: e.ThreadID, Status: interlude.RunInterrupted, Checkpoint: m.Version})
	case interlude.ThreadRunning:
		h.log.Warn("a run died with its process after committing work that left more to do; it will be finished from its last checkpoint", "thread_id", e.ThreadID, "checkpoint", m.Version)
	}
}
