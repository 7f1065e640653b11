package sqlite

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// TestADurableWriteSyncsTheLogAfterItsCommitAndANoSyncOneDoesNot checks the
// log's syncs: every commit runs under synchronous=NORMAL, and each durable
// append, delete and document write is followed by one sync of the log (none
// under WithSynchronous("NORMAL"); EXTRA is FULL), an append marked NoSync,
// a claim of notices and a settle of them by none, whatever the order they
// come in.
func TestADurableWriteSyncsTheLogAfterItsCommitAndANoSyncOneDoesNot(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []Option
		sync int64 // syncs per durable write
	}{
		{"default", nil, 1},
		{"EXTRA", []Option{WithSynchronous("EXTRA")}, 1},
		{"NORMAL", []Option{WithSynchronous("NORMAL")}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openTemp(t, c.opts...)
			ctx := context.Background()
			check := func(what string, want int64, do func() error) {
				t.Helper()
				before := syncs(s)
				if err := do(); err != nil {
					t.Fatal(err)
				}
				if got := syncs(s) - before; got != want {
					t.Errorf("%s: %d syncs of the log, want %d", what, got, want)
				}
				if m := writerMode(t, s); m != 1 {
					t.Errorf("%s: the writer is under synchronous=%d, want 1 (NORMAL)", what, m)
				}
			}
			meta := store.Meta{Graph: "g", Status: interlude.ThreadRunning}
			for v, noSync := range []bool{true, true, false, true, false, false, true} {
				a := store.Append{ThreadID: "t", Expect: int64(v), Meta: meta, NoSync: noSync,
					Records: []store.Record{{Version: int64(v) + 1, Format: 1, Kind: "step", Data: []byte("x")}}}
				want := c.sync
				if noSync {
					want = 0
				}
				check(fmt.Sprintf("append %d (NoSync %v)", v+1, noSync), want, func() error { return s.Append(ctx, a) })
			}
			// A claim or a settle of notices never waits for the disk: one lost
			// to a crash only delivers its notices again, under the same ids.
			check("an append carrying notices", c.sync, func() error {
				return s.Append(ctx, store.Append{ThreadID: "u", Meta: meta, Records: []store.Record{{Version: 1, Format: 1, Kind: "step", Data: []byte("x")}},
					Outbox: []store.Notice{{ID: "n1", Graph: "g", Type: store.NoticeRaised, Data: []byte(`{}`)}, {ID: "n2", Graph: "g", Type: store.NoticeRaised, Data: []byte(`{}`)}}})
			})
			check("a claim of notices", 0, func() error {
				_, err := s.ClaimNotices(ctx, store.NoticeClaim{Owner: "d", Now: time.Now(), TTL: time.Minute})
				return err
			})
			check("a settle of notices", 0, func() error {
				return s.SettleNotices(ctx, []store.NoticeSettle{{ID: "n1", Owner: "d", State: store.NoticeDelivered, At: time.Now()},
					{ID: "n2", Owner: "d", State: store.NoticePending, NextAt: time.Now().Add(time.Minute), Error: "503"}})
			})
			check("a document's put", c.sync, func() error {
				return s.PutDocument(ctx, store.Document{ThreadID: "t", Kind: "k", Data: []byte("d")})
			})
			check("a document's delete", c.sync, func() error { return s.DeleteDocument(ctx, "t", "k", "") })
			check("a delete", c.sync, func() error { return s.Delete(ctx, "t") })
		})
	}
}

// syncs returns how many times the store synced its log.
func syncs(s *Store) int64 {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return s.log.n
}

// TestAnAppendFailingAfterItsCompareAndSetIsUndoneAloneInItsGroup commits
// one group of appends: two that succeed, one whose compare-and-set fails, and
// one that fails after it (a record a trigger refuses). The failed ones leave
// nothing behind and the others are committed.
func TestAnAppendFailingAfterItsCompareAndSetIsUndoneAloneInItsGroup(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if err := writerExec(s, `CREATE TRIGGER poison BEFORE INSERT ON records WHEN NEW.kind = 'poison'
		BEGIN SELECT RAISE(ABORT, 'poisoned record'); END`); err != nil {
		t.Fatal(err)
	}
	meta := store.Meta{Graph: "g", Status: interlude.ThreadRunning}
	req := func(id string, expect int64, kind string) *appendReq {
		return &appendReq{ctx: ctx, a: store.Append{ThreadID: id, Expect: expect, Meta: meta,
			Records: []store.Record{{Version: expect + 1, Format: 1, Kind: kind, Data: []byte("x")}}}}
	}
	group := []*appendReq{req("first", 0, "step"), req("stale", 4, "step"), req("poisoned", 0, "poison"), req("last", 0, "step")}
	s.commits.commit(group)
	for i, want := range []int64{1, 0, 0, 1} {
		r := group[i]
		if (r.err == nil) != (want == 1) {
			t.Errorf("append to %q: err %v, want it to succeed: %v", r.a.ThreadID, r.err, want == 1)
		}
		if v, err := s.Version(ctx, r.a.ThreadID); err != nil || v != want {
			t.Errorf("thread %q is at version %d (%v) after the group, want %d", r.a.ThreadID, v, err, want)
		}
	}
	if !errors.Is(group[1].err, interlude.ErrConflict) {
		t.Errorf("the stale append failed with %v, want a conflict", group[1].err)
	}
	if recs, err := s.Records(ctx, "poisoned", 0, 0, 0); err == nil || len(recs) > 0 {
		t.Errorf("the poisoned thread has records %v (%v), want none", recs, err)
	}
}

