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
	// spare keeps entries dropped from m for the next keys, so that taking a
	// lock allocates nothing once a few were made.
	spare []*entry
}

// spareLimit bounds the entries a shard keeps for reuse.
const spareLimit = 8

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

// Held is a key's lock taken by Hold or TryHold; Unlock lets it go. The zero
// value holds nothing, and its Unlock does nothing.
type Held struct {
	sh  *shard
	e   *entry
	key string
}

// Unlock lets the key go. Call it once.
func (h Held) Unlock() {
	if h.e == nil {
		return
	}
	<-h.e.ch
	h.sh.release(h.e, h.key)
}

// Hold waits until key is free or ctx ends, and returns the held lock.
func (k *Locks) Hold(ctx context.Context, key string) (Held, error) {
	sh, e := k.ref(key)
	select {
	case e.ch <- struct{}{}:
		return Held{sh: sh, e: e, key: key}, nil
	default:
	}
	select {
	case e.ch <- struct{}{}:
		return Held{sh: sh, e: e, key: key}, nil
	case <-ctx.Done():
		sh.release(e, key)
		return Held{}, ctx.Err()
	}
}

// TryHold takes key if it is free; if another holds it, it reports false at
// once.
func (k *Locks) TryHold(key string) (Held, bool) {
	sh, e := k.ref(key)
	select {
	case e.ch <- struct{}{}:
		return Held{sh: sh, e: e, key: key}, true
	default:
		sh.release(e, key)
		return Held{}, false
	}
}

// ref returns key's shard and lock, made if needed, counting its holder or
// waiter until release.
func (k *Locks) ref(key string) (*shard, *entry) {
	sh := &k.shards[maphash.String(k.seed, key)%uint64(len(k.shards))]
	sh.mu.Lock()
	e := sh.m[key]
	if e == nil {
		if n := len(sh.spare); n > 0 {
			e = sh.spare[n-1]
			sh.spare = sh.spare[:n-1]
		} else {
			e = &entry{ch: make(chan struct{}, 1)}
		}
		sh.m[key] = e
	}
	e.refs++
	sh.mu.Unlock()
	return sh, e
}

// release lets go of key's lock once its holder or waiter is done; the last
// one drops it. An entry nobody refers to has an empty channel: every holder
// emptied it before releasing.
func (sh *shard) release(e *entry, key string) {
	sh.mu.Lock()
	if e.refs--; e.refs == 0 {
		delete(sh.m, key)
		if len(sh.spare) < spareLimit {
			sh.spare = append(sh.spare, e)
		}
	}
	sh.mu.Unlock()
}
