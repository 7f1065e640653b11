package graph

import (
	"container/list"
	"sync"
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
	since    int // record bytes since the snapshot
	snapSize int // JSON bytes of the stored snapshot
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

// version returns the version of the thread's cached state, 0 if none.
func (c *cache[S]) version(id string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[id]; ok {
		if st := e.Value.(*cached[S]).st; st != nil {
			return st.version
		}
	}
	return 0
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
