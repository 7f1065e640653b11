package graph

import (
	"sync"
	"time"

	"github.com/interludehq/interlude"
)

// Defaults of the state cache (WithCacheBytes, WithCacheSize).
const (
	// DefaultCacheBytes is the default budget of a graph's state cache.
	DefaultCacheBytes = 64 << 20
	// cacheEntryOverhead is what a cached state costs beyond its stored bytes
	// (the state's fields, the list element, the map entry), so that a budget
	// also bounds how many small states are kept.
	cacheEntryOverhead = 512
	// cacheLargestShare: a state larger than budget/cacheLargestShare is not
	// cached, so that one large thread cannot push every other one out.
	cacheLargestShare = 8
)

// cache keeps recently used thread states within a budget of bytes (and,
// if set, of entries), least recently used evicted first. A state's size is
// estimated from what the runtime already knows without encoding anything: the
// JSON size of its last snapshot plus the bytes of the records after it, which
// is what the state holds in memory, give or take the overhead of Go's types.
type cache[S any] struct {
	mu      sync.Mutex
	budget  int64 // bytes; 0 disables the cache
	entries int   // the most states kept; 0 means no limit but the budget
	size    int64 // the estimated bytes of the states kept
	// ring is the list of states kept, most recently used first: its own
	// links are the ends (ring.next the newest, ring.prev the oldest), and
	// each state carries its links, so that keeping one allocates nothing.
	ring cached[S]
	n    int // the states kept
	m    map[string]*cached[S]
}

type cached[S any] struct {
	id      string
	st      *state[S]
	created time.Time // the thread's creation time as the store keeps it (zero if unknown)
	weight            // record bytes since the snapshot, its size, what grew since
	cost    int64     // the estimated size it was cached with
	// prev and next link it in the cache's list while it is kept.
	prev, next *cached[S]
}

// estimate is the estimated memory of a cached state.
func (v *cached[S]) estimate() int64 {
	return int64(v.snapSize) + int64(v.since) + cacheEntryOverhead
}

func newCache[S any](budget int64, entries int) *cache[S] {
	if entries < 0 {
		entries = 0
	}
	c := &cache[S]{budget: budget, entries: entries, m: make(map[string]*cached[S])}
	c.ring.prev, c.ring.next = &c.ring, &c.ring
	return c
}

// take removes and returns the thread's cached state, so the caller owns it.
func (c *cache[S]) take(id string) (*cached[S], bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[id]
	if !ok {
		return nil, false
	}
	c.remove(v)
	return v, true
}

// identity returns the version and creation time of the thread's cached
// state, 0 and zero if none: together they tell the copy from a thread deleted
// and created again, which starts over at version 1.
func (c *cache[S]) identity(id string) (int64, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[id]; ok && v.st != nil {
		return v.st.version, v.created
	}
	return 0, time.Time{}
}

// put stores a state the caller no longer uses, evicting the least recently
// used states to stay within the budget. A state too large for its share of
// the budget is not kept (and an older copy of it is dropped).
func (c *cache[S]) put(v *cached[S]) {
	if c.budget <= 0 {
		return
	}
	v.cost = v.estimate()
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[v.id]; ok {
		c.remove(old)
	}
	if v.cost > c.budget/cacheLargestShare {
		return
	}
	c.m[v.id] = v
	v.prev, v.next = &c.ring, c.ring.next
	v.next.prev, c.ring.next = v, v
	c.n++
	c.size += v.cost
	for c.size > c.budget || (c.entries > 0 && c.n > c.entries) {
		c.remove(c.ring.prev)
	}
}

// remove forgets the kept state v. c.mu is held.
func (c *cache[S]) remove(v *cached[S]) {
	v.prev.next, v.next.prev = v.next, v.prev
	v.prev, v.next = nil, nil
	c.n--
	delete(c.m, v.id)
	c.size -= v.cost
}

// drop forgets the thread.
func (c *cache[S]) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[id]; ok {
		c.remove(v)
	}
}

// usage returns the estimated bytes and the number of states kept.
func (c *cache[S]) usage() (int64, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size, c.n
}

// pending returns the pending interrupts and the breakpoint of the thread's
// cached state, if it is at version and has the creation time created (zero:
// not compared), and whether it is.
func (c *cache[S]) pending(id string, version int64, created time.Time) ([]interlude.Interruption, *Breakpoint, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[id]
	if !ok {
		return nil, nil, false
	}
	if v.st == nil || v.st.version != version || (!created.IsZero() && !created.Equal(v.created)) {
		return nil, nil, false
	}
	var brk *Breakpoint
	if v.st.brk != nil {
		b := *v.st.brk
		brk = &b
	}
	return v.st.pending(), brk, true
}
