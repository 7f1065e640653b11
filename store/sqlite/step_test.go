package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
	"github.com/interludehq/interlude/store/storetest"
)

// threadRow is a threads row as stored.
type threadRow struct {
	graph, status                 string
	version                       int64
	interrupts                    []byte
	expires                       sql.NullInt64
	created, updated              int64
	inboxRows, graphRows, recents int // entries of the listing indexes naming the thread
}

func readThreadRow(t *testing.T, s *Store, id string) threadRow {
	t.Helper()
	var r threadRow
	err := s.r.QueryRow(`SELECT graph, status, version, interrupts, expires_at, created_at, updated_at FROM threads WHERE id = ?`, id).
		Scan(&r.graph, &r.status, &r.version, &r.interrupts, &r.expires, &r.created, &r.updated)
	if err != nil {
		t.Fatalf("read thread %s: %v", id, err)
	}
	// Each listing, read through its index, finds the row with its stored facts.
	for _, c := range []struct {
		n     *int
		query string
		args  []any
	}{
		{&r.inboxRows, `SELECT count(*) FROM threads INDEXED BY threads_inbox WHERE status = ? AND updated_at = ? AND id = ?`, []any{r.status, r.updated, id}},
		{&r.graphRows, `SELECT count(*) FROM threads INDEXED BY threads_graph_inbox WHERE graph = ? AND status = ? AND updated_at = ? AND id = ?`, []any{r.graph, r.status, r.updated, id}},
		{&r.recents, `SELECT count(*) FROM threads INDEXED BY threads_recent WHERE updated_at = ? AND id = ?`, []any{r.updated, id}},
	} {
		if err := s.r.QueryRow(c.query, c.args...).Scan(c.n); err != nil {
			t.Fatalf("read the listing indexes of %s: %v", id, err)
		}
	}
	return r
}

// TestAStepWithinARunLeavesTheListingFactsAndUpdatedAt appends the same
// changes to two stores, once with the steps marked NoSync and once all
// durable (every column set). The stored rows agree but for updated_at, which
// a NoSync append moves only when it changes the thread's graph, status or
// earliest expiry; every listing index agrees with its row.
func TestAStepWithinARunLeavesTheListingFactsAndUpdatedAt(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }
	steps := storetest.StepCases()
	lazy, full := openTemp(t), openTemp(t)
	var updated int64
	for i, st := range steps {
		for _, s := range []*Store{lazy, full} {
			a := st.Append("t", i, at(i))
			a.NoSync = a.NoSync && s == lazy
			if err := s.Append(ctx, a); err != nil {
				t.Fatalf("%s: %v", st.Name, err)
			}
		}
		if st.Moves {
			updated = at(i).UnixNano()
		}
		got, want := readThreadRow(t, lazy, "t"), readThreadRow(t, full, "t")
		if got.updated != updated {
			t.Errorf("after %s updated_at is %v, want %v", st.Name, storekit.FromUnixNano(got.updated), storekit.FromUnixNano(updated))
		}
		want.updated, want.created = got.updated, got.created
		want.inboxRows, want.graphRows, want.recents = 1, 1, 1
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("after %s the row is\n%+v, want\n%+v", st.Name, got, want)
		}
	}
	// A stale NoSync step is refused and changes nothing.
	before := readThreadRow(t, lazy, "t")
	err := lazy.Append(ctx, store.Append{ThreadID: "t", Expect: 3, NoSync: true,
		Meta:    store.Meta{Graph: "g2", Status: interlude.ThreadIdle, UpdatedAt: at(99)},
		Records: []store.Record{{Version: 4, Format: 1, Kind: "step", Data: []byte("stale")}}})
	if !errors.Is(err, interlude.ErrConflict) {
		t.Errorf("a stale NoSync step: err = %v, want a conflict", err)
	}
	if after := readThreadRow(t, lazy, "t"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused step changed the row from\n%+v to\n%+v", before, after)
	}
	// A row another process changed since is not taken for the one the
	// writer last wrote: the step sets every column.
	if err := writerExec(lazy, `UPDATE threads SET status = 'failed' WHERE id = 't'`); err != nil {
		t.Fatal(err)
	}
	v := int64(len(steps))
	if err := lazy.Append(ctx, store.Append{ThreadID: "t", Expect: v, NoSync: true,
		Meta:    store.Meta{Graph: "g2", Status: interlude.ThreadIdle, UpdatedAt: at(50)},
		Records: []store.Record{{Version: v + 1, Format: 1, Kind: "step", Data: []byte("after")}}}); err != nil {
		t.Fatal(err)
	}
	if r := readThreadRow(t, lazy, "t"); r.status != "idle" || r.version != v+1 || r.updated != at(50).UnixNano() || r.inboxRows != 1 || r.graphRows != 1 || r.recents != 1 {
		t.Errorf("after a step over a row changed elsewhere the row is %+v, want idle at version %d updated at %v", r, v+1, at(50))
	}
	var check string
	if err := writerQueryRow(lazy, `PRAGMA integrity_check`, nil, &check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q (%v)", check, err)
	}
}
