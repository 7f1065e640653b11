// Package keylock serialises work per key (a thread id) within a process.
package keylock

import (
	"context"
	"hash/maphash"
	"sync"
)

// Locks hold one lock per key, made when first wanted and dropped when nobody
// holds or waits for it. They are sharded, so that unrelated keys never wait on
// one another for long. The zero value is not usable: call New.
type Locks struct {
	seed   maphash.Seed
	shards [32]shard
}

type shard struct {
	mu sync.Mutex
	m  map[string]*entry
}

type entry struct {
	ch   chan struct{}
	refs int
}

// New returns an empty set of locks.
func New() *Locks {
	k := &Locks{seed: maphash.MakeSeed()}
	for i := range k.shards {
		k.shards[i].m = make(map[string]*entry)
	}
	return k
}

// Lock waits until key is free or ctx ends, and returns the unlock function.
func (k *Locks) Lock(ctx context.Context, key string) (func(), error) {
	e, release := k.ref(key)
	select {
	case e.ch <- struct{}{}:
		return func() { <-e.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// TryLock takes key if it is free and returns the unlock function; if another
// holds it, it reports false at once.
func (k *Locks) TryLock(key string) (func(), bool) {
	e, release := k.ref(key)
	select {
	case e.ch <- struct{}{}:
		return func() { <-e.ch; release() }, true
	default:
		release()
		return nil, false
	}
}

// ref returns key's lock, made if needed, and the function that lets go of it
// once its holder or waiter is done.
func (k *Locks) ref(key string) (*entry, func()) {
	sh := &k.shards[maphash.String(k.seed, key)%uint64(len(k.shards))]
	sh.mu.Lock()
	e := sh.m[key]
	if e == nil {
		e = &entry{ch: make(chan struct{}, 1)}
		sh.m[key] = e
	}
	e.refs++
	sh.mu.Unlock()
	return e, func() {
		sh.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(sh.m, key)
		}
		sh.mu.Unlock()
	}
}
