package graph_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// leasingStore is a memory store that hands out leases as a shared store does,
// recording what the runtime does with them. renew decides each renewal.
type leasingStore struct {
	*memory.Store
	renew func(n int) error // n counts renewals from 1

	mu       sync.Mutex
	renewals int
	released int
	renewed  chan struct{} // receives after each renewal
}

func (s *leasingStore) Lease(ctx context.Context, req store.LeaseRequest) (store.Lease, error) {
	return &heldLease{s: s}, nil
}

type heldLease struct{ s *leasingStore }

func (l *heldLease) Thread() (string, int64) { return "", 0 }
func (l *heldLease) Loaded() *store.Loaded   { return nil }

func (l *heldLease) Renew(ctx context.Context) error {
	l.s.mu.Lock()
	l.s.renewals++
	n := l.s.renewals
	l.s.mu.Unlock()
	defer func() { l.s.renewed <- struct{}{} }()
	return l.s.renew(n)
}

func (l *heldLease) Release(ctx context.Context) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.released++
	return nil
}

// slowRun compiles a one-node graph on st whose node returns once proceed
// does, or fails with its context's cause if the context ends first.
func slowRun(t *testing.T, st store.Store, ttl time.Duration, proceed <-chan struct{}) *graph.Graph[refundState] {
	t.Helper()
	g := graph.New[refundState]()
	g.AddNode("work", func(ctx context.Context, s refundState) (refundState, error) {
		select {
		case <-proceed:
			return refundState{Outcome: "done"}, nil
		case <-ctx.Done():
			return refundState{}, context.Cause(ctx)
		}
	})
	g.AddEdge(graph.Start, "work")
	app, err := g.Compile(graph.WithStore(st), graph.WithLease(ttl, "test"))
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestALeaseIsRenewedWhileItsRunLastsAndReleasedAfter(t *testing.T) {
	st := &leasingStore{Store: memory.New(), renew: func(int) error { return nil }, renewed: make(chan struct{}, 16)}
	proceed := make(chan struct{})
	app := slowRun(t, st, 30*time.Millisecond, proceed)
	go func() {
		defer close(proceed) // the run outlived two renewals, or none came and the check below fails
		for range 2 {
			select {
			case <-st.renewed:
			case <-time.After(10 * time.Second): // a bound on a failure, not a wait for success
				return
			}
		}
	}()
	res, err := app.Invoke(context.Background(), "long", graph.Input(refundState{Amount: 1}))
	if err != nil || res.Values.Outcome != "done" {
		t.Fatalf("run = %+v, %v", res, err)
	}
	st.mu.Lock()
	renewals, released := st.renewals, st.released
	st.mu.Unlock()
	if renewals < 2 || released != 1 {
		t.Fatalf("renewals = %d, releases = %d; want at least 2 renewals, then 1 release", renewals, released)
	}
	// No renewal follows the release: the keeper's timer is stopped.
	select {
	case <-st.renewed:
		t.Fatal("the lease was renewed after it was released")
	case <-time.After(100 * time.Millisecond): // three renewal periods, to see none happen
	}
}

func TestARunWhoseLeaseIsLostStops(t *testing.T) {
	lost := &interlude.Error{Code: interlude.CodeThreadBusy, Message: "the lease was lost"}
	st := &leasingStore{Store: memory.New(), renew: func(int) error { return lost }, renewed: make(chan struct{}, 16)}
	app := slowRun(t, st, 30*time.Millisecond, nil) // never proceeds on its own
	_, err := app.Invoke(context.Background(), "lost", graph.Input(refundState{Amount: 1}))
	if !errors.Is(err, interlude.ErrThreadBusy) {
		t.Fatalf("run after its lease was lost: %v, want an error matching ErrThreadBusy", err)
	}
	if v, _ := st.Version(context.Background(), "lost"); v != 0 {
		t.Errorf("the run committed version %d after losing its lease, want nothing", v)
	}
}

// stallingStore is a leasing store whose appends wait for their context to
// end and report it as a database driver does: a plain cancellation.
type stallingStore struct{ *leasingStore }

func (s stallingStore) Append(ctx context.Context, a store.Append) error {
	<-ctx.Done()
	return ctx.Err()
}

func TestARunWhoseLeaseIsLostWhileItCommitsSaysSo(t *testing.T) {
	lost := &interlude.Error{Code: interlude.CodeThreadBusy, Message: "the lease was lost"}
	st := stallingStore{&leasingStore{Store: memory.New(), renew: func(int) error { return lost }, renewed: make(chan struct{}, 16)}}
	g := graph.New[refundState]()
	g.AddNode("work", func(ctx context.Context, s refundState) (refundState, error) {
		return refundState{Outcome: "done"}, nil
	})
	g.AddEdge(graph.Start, "work")
	app, err := g.Compile(graph.WithStore(st), graph.WithLease(30*time.Millisecond, "test"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = app.Invoke(context.Background(), "lost", graph.Input(refundState{Amount: 1}))
	if !errors.Is(err, interlude.ErrThreadBusy) {
		t.Fatalf("run whose commit the lost lease cut short: %v, want an error matching ErrThreadBusy", err)
	}
}
