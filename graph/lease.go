package graph

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/interludehq/interlude/store"
)

// defaultOwner names this process in thread leases.
func defaultOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	rand.Read(b[:])
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
}

// Claim is a thread's lease in a store shared by several processes, taken
// before a run by a host that must learn whose thread it is before it picks the
// graph to run it: a server hosting several graphs, behind a load balancer.
// Taking it costs the store one round trip that also reads the thread's graph
// and version, and its state unless the claiming graph's cached copy is
// current, so the run that follows under Context takes no lease of its own and
// reads nothing again before it starts.
type Claim struct {
	// ThreadID is the claimed thread.
	ThreadID string
	// Graph is the name of the graph whose thread it is, "" for a thread not
	// written yet.
	Graph string

	version atomic.Int64  // the thread's version when claimed; -1 once a run used it
	loaded  *store.Loaded // the thread as read with the claim, when the claiming graph's copy was stale
	keeper  *keeper
}

// Claim takes the thread's lease for a run, with the graph's lease settings
// (WithLease), and keeps renewing it until Release. If another process runs
// the thread, it fails with an error matching interlude.ErrThreadBusy. The
// claim serves a run of any graph kept in the same store, not only this one.
//
// A store that only one process uses (not a store.Leaser) needs no lease:
// Claim then returns nil and no error.
func (g *Graph[S]) Claim(ctx context.Context, threadID string) (*Claim, error) {
	l, ok := store.As[store.Leaser](g.cfg.store)
	if !ok {
		return nil, nil
	}
	req := store.LeaseRequest{ThreadID: threadID, Owner: g.cfg.owner, TTL: g.cfg.leaseTTL, Load: true}
	req.Cached, req.CachedCreatedAt = g.cache.identity(threadID)
	held, err := l.Lease(ctx, req)
	if err != nil {
		return nil, err
	}
	c := &Claim{ThreadID: threadID, keeper: keep(held, g.cfg.leaseTTL), loaded: held.Loaded()}
	var v int64
	c.Graph, v = held.Thread()
	c.version.Store(v)
	return c, nil
}

type claimKey struct{}

// Context returns ctx carrying the claim: a run of the claimed thread under it
// uses the claim instead of taking the lease itself, and stops if the claim is
// lost.
func (c *Claim) Context(ctx context.Context) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

// Release stops renewing the lease and gives it up. Call it once the runs
// under the claim have ended.
func (c *Claim) Release(ctx context.Context) { c.keeper.release(ctx) }

// take returns, once, the thread's version as the claim read it and the thread
// if it was loaded with the claim: later runs under the same claim must read
// them again, since the first one wrote.
func (c *Claim) take() (int64, *store.Loaded, bool) {
	if c == nil {
		return 0, nil, false
	}
	v := c.version.Swap(-1)
	if v < 0 {
		return 0, nil, false
	}
	return v, c.loaded, true
}

// lease returns the run's context and its claim on the thread when the store is
// shared between processes: the caller's (Claim.Context), or one taken here and
// given up by the returned release. The context is cancelled if the lease is
// lost, so the run stops before committing more work.
func (g *Graph[S]) lease(ctx context.Context, threadID string) (context.Context, *Claim, func(), error) {
	if c, ok := ctx.Value(claimKey{}).(*Claim); ok && c.ThreadID == threadID {
		rctx, unbind := c.keeper.bind(ctx)
		return rctx, c, unbind, nil
	}
	c, err := g.Claim(ctx, threadID)
	if err != nil || c == nil {
		return ctx, nil, func() {}, err
	}
	rctx, unbind := c.keeper.bind(ctx)
	return rctx, c, func() {
		unbind()
		c.Release(ctx)
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
