package sqlite

import (
	"context"
	"errors"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// TestADurableAppendCommitsUnderTheChosenModeAndANoSyncOneWithoutTheFsync
// checks the writer's synchronous mode at each commit: the mode WithSynchronous
// chose (FULL, one fsync of the log) for a durable append and a delete, NORMAL
// (no fsync) for an append marked NoSync, whatever the order they come in.
func TestADurableAppendCommitsUnderTheChosenModeAndANoSyncOneWithoutTheFsync(t *testing.T) {
	const normal, full, extra = 1, 2, 3
	for _, c := range []struct {
		name    string
		opts    []Option
		durable int
	}{
		{"default", nil, full},
		{"EXTRA", []Option{WithSynchronous("EXTRA")}, extra},
		{"NORMAL", []Option{WithSynchronous("NORMAL")}, normal},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openTemp(t, c.opts...)
			ctx := context.Background()
			mode := func() int { return writerMode(t, s) }
			meta := store.Meta{Graph: "g", Status: interlude.ThreadRunning}
			for v, noSync := range []bool{true, true, false, true, false, false, true} {
				a := store.Append{ThreadID: "t", Expect: int64(v), Meta: meta, NoSync: noSync,
					Records: []store.Record{{Version: int64(v) + 1, Format: 1, Kind: "step", Data: []byte("x")}}}
				if err := s.Append(ctx, a); err != nil {
					t.Fatal(err)
				}
				want := c.durable
				if noSync {
					want = normal
				}
				if got := mode(); got != want {
					t.Errorf("append %d (NoSync %v) committed under synchronous=%d, want %d", v+1, noSync, got, want)
				}
			}
			if err := s.Delete(ctx, "t"); err != nil {
				t.Fatal(err)
			}
			if got := mode(); got != c.durable {
				t.Errorf("the delete committed under synchronous=%d, want %d", got, c.durable)
			}
		})
	}
}

// TestADocumentWriteCommitsUnderTheChosenMode checks that a document's put and
// delete wait for the disk as a durable append does (store.Documents: a write
// is durable when it returns), even right after an append marked NoSync left
// the writer without the fsync.
func TestADocumentWriteCommitsUnderTheChosenMode(t *testing.T) {
	const normal, full = 1, 2
	s := openTemp(t)
	ctx := context.Background()
	mode := func() int { return writerMode(t, s) }
	meta := store.Meta{Graph: "g", Status: interlude.ThreadRunning}
	noSync := func(v int64) {
		t.Helper()
		a := store.Append{ThreadID: "t", Expect: v, Meta: meta, NoSync: true,
			Records: []store.Record{{Version: v + 1, Format: 1, Kind: "step", Data: []byte("x")}}}
		if err := s.Append(ctx, a); err != nil {
			t.Fatal(err)
		}
		if got := mode(); got != normal {
			t.Fatalf("the NoSync append committed under synchronous=%d, want %d", got, normal)
		}
	}
	noSync(0)
	if err := s.PutDocument(ctx, store.Document{ThreadID: "t", Kind: "k", Data: []byte("d")}); err != nil {
		t.Fatal(err)
	}
	if got := mode(); got != full {
		t.Errorf("the document's put committed under synchronous=%d, want %d", got, full)
	}
	noSync(1)
	if err := s.DeleteDocument(ctx, "t", "k", ""); err != nil {
		t.Fatal(err)
	}
	if got := mode(); got != full {
		t.Errorf("the document's delete committed under synchronous=%d, want %d", got, full)
	}
}

// TestAnAppendFailingAfterItsCompareAndSetIsUndoneAloneInItsGroup commits
// one group of appends: two that succeed, one whose compare-and-set fails, and
// one that fails after it (a record a trigger refuses). The failed ones leave
// nothing behind and the others are committed.
func TestAnAppendFailingAfterItsCompareAndSetIsUndoneAloneInItsGroup(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if _, err := s.w.ExecContext(ctx, `CREATE TRIGGER poison BEFORE INSERT ON records WHEN NEW.kind = 'poison'
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

// writerMode returns the writer's synchronous mode, that of its last commit.
func writerMode(t *testing.T, s *Store) int {
	t.Helper()
	conn, err := s.w.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var m int
	if err := conn.QueryRowContext(context.Background(), "PRAGMA synchronous").Scan(&m); err != nil {
		t.Fatal(err)
	}
	return m
}
