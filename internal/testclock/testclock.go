// Package testclock is a clock that tests set by hand, for code that takes its
// time from a func() time.Time (graph.WithClock, server.WithClock).
package testclock

import (
	"sync"
	"time"
)

// Clock reads the time it was last set to. It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock that reads t.
func New(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the time the clock was last set to.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
