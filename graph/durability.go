package graph

import (
	"fmt"

	"github.com/interludehq/interlude"
)

// Durability says which of a run's commits wait for the disk. Every commit is
// written to the store in order and survives a crash of the process whatever
// the mode; the modes differ in what a power loss or an operating system crash
// may take back. A commit the store has not yet made durable is made so by the
// next durable one, so what is lost is always the last few commits, and the
// run then goes on from the last durable checkpoint exactly as after a crash.
type Durability int

const (
	// DurabilityAsync, the default, makes durable every commit that is
	// acknowledged to someone before it is: the commit that ends a run
	// (completed, paused at a question or a breakpoint, failed), a fork, any
	// edit of the state, and the one that records accepted answers when a
	// stream or a listener hears of them at once (see WithListeners). The
	// steps between, which nobody has been told about, are committed without
	// waiting for the disk; a power loss may take them back, and they run
	// again.
	DurabilityAsync Durability = iota
	// DurabilitySync makes every commit durable before the run goes on: a
	// power loss takes back nothing the store accepted, at the cost of one
	// disk flush per step.
	DurabilitySync
	// DurabilityExit makes durable only the commit that ends a run (and any
	// edit of the state). Accepted answers are durable once their run ends:
	// a power loss during the run takes back the answers with its steps, and
	// the thread asks its questions again. For runs nobody waits on mid-way.
	DurabilityExit
)

// String returns the mode's name as LangGraph's durability setting spells it:
// "async", "sync" or "exit".
func (d Durability) String() string {
	switch d {
	case DurabilityAsync:
		return "async"
	case DurabilitySync:
		return "sync"
	case DurabilityExit:
		return "exit"
	}
	return fmt.Sprintf("Durability(%d)", int(d))
}

// ParseDurability returns the mode named "async", "sync" or "exit".
func ParseDurability(name string) (Durability, error) {
	for _, d := range []Durability{DurabilityAsync, DurabilitySync, DurabilityExit} {
		if d.String() == name {
			return d, nil
		}
	}
	return 0, fmt.Errorf("durability %q is not known; use async, sync or exit", name)
}

// WithDurability sets which commits wait for the disk (DurabilityAsync by
// default). Compile refuses a mode it does not know.
func WithDurability(d Durability) Option {
	return func(c *config) {
		if d < DurabilityAsync || d > DurabilityExit {
			c.Refuse("graph.WithDurability", "mode %d is not known; use DurabilityAsync, DurabilitySync or DurabilityExit", int(d))
			return
		}
		c.durability = d
	}
}

// durable reports whether the commit of d must be durable before anyone
// learns of it: the run's caller, a stream, a listener or another process.
func (r *runner[S]) durable(d *delta) bool {
	switch r.g.cfg.durability {
	case DurabilitySync:
		return true
	case DurabilityAsync:
		if d.Kind == kindFork {
			return true // returned to its caller at once
		}
		if d.Kind == kindAnswer {
			// Accepted at once for a stream or a listener, which hear of it
			// before the run goes on; otherwise its caller first hears of it
			// with the run's next durable commit, which makes it durable too.
			return r.emit != nil || r.g.heard(r.threadID)
		}
	}
	if d.Kind == kindAnswer {
		return false // DurabilityExit: durable with the end of its run
	}
	// Every other commit but a step after which the run goes on ends the run
	// (or is an edit of the state, which returns at once).
	return d.Status != interlude.ThreadRunning
}

// heard reports whether the thread's events reach someone as they happen.
func (g *Graph[S]) heard(threadID string) bool {
	if g.cfg.listening != nil {
		return g.cfg.listening(threadID)
	}
	return g.cfg.events != nil
}
