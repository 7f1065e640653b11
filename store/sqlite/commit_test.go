package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// holdWriter submits a write that keeps the writer until release is closed,
// and returns once that write is being applied. done receives its outcome.
func holdWriter(t *testing.T, s *Store) (release chan struct{}, done chan error) {
	t.Helper()
	release, done = make(chan struct{}), make(chan error, 1)
	started := make(chan struct{})
	ctx := context.Background()
	go func() {
		done <- s.commits.submit(ctx, &appendReq{ctx: ctx, a: store.Append{NoSync: true}, write: func(context.Context) error {
			close(started)
			<-release
			return nil
		}})
	}()
	<-started
	return release, done
}

// queueBehindHeldWriter queues writes, in order, while a group holds the
// writer, then lets it go, and returns each write's outcome and how many
// groups committed them.
func queueBehindHeldWriter(t *testing.T, s *Store, writes []func() error) (errs []error, groups int64) {
	t.Helper()
	release, held := holdWriter(t, s)
	errs = make([]error, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		wg.Go(func() { errs[i] = w() })
		waitQueued(s, i+1)
	}
	before := s.commits.groups.Load()
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("the held write: %v", err)
	}
	wg.Wait()
	return errs, s.commits.groups.Load() - before
}

// waitQueued returns once n requests wait for the writer.
func waitQueued(s *Store, n int) {
	for {
		s.commits.mu.Lock()
		q := len(s.commits.queue)
		s.commits.mu.Unlock()
		if q >= n {
			return
		}
		runtime.Gosched()
	}
}

func firstAppend(id string) store.Append {
	return store.Append{ThreadID: id, Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "step", Data: []byte(id)}}}
}

// TestAppendsWaitingForTheWriterCommitTogetherInOrder queues appends while
// another group holds the writer: they are all committed, in one group after
// it, and each caller learns its own outcome (one of them a conflict).
func TestAppendsWaitingForTheWriterCommitTogetherInOrder(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	const n = 8
	writes := make([]func() error, n)
	for i := range n {
		a := firstAppend(fmt.Sprintf("t%d", i))
		if i == n-1 {
			a.ThreadID = "t0" // queued after t0's first append: a conflict
		}
		writes[i] = func() error { return s.Append(ctx, a) }
	}
	errs, groups := queueBehindHeldWriter(t, s, writes)
	for i, err := range errs[:n-1] {
		if err != nil {
			t.Errorf("append %d: %v", i, err)
		}
	}
	if !errors.Is(errs[n-1], interlude.ErrConflict) {
		t.Errorf("the second first append to t0: err = %v, want a conflict", errs[n-1])
	}
	if groups != 1 {
		t.Errorf("the queued appends were committed in %d groups, want 1", groups)
	}
	l, err := s.Load(ctx, "t0")
	if err != nil || len(l.Records) != 1 || string(l.Records[0].Data) != "t0" {
		t.Errorf("t0 holds %+v (%v), want the first append's record", l, err)
	}
	// The writer is free again: an append commits by itself.
	if err := s.Append(ctx, firstAppend("after")); err != nil {
		t.Fatal(err)
	}
}

// TestAnAppendWhoseCallerGivesUpWhileQueuedIsNotApplied cancels an append's
// context while it waits for the writer: it fails with the context's error and
// leaves nothing behind, and the appends queued with it are committed.
func TestAnAppendWhoseCallerGivesUpWhileQueuedIsNotApplied(t *testing.T) {
	s := openTemp(t)
	release, held := holdWriter(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp, kept := make(chan error, 1), make(chan error, 1)
	go func() { gaveUp <- s.Append(ctx, firstAppend("gave-up")) }()
	waitQueued(s, 1)
	go func() { kept <- s.Append(context.Background(), firstAppend("kept")) }()
	waitQueued(s, 2)
	cancel()
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("the held write: %v", err)
	}
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Errorf("the abandoned append: err = %v, want context.Canceled", err)
	}
	if err := <-kept; err != nil {
		t.Errorf("the append queued behind it: %v", err)
	}
	for id, want := range map[string]int64{"gave-up": 0, "kept": 1} {
		if v, err := s.Version(context.Background(), id); err != nil || v != want {
			t.Errorf("%s is at version %d (%v), want %d", id, v, err, want)
		}
	}
}

// TestClosingTheStoreLetsTheGroupFinishAndRefusesTheQueue closes the store
// while a group holds the writer: the group commits, the appends waiting
// behind it are refused, and later appends too.
func TestClosingTheStoreLetsTheGroupFinishAndRefusesTheQueue(t *testing.T) {
	s := openTemp(t)
	release, held := holdWriter(t, s)
	queued := make(chan error, 1)
	go func() { queued <- s.Append(context.Background(), firstAppend("queued")) }()
	waitQueued(s, 1)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for {
		s.commits.mu.Lock()
		c := s.commits.closed
		s.commits.mu.Unlock()
		if c {
			break
		}
		runtime.Gosched()
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a group held the writer", err)
	default:
	}
	close(release)
	if err := <-held; err != nil {
		t.Errorf("the group being committed at Close: %v", err)
	}
	if err := <-queued; !errors.Is(err, errClosed) {
		t.Errorf("the append queued at Close: err = %v, want the store closed", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Append(context.Background(), firstAppend("later")); !errors.Is(err, errClosed) {
		t.Errorf("an append after Close: err = %v, want the store closed", err)
	}
}

// TestEveryWriteSharesTheWritersOneConnection queues, behind a group holding
// the writer, appends mixed with the store's other writes (a deletion, a copy,
// a notice's retry, a checkpoint of the log, which runs outside any
// transaction): each runs once the writer is free, in order, the checkpoint
// alone between two groups, and the appends queued before and after it
// commit in one group each.
func TestEveryWriteSharesTheWritersOneConnection(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	for _, id := range []string{"doomed", "original"} {
		if err := s.Append(ctx, firstAppend(id)); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		fn   func() error
	}{
		{"append a", func() error { return s.Append(ctx, firstAppend("a")) }},
		{"delete", func() error { return s.Delete(ctx, "doomed") }},
		{"copy", func() error { return s.CopyThread(ctx, "original", "copy") }},
		{"retry", func() error {
			if err := s.RetryNotice(ctx, "evt_unknown", time.Now()); !errors.Is(err, interlude.ErrNotFound) {
				return fmt.Errorf("retry of an unknown notice: %v, want not found", err)
			}
			return nil
		}},
		{"checkpoint", s.Checkpoint},
		{"append b", func() error { return s.Append(ctx, firstAppend("b")) }},
	}
	writes := make([]func() error, len(steps))
	for i, st := range steps {
		writes[i] = st.fn
	}
	outcomes, groups := queueBehindHeldWriter(t, s, writes)
	for i, st := range steps {
		if outcomes[i] != nil {
			t.Errorf("%s: %v", st.name, outcomes[i])
		}
	}
	if groups != 2 {
		t.Errorf("the queued writes were committed in %d groups, want 2 (before and after the checkpoint)", groups)
	}
	for id, want := range map[string]int64{"a": 1, "b": 1, "doomed": 0, "original": 1, "copy": 1} {
		if v, err := s.Version(ctx, id); err != nil || v != want {
			t.Errorf("%s is at version %d (%v), want %d", id, v, err, want)
		}
	}
}
