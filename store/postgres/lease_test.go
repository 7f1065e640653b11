package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
)

// expire makes the thread's lease, if any, expire now, as it does when the
// process holding it dies and stops renewing it.
func expire(t *testing.T, s *Store, threadID string) {
	t.Helper()
	tag, err := s.pool.Exec(context.Background(), `UPDATE `+pgx.Identifier{s.schema}.Sanitize()+`.leases SET expires_at = now() - interval '1 millisecond' WHERE thread_id = $1`, threadID)
	if err != nil {
		t.Fatal(err)
	}
	if tag.RowsAffected() != 1 {
		t.Fatalf("thread %q has no lease to expire", threadID)
	}
}

func mustLease(t *testing.T, s *Store, threadID, owner string) store.Lease {
	t.Helper()
	l, err := s.Lease(context.Background(), store.LeaseRequest{ThreadID: threadID, Owner: owner, TTL: time.Minute})
	if err != nil {
		t.Fatalf("Lease(%q, %q): %v", threadID, owner, err)
	}
	return l
}

func TestLeaseExcludesOtherOwners(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	a := mustLease(t, s, "t", "replica-a")
	_, err := s.Lease(ctx, store.LeaseRequest{ThreadID: "t", Owner: "replica-b", TTL: time.Minute})
	if !errors.Is(err, interlude.ErrThreadBusy) || !strings.Contains(err.Error(), "replica-a") {
		t.Fatalf("a second owner's Lease: err = %v, want ErrThreadBusy naming replica-a", err)
	}
	// Another thread is free.
	other := mustLease(t, s, "u", "replica-b")
	if err := a.Renew(ctx); err != nil {
		t.Fatalf("Renew of a held lease: %v", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	b := mustLease(t, s, "t", "replica-b")
	for _, l := range []store.Lease{b, other} {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{s.schema}.Sanitize()+`.leases`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d leases left after every release (%v)", n, err)
	}
}

func TestLeaseBySameOwnerTakesItOver(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	first := mustLease(t, s, "t", "replica-a")
	second := mustLease(t, s, "t", "replica-a")
	// The first taking is over: it can neither renew nor release the second's.
	if err := first.Renew(ctx); !errors.Is(err, interlude.ErrThreadBusy) {
		t.Fatalf("Renew of a lease taken over: err = %v, want ErrThreadBusy", err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lease(ctx, store.LeaseRequest{ThreadID: "t", Owner: "replica-b", TTL: time.Minute}); !errors.Is(err, interlude.ErrThreadBusy) {
		t.Fatalf("the stale Release freed the thread: err = %v", err)
	}
	if err := second.Renew(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestExpiredLeaseIsTakenOver(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	dead := mustLease(t, s, "t", "replica-a")
	expire(t, s, "t")
	alive := mustLease(t, s, "t", "replica-b")
	if err := dead.Renew(ctx); !errors.Is(err, interlude.ErrThreadBusy) || !strings.Contains(err.Error(), "lost") {
		t.Fatalf("Renew after the lease was taken over: err = %v, want ErrThreadBusy saying it was lost", err)
	}
	if err := dead.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lease(ctx, store.LeaseRequest{ThreadID: "t", Owner: "replica-c", TTL: time.Minute}); !errors.Is(err, interlude.ErrThreadBusy) || !strings.Contains(err.Error(), "replica-b") {
		t.Fatalf("the dead run's Release freed the new holder's lease: err = %v", err)
	}
	if err := alive.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRenewExtendsAnExpiredLeaseNobodyTook(t *testing.T) {
	// A run that was slow to renew, but that nobody took over, keeps its lease.
	s := openTest(t)
	ctx := context.Background()
	l := mustLease(t, s, "t", "replica-a")
	expire(t, s, "t")
	if err := l.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lease(ctx, store.LeaseRequest{ThreadID: "t", Owner: "replica-b", TTL: time.Minute}); !errors.Is(err, interlude.ErrThreadBusy) {
		t.Fatalf("after Renew: err = %v, want ErrThreadBusy", err)
	}
	var left float64
	if err := s.pool.QueryRow(ctx, `SELECT extract(epoch FROM expires_at - now()) FROM `+pgx.Identifier{s.schema}.Sanitize()+`.leases`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left < 50 || left > 60 {
		t.Fatalf("after Renew the lease has %.1fs left, want about 60s", left)
	}
}

func TestLeaseRace(t *testing.T) {
	s := openTest(t)
	const n = 8
	won := race(t, n, func(i int) error {
		_, err := s.Lease(context.Background(), store.LeaseRequest{ThreadID: "t", Owner: "owner-" + string(rune('a'+i)), TTL: time.Minute})
		return err
	})
	if won != 1 {
		t.Fatalf("%d of %d racing owners got the lease, want 1", won, n)
	}
}

// race calls fn(0) to fn(n-1) at once and counts the calls that succeeded; a
// call may otherwise only be told that the thread is busy, or one of refusals.
func race(t *testing.T, n int, fn func(i int) error, refusals ...error) (succeeded int) {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		switch {
		case err == nil:
			succeeded++
		case !slices.ContainsFunc(append(refusals, interlude.ErrThreadBusy), func(r error) bool { return errors.Is(err, r) }):
			t.Errorf("a racing call failed: %v, want success, thread_busy or one of %v", err, refusals)
		}
	}
	return succeeded
}

func TestLeaseArguments(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	if _, err := s.Lease(ctx, store.LeaseRequest{ThreadID: "", Owner: "a", TTL: time.Minute}); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Errorf("empty thread id: %v", err)
	}
	if _, err := s.Lease(ctx, store.LeaseRequest{ThreadID: "t", Owner: "a", TTL: 0}); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Errorf("zero ttl: %v", err)
	}
}

// listed returns the ids of the threads List returns for q.
func listed(t *testing.T, s *Store, q store.Query) map[string]interlude.ThreadStatus {
	t.Helper()
	page, err := s.List(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]interlude.ThreadStatus{}
	for _, m := range page.Threads {
		out[m.ThreadID] = m.Status
	}
	return out
}

// TestLeaseDecidesTheReportedStatus checks the status rule: a held lease reads
// as running, an expired one as failed unless the last record ended a run or
// committed answers, in Meta, Load and every listing.
func TestLeaseDecidesTheReportedStatus(t *testing.T) {
	for _, c := range []struct {
		stored, expired interlude.ThreadStatus
	}{
		{interlude.ThreadInterrupted, interlude.ThreadInterrupted}, // a committed pause keeps its questions
		{interlude.ThreadFailed, interlude.ThreadFailed},
		{interlude.ThreadRunning, interlude.ThreadRunning}, // committed answers: a server finishes the step
		{interlude.ThreadIdle, interlude.ThreadFailed},     // died between steps
	} {
		t.Run(string(c.stored), func(t *testing.T) { leaseDecidesTheReportedStatus(t, c.stored, c.expired) })
	}
}

func leaseDecidesTheReportedStatus(t *testing.T, stored, expired interlude.ThreadStatus) {
	s := openTest(t)
	ctx := context.Background()
	q := interlude.Interruption{ID: "int_1", Node: "n", Message: "ok?"}
	for _, id := range []string{"t", "other"} {
		if err := s.Append(ctx, store.Append{ThreadID: id, Meta: store.Meta{Graph: "g", Status: stored, Interrupts: []interlude.Interruption{q}},
			Records: []store.Record{{Version: 1, Format: 1, Kind: "pause", Data: []byte("x")}}}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, want interlude.ThreadStatus) {
		t.Helper()
		m, err := s.Meta(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.Load(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != want || l.Meta.Status != want {
			t.Errorf("%s: Meta says %s, Load says %s; want %s", when, m.Status, l.Meta.Status, want)
		}
		if len(m.Interrupts) != 1 || m.Version != 1 {
			t.Errorf("%s: the other facts changed: %+v", when, m)
		}
		for _, st := range []interlude.ThreadStatus{"", interlude.ThreadIdle, interlude.ThreadRunning, interlude.ThreadInterrupted, interlude.ThreadFailed} {
			for _, graph := range []string{"", "g"} {
				got, in := listed(t, s, store.Query{Status: st, Graph: graph})["t"]
				if wantIn := st == "" || st == want; in != wantIn || (in && got != want) {
					t.Errorf("%s: List(status %q, graph %q) lists it: %v as %q; want %v as %q", when, st, graph, in, got, wantIn, want)
				}
			}
		}
		if got := listed(t, s, store.Query{Status: stored})["other"]; got != stored {
			t.Errorf("%s: the other thread is listed as %q", when, got)
		}
	}
	check("without a lease", stored)
	a := mustLease(t, s, "t", "replica-a")
	check("while its run holds the lease", interlude.ThreadRunning)
	expire(t, s, "t")
	check("once the lease expired", expired)
	b := mustLease(t, s, "t", "replica-b")
	check("once another replica took it over", interlude.ThreadRunning)
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	check("after the dead run's release", interlude.ThreadRunning)
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	check("after release", stored)
}

func TestListFailedMergesStoredAndExpired(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Threads updated one second apart: f1 and f3 failed by their records, e2
	// and e4 by expired leases; n5 idle, and p6 paused, which an expired lease
	// leaves interrupted.
	for i, c := range []struct {
		id     string
		status interlude.ThreadStatus
	}{{"f1", interlude.ThreadFailed}, {"e2", interlude.ThreadIdle}, {"f3", interlude.ThreadFailed}, {"e4", interlude.ThreadIdle}, {"n5", interlude.ThreadIdle}, {"p6", interlude.ThreadInterrupted}} {
		if err := s.Append(ctx, store.Append{ThreadID: c.id, Meta: store.Meta{Graph: "g", Status: c.status, UpdatedAt: base.Add(time.Duration(i) * time.Second)},
			Records: []store.Record{{Version: 1, Format: 1, Kind: "k", Data: []byte("x")}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"e2", "e4", "p6"} {
		mustLease(t, s, id, "dead")
		expire(t, s, id)
	}
	var got []string
	cursor := ""
	for range 10 {
		page, err := s.List(ctx, store.Query{Status: interlude.ThreadFailed, Limit: 1, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Threads {
			got = append(got, m.ThreadID)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if strings.Join(got, ",") != "e4,f3,e2,f1" {
		t.Fatalf("failed threads page by page: %v, want e4,f3,e2,f1 (newest first)", got)
	}
}

func TestDeleteDropsExpiredLeaseAndEvents(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	if err := s.Append(ctx, store.Append{ThreadID: "t", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "k", Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	mustLease(t, s, "t", "dead")
	expire(t, s, "t")
	// The events come from another replica, which holds no lease on t, so
	// Publish waits for them.
	log := newLog(t, replicaStore(t, s), EventConfig{})
	log.Publish("t", "end", []byte(`{}`), true)
	log.Publish("u", "end", []byte(`{}`), true)
	if err := s.Delete(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	schema := pgx.Identifier{s.schema}.Sanitize()
	var leases, events int
	if err := s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+schema+`.leases), (SELECT count(*) FROM `+schema+`.events)`).Scan(&leases, &events); err != nil {
		t.Fatal(err)
	}
	if leases != 0 || events != 1 {
		t.Fatalf("after Delete: %d leases, %d events; want 0 and the other thread's 1", leases, events)
	}
}

// TestLeaseTellsTheThreadsGraphAndVersion checks that a lease reports whose
// thread it is and at which version, as the database had it when it was taken,
// and loads the thread when asked unless the taker's copy is current.
func TestLeaseTellsTheThreadsGraphAndVersion(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	created := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)
	if err := s.Append(ctx, store.Append{ThreadID: "t", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle, CreatedAt: created},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "k", Data: []byte("x")}, {Version: 2, Format: 1, Kind: "k", Data: []byte("y")}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name          string
		req           store.LeaseRequest
		graph         string
		version       int64
		loadedRecords int // -1: nothing loaded
	}{
		{"no load asked", store.LeaseRequest{ThreadID: "t"}, "g", 2, -1},
		{"no copy", store.LeaseRequest{ThreadID: "t", Load: true}, "g", 2, 2},
		{"stale copy", store.LeaseRequest{ThreadID: "t", Load: true, Cached: 1}, "g", 2, 2},
		{"current copy", store.LeaseRequest{ThreadID: "t", Load: true, Cached: 2, CachedCreatedAt: created}, "g", 2, -1},
		{"copy of another thread at the same version", store.LeaseRequest{ThreadID: "t", Load: true, Cached: 2, CachedCreatedAt: created.Add(time.Nanosecond)}, "g", 2, 2},
		{"copy whose creation time is unknown", store.LeaseRequest{ThreadID: "t", Load: true, Cached: 2}, "g", 2, 2},
		{"new thread", store.LeaseRequest{ThreadID: "new", Load: true}, "", 0, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.req.Owner, c.req.TTL = "a", time.Minute
			l, err := s.Lease(ctx, c.req)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(ctx)
			if g, v := l.Thread(); g != c.graph || v != c.version {
				t.Errorf("Thread() = %q, %d; want %q, %d", g, v, c.graph, c.version)
			}
			loaded := l.Loaded()
			switch {
			case c.loadedRecords < 0 && loaded != nil:
				t.Errorf("Loaded() = %+v, want nil", loaded)
			case c.loadedRecords >= 0 && (loaded == nil || len(loaded.Records) != c.loadedRecords || loaded.Meta.Version != c.version || loaded.Meta.Status != interlude.ThreadRunning):
				t.Errorf("Loaded() = %+v, want the thread at version %d with %d records, running under the lease", loaded, c.version, c.loadedRecords)
			}
		})
	}
	// A refused lease loads nothing for its taker.
	held := mustLease(t, s, "t", "a")
	defer held.Release(ctx)
	if _, err := s.Lease(ctx, store.LeaseRequest{ThreadID: "t", Owner: "b", TTL: time.Minute, Load: true}); !errors.Is(err, interlude.ErrThreadBusy) {
		t.Fatalf("a second owner's lease with load: %v", err)
	}
}

// TestAnOpenedThreadServesTheRunOfTheGraphWhoseThreadItIs checks graph.Open on a
// shared store: one opening tells whose thread it is and holds its lease, a run
// of that graph on it goes without taking a lease of its own (which the
// opening would make busy), another graph is refused, and the thread is free
// once the opening is released.
func TestAnOpenedThreadServesTheRunOfTheGraphWhoseThreadItIs(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	type counter struct {
		N int `json:"n" graph:"add"`
	}
	compile := func(name string) *graph.Graph[counter] {
		g, err := graph.New[counter]().
			AddNode("inc", func(ctx context.Context, c counter) (counter, error) { return counter{N: 1}, nil }).
			AddEdge(graph.Start, "inc").AddEdge("inc", graph.End).
			Compile(graph.WithStore(s), graph.WithName(name), graph.WithLease(time.Minute, "owner-"+name))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a, b := compile("a"), compile("b")
	if _, err := a.Invoke(ctx, "t", graph.Input(counter{})); err != nil {
		t.Fatal(err)
	}
	opened, err := b.Open(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if opened.Graph != "a" {
		t.Fatalf("opened.Graph = %q, want a", opened.Graph)
	}
	if _, err := s.Lease(ctx, store.LeaseRequest{ThreadID: "t", Owner: "someone-else", TTL: time.Minute}); !errors.Is(err, interlude.ErrThreadBusy) {
		t.Fatalf("a lease while the thread is opened: %v, want ErrThreadBusy", err)
	}
	res, err := a.InvokeOn(ctx, opened, graph.Input(counter{}))
	if err != nil || res.Values.N != 2 {
		t.Fatalf("a run on the opened thread: %+v, %v; want n = 2", res, err)
	}
	if _, err := b.InvokeOn(ctx, opened, graph.Input(counter{})); !errors.Is(err, interlude.ErrInvalidRequest) || !strings.Contains(err.Error(), `graph "a"`) {
		t.Fatalf("another graph's run on the opened thread: %v, want it refused naming graph a", err)
	}
	if _, err := a.Invoke(ctx, "u", graph.Input(counter{})); err != nil {
		t.Fatalf("a run of another thread while t is opened takes its own lease: %v", err)
	}
	opened.Release(ctx)
	opened.Release(ctx) // a second release does nothing
	mustLease(t, s, "t", "someone-else").Release(ctx)

	// Another process's graph a, which has no copy of the thread, gets it with
	// its opening and loads nothing more.
	counted := &loadCounter{Store: s}
	a2, err := graph.New[counter]().
		AddNode("inc", func(ctx context.Context, c counter) (counter, error) { return counter{N: 1}, nil }).
		AddEdge(graph.Start, "inc").AddEdge("inc", graph.End).
		Compile(graph.WithStore(counted), graph.WithName("a"), graph.WithLease(time.Minute, "owner-a2"))
	if err != nil {
		t.Fatal(err)
	}
	opened, err = a2.Open(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	res, err = a2.InvokeOn(ctx, opened, graph.Input(counter{}))
	opened.Release(ctx)
	if err != nil || res.Values.N != 3 {
		t.Fatalf("a run on an opening that loaded the thread: %+v, %v; want n = 3", res, err)
	}
	if n := counted.loads.Load(); n != 0 {
		t.Fatalf("the run loaded the thread %d more times after its opening did", n)
	}
}

// loadCounter counts the Load calls of a store.
type loadCounter struct {
	*Store
	loads atomic.Int64
}

func (c *loadCounter) Load(ctx context.Context, threadID string) (*store.Loaded, error) {
	c.loads.Add(1)
	return c.Store.Load(ctx, threadID)
}

// refundOn compiles a refund-like graph on s as one process (owner) would:
// one question, then the refund of the amount asked about.
func refundOn(t *testing.T, s store.Store, owner string) *graph.Graph[refundState] {
	t.Helper()
	g, err := graph.New[refundState]().
		AddNode("refund", func(ctx context.Context, st refundState) (refundState, error) {
			ok, err := interlude.Ask[bool](ctx, interlude.Request{Message: "refund?"})
			if err != nil {
				return refundState{}, err
			}
			if ok {
				return refundState{Refunded: st.Amount}, nil
			}
			return refundState{}, nil
		}).
		AddEdge(graph.Start, "refund").AddEdge("refund", graph.End).
		Compile(graph.WithStore(s), graph.WithName("refund"), graph.WithLease(time.Minute, owner))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

type refundState struct {
	Amount   int `json:"amount"`
	Refunded int `json:"refunded"`
}

// TestAThreadDeletedAndCreatedAgainIsNotAnotherProcesssStaleCopy checks that a
// process whose cached copy of a thread has the version of a thread deleted and
// created again under the same id (by another process) runs the new thread,
// not its copy of the old one.
func TestAThreadDeletedAndCreatedAgainIsNotAnotherProcesssStaleCopy(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	a, b := refundOn(t, s, "a"), refundOn(t, s, "b")
	old, err := b.Invoke(ctx, "d", graph.Input(refundState{Amount: 111}))
	if err != nil || len(old.Interrupts) != 1 {
		t.Fatalf("b starts the thread: %+v, %v", old, err)
	}
	if err := a.Delete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	fresh, err := a.Invoke(ctx, "d", graph.Input(refundState{Amount: 222}))
	if err != nil || len(fresh.Interrupts) != 1 {
		t.Fatalf("a starts the thread again: %+v, %v", fresh, err)
	}
	id := fresh.Interrupts[0].ID
	res, err := b.Invoke(ctx, "d", graph.Respond(map[string]interlude.Resolution{id: interlude.Resolve(true)}))
	if err != nil {
		t.Fatalf("b answers the new thread's question %s: %v", id, err)
	}
	if res.Values.Refunded != 222 {
		t.Fatalf("b refunded %d, want the new thread's 222", res.Values.Refunded)
	}
}

// TestDeleteIsRefusedWhileAnotherProcessRunsTheThread checks that deleting a thread another
// process runs is refused as busy and deletes nothing, and succeeds once the
// run has ended.
func TestDeleteIsRefusedWhileAnotherProcessRunsTheThread(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	a, b := refundOn(t, s, "a"), refundOn(t, s, "b")
	if _, err := a.Invoke(ctx, "x", graph.Input(refundState{Amount: 5})); err != nil {
		t.Fatal(err)
	}
	opened, err := a.Open(ctx, "x") // a run of a's, under way
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "x"); !errors.Is(err, interlude.ErrThreadBusy) {
		t.Fatalf("delete during a's run: %v, want ErrThreadBusy", err)
	}
	if _, err := s.Meta(ctx, "x"); err != nil {
		t.Fatalf("the refused delete deleted the thread: %v", err)
	}
	opened.Release(ctx)
	if err := b.Delete(ctx, "x"); err != nil {
		t.Fatalf("delete after the run: %v", err)
	}
	if _, err := s.Meta(ctx, "x"); !errors.Is(err, interlude.ErrNotFound) {
		t.Fatalf("after delete, Meta: %v, want ErrNotFound", err)
	}
	mustLease(t, s, "x", "c").Release(ctx) // and the delete left no lease behind
}

// leaseSpy records whether each lease taken through it loaded the thread.
type leaseSpy struct {
	*Store
	loaded []bool
}

func (s *leaseSpy) Lease(ctx context.Context, req store.LeaseRequest) (store.Lease, error) {
	l, err := s.Store.Lease(ctx, req)
	if err == nil {
		s.loaded = append(s.loaded, l.Loaded() != nil)
	}
	return l, err
}

// TestAClaimByTheProcessThatWroteTheThreadLoadsNothing checks that a process
// whose copy of a thread is current, because it created or last wrote it, is
// not sent the thread again with its claim: its copy is known by version and
// creation time.
func TestAClaimByTheProcessThatWroteTheThreadLoadsNothing(t *testing.T) {
	spy := &leaseSpy{Store: openTest(t)}
	ctx := context.Background()
	a := refundOn(t, spy, "a")
	res, err := a.Invoke(ctx, "w", graph.Input(refundState{Amount: 9}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(ctx, "w", graph.Respond(map[string]interlude.Resolution{res.Interrupts[0].ID: interlude.Resolve(false)})); err != nil {
		t.Fatal(err)
	}
	if len(spy.loaded) != 2 || spy.loaded[0] || spy.loaded[1] {
		t.Fatalf("the claims of the run that created the thread and of its answer loaded it: %v, want [false false]", spy.loaded)
	}
}

// TestAnExpiredLeaseIsReportedOnceUntilTakenOrRenewedAgain checks
// ExpiredLeases: each expiry is reported once, to one of the processes asking
// at once, with the thread's version; a lease that is held, or released, is not
// reported; taking or renewing a lease lets its next expiry be reported again.
func TestAnExpiredLeaseIsReportedOnceUntilTakenOrRenewedAgain(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	step := func(id string) {
		t.Helper()
		if err := s.Append(ctx, store.Append{ThreadID: id, Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
			Records: []store.Record{{Version: 1, Format: 1, Kind: "k", Data: []byte("x")}}}); err != nil {
			t.Fatal(err)
		}
	}
	expired := func() []store.ExpiredLease {
		t.Helper()
		got, err := s.ExpiredLeases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	step("died")
	mustLease(t, s, "died", "a")
	mustLease(t, s, "running", "a")
	mustLease(t, s, "done", "a").Release(ctx)
	expire(t, s, "died")
	if got := expired(); len(got) != 1 || got[0] != (store.ExpiredLease{ThreadID: "died", Version: 1}) {
		t.Fatalf("ExpiredLeases = %+v, want the one expired lease, at version 1", got)
	}
	if got := expired(); len(got) != 0 {
		t.Fatalf("reported twice: %+v", got)
	}

	// Taken over, then expired again: reported again.
	mustLease(t, s, "died", "b")
	expire(t, s, "died")
	if got := expired(); len(got) != 1 {
		t.Fatalf("after a takeover and a second expiry: %+v, want it reported again", got)
	}
	// Renewed by its owner after expiring (its process only paused), then
	// expired again: reported again.
	l := mustLease(t, s, "paused", "c")
	expire(t, s, "paused")
	if got := expired(); len(got) != 1 || got[0].ThreadID != "paused" || got[0].Version != 0 {
		t.Fatalf("%+v, want the thread without records reported at version 0", got)
	}
	if err := l.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	expire(t, s, "paused")
	if got := expired(); len(got) != 1 {
		t.Fatalf("after a renewal and a second expiry: %+v, want it reported again", got)
	}

	// Replicas asking at once share the expiries: each goes to one.
	for i := range 20 {
		id := fmt.Sprintf("many-%d", i)
		mustLease(t, s, id, "d")
		expire(t, s, id)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got, err := s.ExpiredLeases(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, e := range got {
				seen[e.ThreadID]++
			}
		})
	}
	wg.Wait()
	if len(seen) != 20 {
		t.Fatalf("%d of 20 expiries reported", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s reported %d times", id, n)
		}
	}
}

// TestUnfinishedLeavesOutThreadsALiveRunHolds checks that a replica is offered
// only the answered threads whose run died: a held lease hides a thread from
// Unfinished, an expired one shows it again.
func TestUnfinishedLeavesOutThreadsALiveRunHolds(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	if err := s.Append(ctx, store.Append{ThreadID: "t", Meta: store.Meta{Graph: "g", Status: interlude.ThreadRunning},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "resolve", Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	unfinished := func() []string {
		t.Helper()
		ms, err := s.Unfinished(ctx, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.ThreadID)
		}
		return ids
	}
	l := mustLease(t, s, "t", "replica-a")
	if got := unfinished(); len(got) != 0 {
		t.Fatalf("while a run holds the lease, Unfinished lists %v", got)
	}
	expire(t, s, "t")
	if got := unfinished(); len(got) != 1 || got[0] != "t" {
		t.Fatalf("once the lease expired, Unfinished lists %v, want [t]", got)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := unfinished(); len(got) != 1 {
		t.Fatalf("without a lease, Unfinished lists %v, want [t]", got)
	}
}

// unwrapping wraps a store the way instrumentation does: it has the Store
// methods only, and Unwrap.
type unwrapping struct{ store.Store }

func (w unwrapping) Unwrap() store.Store { return w.Store }

func TestAWrappedStoreStillLeasesThroughAs(t *testing.T) {
	s := openTest(t)
	wrapped := unwrapping{unwrapping{s}}
	for name, ok := range map[string]bool{
		"LeaseWatcher":  has[store.LeaseWatcher](wrapped),
		"ExpiryIndex":   has[store.ExpiryIndex](wrapped),
		"RecoveryIndex": has[store.RecoveryIndex](wrapped),
	} {
		if !ok {
			t.Errorf("store.As finds no %s through two wrappers", name)
		}
	}
	l, ok := store.As[store.Leaser](wrapped)
	if !ok {
		t.Fatal("store.As finds no Leaser through two wrappers")
	}
	ctx := context.Background()
	held, err := l.Lease(ctx, store.LeaseRequest{ThreadID: "t", Owner: "replica-a", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	if _, err := s.Lease(ctx, store.LeaseRequest{ThreadID: "t", Owner: "replica-b", TTL: time.Minute}); !errors.Is(err, interlude.ErrThreadBusy) {
		t.Fatalf("a lease taken through the wrappers does not hold the thread: err = %v, want ErrThreadBusy", err)
	}
}

// has reports whether store.As finds T in s.
func has[T any](s store.Store) bool {
	_, ok := store.As[T](s)
	return ok
}
