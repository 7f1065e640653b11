package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// testLock is an advisory lock a test holds, on a connection of its own, so
// that statements taking the lock wait until the test lets it go.
type testLock struct {
	key    int64
	conn   *pgxpool.Conn
	locked bool
}

// holdLock takes an advisory lock named name for the rest of the test.
func holdLock(t *testing.T, s *Store, name string) *testLock {
	t.Helper()
	ctx := context.Background()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := &testLock{key: lockKey(name + " " + s.schema), conn: conn, locked: true}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, l.key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.unlock(t)
		conn.Release()
	})
	return l
}

// unlock lets the lock go, if it is held.
func (l *testLock) unlock(t *testing.T) {
	if !l.locked {
		return
	}
	l.locked = false
	if _, err := l.conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, l.key); err != nil {
		t.Error(err)
	}
}

// waitedOn reports whether a statement waits for the lock.
func (l *testLock) waitedOn() bool {
	var waiting int
	l.conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
		AND objsubid = 1 AND (classid::bigint << 32 | objid::bigint) = $1`, l.key).Scan(&waiting)
	return waiting > 0
}

// blockBatches sends a statement through b that waits on an advisory lock the
// test holds, so that calls made meanwhile queue behind it. The returned
// function lets that statement finish.
func blockBatches(t *testing.T, s *Store, b *batcher) (unblock func()) {
	t.Helper()
	ctx := context.Background()
	lock := holdLock(t, s, "batch test")
	key := lock.key
	var wg sync.WaitGroup
	wg.Go(func() {
		var one int
		if err := b.queryRow(ctx, "blocker", `SELECT 1 FROM (SELECT pg_advisory_xact_lock_shared($1)) l`, []any{key}, &one); err != nil {
			t.Error(err)
		}
	})
	if !poll(func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.busy }) {
		t.Fatal("the blocking statement never went out")
	}
	return func() {
		lock.unlock(t)
		wg.Wait()
	}
}

// waitQueued waits until n calls are queued behind the batch that is out.
func waitQueued(t *testing.T, b *batcher, n int) {
	t.Helper()
	if !poll(func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.queue) == n }) {
		t.Fatalf("%d calls never queued", n)
	}
}

func TestCallsMadeWhileABatchIsOutShareOneTransaction(t *testing.T) {
	s := openTest(t)
	b := newBatcher(s.fast, 0)
	unblock := blockBatches(t, s, b)

	threads := []string{"t1", "t2", "t3", "t1"} // the second call on t1 must wait for a later batch
	xids := make([]int64, len(threads))
	var wg sync.WaitGroup
	for i, th := range threads {
		wg.Go(func() {
			if err := b.queryRow(context.Background(), th, `SELECT txid_current()`, nil, &xids[i]); err != nil {
				t.Error(err)
			}
		})
		waitQueued(t, b, i+1)
	}
	unblock()
	wg.Wait()
	if xids[0] != xids[1] || xids[1] != xids[2] {
		t.Errorf("calls on three threads queued together ran in transactions %v, want one", xids[:3])
	}
	if xids[3] == xids[0] {
		t.Errorf("two calls on thread t1 ran in one transaction (%d); a batch holds one call per thread", xids[0])
	}
}

// txids runs SELECT txid_current() through b on each thread, each call from a
// goroutine of its own once the previous one is queued, if queued is set. The
// returned function waits for the calls to end (failing the test if they do not
// within ten seconds) and returns the transaction each ran in.
func txids(t *testing.T, b *batcher, queued bool, threads ...string) func() map[string]int64 {
	t.Helper()
	var mu sync.Mutex
	got := make(map[string]int64)
	var wg sync.WaitGroup
	for _, th := range threads {
		n := 0
		if queued {
			b.mu.Lock()
			n = len(b.queue)
			b.mu.Unlock()
		}
		wg.Go(func() {
			var xid int64
			if err := b.queryRow(context.Background(), th, `SELECT txid_current()`, nil, &xid); err != nil {
				t.Error(err)
			}
			mu.Lock()
			got[th] = xid
			mu.Unlock()
		})
		if queued {
			waitQueued(t, b, n+1)
		}
	}
	return func() map[string]int64 {
		t.Helper()
		done := make(chan struct{})
		go func() {
			wg.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second): // a bound on a failure, not a wait for success
			t.Fatal("a caller was never told what came of its call")
		}
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

func TestASmallBatchHandedOnWaitsForTheCallsMadeMeanwhile(t *testing.T) {
	s := openTest(t)
	b := newBatcher(s.fast, time.Hour) // the test's stand-in below decides when the wait ends
	waiting, proceed := make(chan struct{}, 1), make(chan struct{})
	b.pause = func(d time.Duration, _ <-chan struct{}) {
		if d != time.Hour {
			t.Errorf("the batch waited %s, not the batcher's wait", d)
		}
		waiting <- struct{}{}
		<-proceed
	}
	unblock := blockBatches(t, s, b)
	first := txids(t, b, true, "b") // queued behind the batch that is out, it leads the next one alone
	unblock()
	select {
	case <-waiting:
	case <-time.After(10 * time.Second): // a bound on a failure, not a wait for success
		t.Fatal("the batch handed on with one call went out without waiting for more")
	}
	// Calls made while the batch waits join it, "a" ahead of the leader's "b".
	later := txids(t, b, true, "a", "c")
	close(proceed)
	got, more := first(), later()
	if got["b"] != more["a"] || more["a"] != more["c"] {
		t.Errorf("the waiting batch on b and the calls on a and c made meanwhile ran in transactions %d, %d and %d, want one",
			got["b"], more["a"], more["c"])
	}
}

// TestASmallBatchHandedOnGoesOutOnceTheCallersBeforeItHaveCalledAgain hands
// a batch of one call on after a batch of one: with a wait of an hour, it
// goes out as soon as one more call joins it, as happens when a few runs step
// at once and each calls again a few microseconds after its call came back.
func TestASmallBatchHandedOnGoesOutOnceTheCallersBeforeItHaveCalledAgain(t *testing.T) {
	s := openTest(t)
	b := newBatcher(s.fast, time.Hour)
	unblock := blockBatches(t, s, b)
	first := txids(t, b, true, "b")
	unblock()
	if !poll(func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.enough != nil }) {
		t.Fatal("the batch handed on with one call never waited for more")
	}
	got, more := first, txids(t, b, false, "a")
	if g, m := got(), more(); g["b"] != m["a"] {
		t.Errorf("the waiting batch on b and the call on a ran in transactions %d and %d, want one", g["b"], m["a"])
	}
}

func TestCallsThatNeedNotWaitGoOutAtOnce(t *testing.T) {
	many := make([]string, newBatcher(nil, 0).waitBelow)
	for i := range many {
		many[i] = fmt.Sprint("t", i)
	}
	for _, tc := range []struct {
		name    string
		busy    bool     // the calls queue behind a batch that is out
		threads []string // the calls, made in this order
	}{
		{"a call to an idle store", false, []string{"a"}},
		{"a batch handed on with waitBelow calls", true, many},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t)
			b := newBatcher(s.fast, time.Hour)
			b.pause = func(time.Duration, <-chan struct{}) { t.Error("the batch waited") }
			unblock := func() {}
			if tc.busy {
				unblock = blockBatches(t, s, b)
			}
			wait := txids(t, b, tc.busy, tc.threads...)
			unblock()
			got := wait()
			for _, th := range tc.threads {
				if got[th] != got[tc.threads[0]] {
					t.Fatalf("calls queued together ran in transactions %v, want one", got)
				}
			}
		})
	}
}

func TestAFailingAppendInABatchFailsAlone(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	unblock := blockBatches(t, s, s.appends)

	appendOf := func(thread, kind string) store.Append {
		return store.Append{ThreadID: thread, Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
			Records: []store.Record{{Version: 1, Format: 1, Kind: kind, Data: []byte("x")}}}
	}
	cases := []struct {
		append store.Append
		fails  bool
	}{
		{appendOf("good-1", "step"), false},
		{appendOf("bad", "\xff not UTF-8"), true}, // Postgres refuses the text
		{appendOf("good-2", "step"), false},
	}
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() { errs[i] = s.Append(ctx, c.append) })
		waitQueued(t, s.appends, i+1)
	}
	unblock()
	wg.Wait()
	for i, c := range cases {
		if (errs[i] != nil) != c.fails {
			t.Errorf("append to %s: error %v, want failure %v", c.append.ThreadID, errs[i], c.fails)
		}
		v, err := s.Version(ctx, c.append.ThreadID)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int64{false: 1, true: 0}[c.fails]; v != want {
			t.Errorf("thread %s is at version %d, want %d", c.append.ThreadID, v, want)
		}
	}
}

func TestAConflictInABatchFailsOnlyItsAppend(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	first := store.Append{ThreadID: "taken", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "step", Data: []byte("first")}}}
	if err := s.Append(ctx, first); err != nil {
		t.Fatal(err)
	}
	unblock := blockBatches(t, s, s.appends)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, th := range []string{"taken", "free-1", "free-2"} {
		a := first
		a.ThreadID = th
		wg.Go(func() { errs[i] = s.Append(ctx, a) })
		waitQueued(t, s.appends, i+1)
	}
	unblock()
	wg.Wait()
	if !errors.Is(errs[0], interlude.ErrConflict) {
		t.Errorf("creating an existing thread in a batch: %v, want a conflict", errs[0])
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("append %d, batched with a conflict: %v", i+1, err)
		}
	}
}

func TestACallWhoseContextEndsWhileQueuedIsNeverSent(t *testing.T) {
	s := openTest(t)
	unblock := blockBatches(t, s, s.appends)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- s.Append(ctx, store.Append{ThreadID: "abandoned", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
			Records: []store.Record{{Version: 1, Format: 1, Kind: "step"}}})
	}()
	waitQueued(t, s.appends, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("append abandoned in the queue: %v, want context.Canceled", err)
	}
	unblock()
	if v, err := s.Version(context.Background(), "abandoned"); err != nil || v != 0 {
		t.Errorf("abandoned append: thread at version %d (%v), want nothing written", v, err)
	}
}

func TestConcurrentAppendsAllLand(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	const writers, rounds = 32, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			th := fmt.Sprintf("w%d", w)
			for v := range int64(rounds) {
				a := store.Append{ThreadID: th, Expect: v, Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
					Records: []store.Record{{Version: v + 1, Format: 1, Kind: "step", Data: []byte(th)}}}
				if err := s.Append(ctx, a); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for w := range writers {
		th := fmt.Sprintf("w%d", w)
		recs, err := s.Records(ctx, th, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != rounds {
			t.Fatalf("thread %s has %d records, want %d", th, len(recs), rounds)
		}
		for i, r := range recs {
			if r.Version != int64(i+1) || string(r.Data) != th {
				t.Fatalf("thread %s record %d is %+v", th, i, r)
			}
		}
	}
}

// TestABatchRunsWhileAnyOfItsCallersWaits sends two calls together in a batch
// that waits on a lock, and has some of their callers give up: the batch goes
// on, and every call gets its outcome, while anyone still waits; once all have
// given up, it is cancelled.
func TestABatchRunsWhileAnyOfItsCallersWaits(t *testing.T) {
	for _, tc := range []struct {
		name      string
		giveUp    int // how many of the two callers give up
		wantFails bool
	}{
		{"one of two gives up", 1, false},
		{"both give up", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t)
			b := newBatcher(s.fast, 0)
			ctx := context.Background()
			lock := holdLock(t, s, "batch cancel test")
			unblock := blockBatches(t, s, b)
			cancels := make([]context.CancelFunc, 2)
			errs := make(chan error, 2)
			for i := range cancels {
				var callCtx context.Context
				callCtx, cancels[i] = context.WithCancel(ctx)
				go func() {
					var one int
					errs <- b.queryRow(callCtx, fmt.Sprint("waiter", i), `SELECT 1 FROM (SELECT pg_advisory_xact_lock($1)) l`, []any{lock.key}, &one)
				}()
				waitQueued(t, b, i+1)
			}
			unblock() // the two calls go out together and wait on the lock
			if !poll(lock.waitedOn) {
				t.Fatal("the batch never waited on the lock")
			}
			for _, cancel := range cancels[:tc.giveUp] {
				cancel()
			}
			if !tc.wantFails {
				lock.unlock(t)
			}
			for range 2 {
				select {
				case err := <-errs:
					if (err != nil) != tc.wantFails {
						t.Errorf("call: %v, want failure %v", err, tc.wantFails)
					}
				case <-time.After(10 * time.Second): // a bound on a failure, not a wait for success
					t.Fatal("the batch went on after all its callers gave up")
				}
			}
			cancels[1]()
		})
	}
}

// panicScanner panics when a value is scanned into it.
type panicScanner struct{}

func (panicScanner) Scan(any) error { panic("scan exploded") }

func TestABatchThatPanicsLeavesTheBatcherServing(t *testing.T) {
	s := openTest(t)
	b := newBatcher(s.fast, 0)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the scan's panic did not reach its caller")
			}
		}()
		b.queryRow(context.Background(), "t", `SELECT 1`, nil, panicScanner{})
	}()
	done := make(chan error, 1)
	go func() {
		var one int
		done <- b.queryRow(context.Background(), "t", `SELECT 1`, nil, &one)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // a bound on a failure, not a wait for success
		t.Fatal("the batcher stopped serving after a panic")
	}
}

// TestEachThreadsCallsGoInTheOrderSubmitted checks how take forms batches from
// a queue: one call per thread, except that a call writing several threads'
// events may go ahead of calls on them in a batch; no call passes an earlier one
// on the same thread; a batch carries a bounded number of bytes; and a batch is
// ordered events first, then by thread, so that replicas lock shared rows in
// one order.
func TestEachThreadsCallsGoInTheOrderSubmitted(t *testing.T) {
	one := func(name, thread string) *call { return &call{query: name, threadID: thread} }
	many := func(name string, threads ...string) *call { return &call{query: name, threads: threads} }
	cases := []struct {
		name    string
		held    []*call // a batch taken earlier that waited for more calls
		queue   []*call
		batches string
	}{
		{"one call per thread", nil, []*call{one("a1", "a"), one("b1", "b"), one("a2", "a")}, "[a1 b1] [a2]"},
		{"events of several threads go ahead of their calls", nil,
			[]*call{many("ev1", "a", "b"), one("a1", "a"), one("b1", "b")}, "[ev1 a1 b1]"},
		{"events wait behind a call on one of their threads", nil,
			[]*call{one("a1", "a"), many("ev1", "a", "b"), one("c1", "c")}, "[a1 c1] [ev1]"},
		{"events wait behind a queued call on one of their threads", nil,
			[]*call{one("a1", "a"), one("a2", "a"), many("ev1", "a", "b"), one("b1", "b")}, "[a1] [a2] [ev1 b1]"},
		{"a call waits behind queued events of its thread", nil,
			[]*call{one("a1", "a"), one("a2", "a"), many("ev1", "a", "b"), one("b1", "b"), one("c1", "c")}, "[a1 c1] [a2] [ev1 b1]"},
		{"a batch carries at most maxBytes, or one call", nil,
			[]*call{{query: "big", threadID: "a", size: 900}, {query: "b1", threadID: "b", size: 200}, {query: "c1", threadID: "c", size: 50},
				{query: "huge", threadID: "d", size: 5000}}, "[big c1] [b1] [huge]"},
		{"a batch goes in the order of its threads", nil,
			[]*call{one("c1", "c"), one("a1", "a"), many("ev1", "x"), one("b1", "b"), many("ev2", "y")}, "[ev1 ev2 a1 b1 c1]"},
		{"a batch that waited takes in the calls queued meanwhile, one per thread", []*call{one("b1", "b")},
			[]*call{one("a1", "a"), one("b2", "b"), one("c1", "c")}, "[a1 b1 c1] [b2]"},
		{"events queued meanwhile wait behind the waiting batch's call on one of their threads", []*call{one("a1", "a")},
			[]*call{many("ev1", "a", "b"), one("b1", "b")}, "[a1] [ev1 b1]"},
		{"a call queued meanwhile joins events that waited", []*call{many("ev1", "a", "b")},
			[]*call{one("a1", "a")}, "[ev1 a1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := &batcher{maxCalls: 64, maxBytes: 1000, queue: tc.queue}
			var got []string
			var batch []*call
			if tc.held != nil {
				batch = b.takeInto(tc.held)
			} else {
				batch = b.take()
			}
			for ; batch != nil; batch = b.take() {
				var names []string
				for _, c := range batch {
					names = append(names, c.query)
				}
				got = append(got, fmt.Sprint(names))
			}
			if s := strings.Join(got, " "); s != tc.batches {
				t.Fatalf("batches %s, want %s", s, tc.batches)
			}
		})
	}
}
