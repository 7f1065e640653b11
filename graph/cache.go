package graph

import (
	"container/list"
	"sync"
	"time"
)

// cache keeps recently used thread states, least recently used evicted first.
type cache[S any] struct {
	mu    sync.Mutex
	limit int
	ll    *list.List
	m     map[string]*list.Element
}

type cached[S any] struct {
	id       string
	st       *state[S]
	created  time.Time // the thread's creation time as the store keeps it (zero if unknown)
	since    int       // record bytes since the snapshot
	snapSize int       // JSON bytes of the stored snapshot
}

func newCache[S any](limit int) *cache[S] {
	return &cache[S]{limit: limit, ll: list.New(), m: make(map[string]*list.Element)}
}

// take removes and returns the thread's cached state, so the caller owns it.
func (c *cache[S]) take(id string) (*cached[S], bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok {
		return nil, false
	}
	c.ll.Remove(e)
	delete(c.m, id)
	return e.Value.(*cached[S]), true
}

// identity returns the version and creation time of the thread's cached
// state, 0 and zero if none: together they tell the copy from a thread deleted
// and created again, which starts over at version 1.
func (c *cache[S]) identity(id string) (int64, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[id]; ok {
		if v := e.Value.(*cached[S]); v.st != nil {
			return v.st.version, v.created
		}
	}
	return 0, time.Time{}
}

// put stores a state the caller no longer uses.
func (c *cache[S]) put(v *cached[S]) {
	if c.limit <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[v.id]; ok {
		c.ll.Remove(e)
	}
	c.m[v.id] = c.ll.PushFront(v)
	for c.ll.Len() > c.limit {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.m, last.Value.(*cached[S]).id)
	}
}

// drop forgets the thread.
func (c *cache[S]) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[id]; ok {
		c.ll.Remove(e)
		delete(c.m, id)
	}
}
