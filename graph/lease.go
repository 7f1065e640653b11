package graph

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// defaultOwner names this process in thread leases.
func defaultOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	rand.Read(b[:])
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
}

// Thread is a thread opened for runs by a caller that serialises the runs of
// its threads itself, as package host does: Open finds it (whose thread it is
// and its version) and reads it with one round trip to the store, and a run
// on it (InvokeOn, StreamOn) takes none of the graph's locks and reads nothing
// again before it starts. On a store shared by several processes the opening
// also holds the thread's lease until Release, so another process cannot run
// the thread meanwhile. Use a Thread for one run at a time: a run after the
// first reads the thread's version again, since the first one wrote.
type Thread struct {
	// ID is the thread's id.
	ID string
	// Graph is the name of the graph whose thread it is, "" for a thread not
	// written yet.
	Graph string

	version int64         // the thread's version as read when opened
	created time.Time     // its creation time as read, zero if not read
	loaded  *store.Loaded // the thread as read when opened, when the cached copy was not current
	used    bool          // a run took what was read
	keeper  *keeper       // the lease, on a shared store
}

// Open opens the thread for runs the caller serialises (see Thread). On a
// store shared by several processes (a store.Leaser) it takes the thread's
// lease, with the graph's lease settings (WithLease), in the same round trip,
// and keeps renewing it until Release; if another process runs the thread, it
// fails with an error matching interlude.ErrThreadBusy. The opened thread
// serves a run of any graph kept in the same store, not only this one: the
// graph whose thread it is (Thread.Graph).
func (g *Graph[S]) Open(ctx context.Context, threadID string) (*Thread, error) {
	if threadID == "" {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "a thread id is required"}
	}
	t := &Thread{ID: threadID}
	cachedVersion, cachedCreated := g.cache.identity(threadID)
	if l, ok := store.As[store.Leaser](g.cfg.store); ok {
		req := store.LeaseRequest{ThreadID: threadID, Owner: g.cfg.owner, TTL: g.cfg.leaseTTL, Load: true,
			Cached: cachedVersion, CachedCreatedAt: cachedCreated}
		held, err := l.Lease(ctx, req)
		if err != nil {
			return nil, err
		}
		t.keeper, t.loaded = keep(held, g.cfg.leaseTTL), held.Loaded()
		t.Graph, t.version = held.Thread()
		return t, nil
	}
	if cachedVersion > 0 {
		// The cached copy is current if the store's version says so.
		m, err := g.head(ctx, threadID)
		switch {
		case errors.Is(err, interlude.ErrNotFound):
			return t, nil
		case err != nil:
			return nil, err
		}
		t.Graph, t.version, t.created = m.Graph, m.Version, m.CreatedAt
		return t, nil
	}
	l, err := g.cfg.store.Load(ctx, threadID)
	switch {
	case errors.Is(err, interlude.ErrNotFound):
		return t, nil
	case err != nil:
		return nil, err
	}
	t.Graph, t.version, t.created, t.loaded = l.Meta.Graph, l.Meta.Version, l.Meta.CreatedAt, l
	return t, nil
}

// head reads the thread's indexed facts for Open, without its pending
// questions when the store can (store.Header): Open needs none of them.
func (g *Graph[S]) head(ctx context.Context, threadID string) (*store.Meta, error) {
	if h, ok := store.As[store.Header](g.cfg.store); ok {
		return h.Head(ctx, threadID)
	}
	return g.cfg.store.Meta(ctx, threadID)
}

// Caches reports whether the graph's state cache holds a copy of the thread.
// Graphs sharing a store can each open any thread, but only the one whose
// cache holds it opens it by reading its version alone (without a lease, the
// store's Meta instead of its Load): a host with several graphs opens a thread
// whose graph it does not know through the one that caches it.
func (g *Graph[S]) Caches(threadID string) bool {
	v, _ := g.cache.identity(threadID)
	return v > 0
}

// Release gives the thread's lease up, if the opening took one. Call it once
// the runs on the thread have ended; later calls do nothing.
func (t *Thread) Release(ctx context.Context) {
	if t != nil && t.keeper != nil {
		t.keeper.release(ctx)
	}
}

// take returns, for the first run on the thread, what its opening read: the
// version, the creation time (zero if the lease compared it) and the thread if
// it was loaded. Later runs must read them again, since the first one wrote.
func (t *Thread) take() (int64, time.Time, *store.Loaded, bool) {
	if t == nil || t.used {
		return 0, time.Time{}, nil, false
	}
	t.used = true
	created := t.created
	if t.loaded != nil {
		created = t.loaded.Meta.CreatedAt
	}
	return t.version, created, t.loaded, true
}

