package server

import (
	"context"
	"hash/maphash"
	"sync"
)

// keyLocks serialise work per key (a thread id) within the process, sharded so
// that unrelated keys never wait on one another for long.
type keyLocks struct {
	seed   maphash.Seed
	shards [32]lockShard
}

type lockShard struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	ch   chan struct{}
	refs int
}

func newKeyLocks() *keyLocks {
	k := &keyLocks{seed: maphash.MakeSeed()}
	for i := range k.shards {
		k.shards[i].m = make(map[string]*keyLock)
	}
	return k
}

// lock waits until key is free or ctx ends, and returns the unlock function.
func (k *keyLocks) lock(ctx context.Context, key string) (func(), error) {
	sh := &k.shards[maphash.String(k.seed, key)%uint64(len(k.shards))]
	sh.mu.Lock()
	l := sh.m[key]
	if l == nil {
		l = &keyLock{ch: make(chan struct{}, 1)}
		sh.m[key] = l
	}
	l.refs++
	sh.mu.Unlock()
	release := func() {
		sh.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(sh.m, key)
		}
		sh.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}