// writerMode returns the writer's synchronous mode.
func writerMode(t *testing.T, s *Store) int {
	t.Helper()
	var m int
	if err := writerQueryRow(s, "PRAGMA synchronous", nil, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// syncGate makes s's log syncs wait: entered receives the thread versions
// visible to readers when a sync begins, and the sync goes on when release
// receives the sync's outcome.
func syncGate(t *testing.T, s *Store, id string) (entered chan int64, release chan error) {
	entered, release = make(chan int64), make(chan error)
	s.log.mu.Lock()
	s.log.hook = func() error {
		v, err := s.Version(context.Background(), id)
		if err != nil {
			t.Error(err)
		}
		entered <- v
		return <-release
	}
	s.log.mu.Unlock()
	return entered, release
}

// TestANoSyncAppendReturnsBeforeItsGroupsSync queues a NoSync append and a
// durable one into one group, in both orders (the group's leader is the first):
// the NoSync one returns while the group's sync has not ended, the durable one
// only once it has, and the sync began after their commit.
func TestANoSyncAppendReturnsBeforeItsGroupsSync(t *testing.T) {
	for _, noSyncFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("NoSync first %v", noSyncFirst), func(t *testing.T) {
			s := openTemp(t)
			ctx := context.Background()
			entered, release := syncGate(t, s, "durable")
			held, heldDone := holdWriter(t, s)
			noSync, durable := make(chan error, 1), make(chan error, 1)
			start := func(id string, done chan error) {
				a := firstAppend(id)
				a.NoSync = id == "nosync"
				go func() { done <- s.Append(ctx, a) }()
			}
			if noSyncFirst {
				start("nosync", noSync)
				waitQueued(s, 1)
				start("durable", durable)
			} else {
				start("durable", durable)
				waitQueued(s, 1)
				start("nosync", noSync)
			}
			waitQueued(s, 2)
			groups := s.commits.groups.Load()
			close(held)
			if err := <-heldDone; err != nil {
				t.Fatalf("the held write: %v", err)
			}
			if v := <-entered; v != 1 {
				t.Errorf("the sync began with the durable append at version %d, want it committed (1)", v)
			}
			if err := <-noSync; err != nil { // while the sync waits
				t.Errorf("the NoSync append: %v", err)
			}
			select {
			case err := <-durable:
				t.Fatalf("the durable append returned (%v) before its group's sync ended", err)
			default:
			}
			release <- nil
			if err := <-durable; err != nil {
				t.Errorf("the durable append: %v", err)
			}
			if got := s.commits.groups.Load() - groups; got != 1 {
				t.Errorf("the two appends were committed in %d groups, want 1", got)
			}
		})
	}
}

// TestAFailedSyncFailsTheGroupsDurableAppendsAndEveryLaterOne fails the log's
// sync after a group's commit: the group's durable append fails with the
// sync's error, its NoSync append succeeds, and every later durable write
// fails too, since the log's unwritten pages may be gone.
func TestAFailedSyncFailsTheGroupsDurableAppendsAndEveryLaterOne(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	entered, release := syncGate(t, s, "durable")
	held, heldDone := holdWriter(t, s)
	noSync, durable := make(chan error, 1), make(chan error, 1)
	go func() { durable <- s.Append(ctx, firstAppend("durable")) }()
	waitQueued(s, 1)
	go func() {
		a := firstAppend("nosync")
		a.NoSync = true
		noSync <- s.Append(ctx, a)
	}()
	waitQueued(s, 2)
	close(held)
	if err := <-heldDone; err != nil {
		t.Fatalf("the held write: %v", err)
	}
	<-entered
	disk := errors.New("input/output error")
	release <- disk
	if err := <-durable; !errors.Is(err, disk) {
		t.Errorf("the durable append: err = %v, want the sync's error", err)
	}
	if err := <-noSync; err != nil {
		t.Errorf("the NoSync append: %v", err)
	}
	s.log.mu.Lock()
	s.log.hook = nil
	s.log.mu.Unlock()
	if err := s.Append(ctx, firstAppend("later")); !errors.Is(err, disk) {
		t.Errorf("a later durable append: err = %v, want the first sync's error", err)
	}
	if err := s.PutDocument(ctx, store.Document{ThreadID: "later", Kind: "k"}); !errors.Is(err, disk) {
		t.Errorf("a later document's put: err = %v, want the first sync's error", err)
	}
}