// bind returns the run's context, which ends if the thread's lease is lost,
// and the function that lets it go.
func (t *Thread) bind(ctx context.Context) (context.Context, func()) {
	if t.keeper == nil {
		return ctx, func() {}
	}
	return t.keeper.bind(ctx)
}

// lease returns the run's context under the thread's lease when the store is
// shared between processes, taken here and given up by the returned release.
// The context is cancelled if the lease is lost, so the run stops before
// committing more work.
func (g *Graph[S]) lease(ctx context.Context, threadID string) (context.Context, func(), error) {
	l, ok := store.As[store.Leaser](g.cfg.store)
	if !ok {
		return ctx, func() {}, nil
	}
	held, err := l.Lease(ctx, store.LeaseRequest{ThreadID: threadID, Owner: g.cfg.owner, TTL: g.cfg.leaseTTL})
	if err != nil {
		return ctx, nil, err
	}
	k := keep(held, g.cfg.leaseTTL)
	rctx, unbind := k.bind(ctx)
	return rctx, func() {
		unbind()
		k.release(ctx)
	}, nil
}

// errReleased ends a keeper's contexts when its lease is given up.
var errReleased = errors.New("the thread's lease was released")

// keeper renews a held lease every third of its time to live until released,
// and reports its loss. Renewals run from a timer, so a held lease costs no
// goroutine and releasing it wakes none.
type keeper struct {
	lease  store.Lease
	period time.Duration
	lost   context.Context // cancelled, with the reason as cause, once the lease is lost or released
	end    context.CancelCauseFunc
	once   sync.Once

	mu       sync.Mutex // held through a renewal, so release waits for one under way
	timer    *time.Timer
	released bool
}

// keep starts renewing l, whose time to live is ttl.
func keep(l store.Lease, ttl time.Duration) *keeper {
	lost, end := context.WithCancelCause(context.Background())
	k := &keeper{lease: l, period: ttl / 3, lost: lost, end: end}
	k.mu.Lock()
	k.timer = time.AfterFunc(k.period, k.renew)
	k.mu.Unlock()
	return k
}

// renew renews the lease and sets the timer for the next renewal. A renewal
// that takes longer than its period cannot keep the lease safely: the run is
// given up rather than left waiting on the store.
func (k *keeper) renew() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.released {
		return
	}
	ctx, cancel := context.WithTimeout(k.lost, k.period)
	err := k.lease.Renew(ctx)
	cancel()
	if err != nil {
		k.end(err)
		return
	}
	k.timer.Reset(k.period)
}

// bind returns a context that ends with parent, or when the lease is lost (with
// the loss as its cause), and the function that lets it go.
func (k *keeper) bind(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := context.AfterFunc(k.lost, func() { cancel(context.Cause(k.lost)) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// release stops renewing and gives the lease up; only the first call does.
func (k *keeper) release(ctx context.Context) {
	k.once.Do(func() {
		k.mu.Lock()
		k.released = true
		k.timer.Stop()
		k.mu.Unlock()
		k.end(errReleased)
		k.lease.Release(context.WithoutCancel(ctx))
	})
}

// PendingOn returns the interrupts the opened thread waits on and the
// breakpoint it stopped at, if any, as State reports them, before a run on t.
// It takes them from the graph's cached copy or from what opening t read when
// either is current, and reads the store only otherwise, so that a server
// matching answers to the pending questions does not read the thread twice.
func (g *Graph[S]) PendingOn(ctx context.Context, t *Thread) ([]interlude.Interruption, *Breakpoint, error) {
	if t != nil && !t.used && t.Graph != "" {
		if err := g.owns(t.ID, t.Graph); err != nil {
			return nil, nil, err
		}
		created := t.created
		if t.loaded != nil {
			created = t.loaded.Meta.CreatedAt
		}
		if q, brk, ok := g.cache.pending(t.ID, t.version, created); ok {
			return q, brk, nil
		}
		if t.loaded != nil && t.loaded.Meta.Version == t.version {
			st, _, err := g.codec.load(t.loaded)
			if err != nil {
				return nil, nil, err
			}
			return st.pending(), st.brk, nil
		}
	}
	id := ""
	if t != nil {
		id = t.ID
	}
	snap, err := g.State(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return snap.Interrupts, snap.Breakpoint, nil
}
