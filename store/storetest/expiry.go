package storetest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// expiryCases are the subtests of stores that implement store.ExpiryIndex;
// Run skips them for the others.
func (h *harness) expiryCases() []struct {
	name string
	fn   func(*testing.T)
} {
	return []struct {
		name string
		fn   func(*testing.T)
	}{
		{"ExpiredListsQuestionsPastTheirTime", h.expiredPast},
		{"ExpiredIncludesQuestionsExpiringExactlyNow", h.expiredAtNow},
		{"ExpiredNeverListsQuestionsWithoutExpiry", h.expiredWithoutExpiry},
		{"ExpiredCenturiesAwayIsLate", h.expiredCenturiesAway},
		{"ExpiredLeavesWhenQuestionsAreAnswered", h.expiredAnswered},
		{"ExpiredEarliestFirst", h.expiredOrder},
		{"ExpiredLimitHonouredZeroMeaning100", h.expiredLimit},
		{"ExpiredMetaIsComplete", h.expiredMeta},
		{"ExpiredForgetsDeletedThreads", h.expiredDeleted},
		{"ExpiredListsOnlyTheGivenGraphs", h.expiredGraphs},
	}
}

// openExpiry opens a store and returns it with its expiry index, skipping the
// test if the store has none.
func (h *harness) openExpiry(t *testing.T) (store.Store, store.ExpiryIndex) {
	t.Helper()
	s := h.open(t)
	x, ok := s.(store.ExpiryIndex)
	if !ok {
		t.Skipf("%T does not implement store.ExpiryIndex", s)
	}
	return s, x
}

// expiring returns a question that expires at the given times (none for a
// question that never expires).
func expiring(id string, at ...time.Time) []interlude.Interruption {
	var qs []interlude.Interruption
	for i, a := range at {
		q := question(fmt.Sprintf("%s_%d", id, i))
		q.ExpiresAt = &a
		qs = append(qs, q)
	}
	return qs
}

// pending returns the meta of an interrupted thread asking qs.
func pending(qs []interlude.Interruption) store.Meta {
	return store.Meta{Graph: "g", Status: interlude.ThreadInterrupted, Interrupts: qs, UpdatedAt: base}
}

// expired calls Expired and returns the ids listed, in order.
func expired(t *testing.T, x store.ExpiryIndex, now time.Time, limit int) []string {
	t.Helper()
	ms, err := x.Expired(context.Background(), now, nil, limit)
	if err != nil {
		t.Fatalf("Expired(%v, %d): %v", now, limit, err)
	}
	ids := []string{}
	for _, m := range ms {
		ids = append(ids, m.ThreadID)
	}
	return ids
}

func checkExpired(t *testing.T, x store.ExpiryIndex, now time.Time, limit int, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := expired(t, x, now, limit); !slices.Equal(got, want) {
		t.Errorf("Expired(base%+v, %d) = %v, want %v", now.Sub(base), limit, got, want)
	}
}

func (h *harness) expiredPast(t *testing.T) {
	s, x := h.openExpiry(t)
	step(t, s, "past", 0, 1, false, pending(expiring("q", base.Add(-time.Minute))))
	step(t, s, "later", 0, 1, false, pending(expiring("q", base.Add(time.Hour))))
	checkExpired(t, x, base, 0, "past")
	checkExpired(t, x, base.Add(-time.Hour), 0)
	// Once now passes the later question, it lists too, after the earlier one.
	checkExpired(t, x, base.Add(2*time.Hour), 0, "past", "later")
}

// expiredGraphs checks that threads of other graphs take no room in a listing
// for some graphs, even when they are due first and fill the limit.
func (h *harness) expiredGraphs(t *testing.T) {
	s, x := h.openExpiry(t)
	for i := range 3 {
		m := pending(expiring("q", base.Add(-time.Hour+time.Duration(i)*time.Second)))
		m.Graph = "elsewhere"
		step(t, s, fmt.Sprintf("other-%d", i), 0, 1, false, m)
	}
	mine := pending(expiring("q", base.Add(-time.Minute)))
	mine.Graph = "mine"
	step(t, s, "mine", 0, 1, false, mine)
	step(t, s, "g", 0, 1, false, pending(expiring("q", base)))
	for _, c := range []struct {
		graphs []string
		want   []string
	}{
		{[]string{"mine"}, []string{"mine"}},
		{[]string{"mine", "g"}, []string{"mine", "g"}},
		{[]string{"nowhere"}, []string{}},
		{nil, []string{"other-0", "other-1"}},
	} {
		ms, err := x.Expired(context.Background(), base, c.graphs, 2)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, m := range ms {
			ids = append(ids, m.ThreadID)
		}
		if !slices.Equal(ids, c.want) {
			t.Errorf("Expired(base, %q, 2) = %v, want %v", c.graphs, ids, c.want)
		}
	}
}

func (h *harness) expiredAtNow(t *testing.T) {
	s, x := h.openExpiry(t)
	step(t, s, "edge", 0, 1, false, pending(expiring("q", base)))
	checkExpired(t, x, base.Add(-time.Nanosecond), 0)
	checkExpired(t, x, base, 0, "edge")
	// The same instant given in another time zone is the same instant.
	checkExpired(t, x, base.In(time.FixedZone("UTC+5", 5*3600)), 0, "edge")
}

func (h *harness) expiredWithoutExpiry(t *testing.T) {
	s, x := h.openExpiry(t)
	q := question("forever")
	q.ExpiresAt = nil
	step(t, s, "forever", 0, 1, false, pending([]interlude.Interruption{q}))
	step(t, s, "idle", 0, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle})
	// A question without expiry beside one with: the thread lists by the other.
	step(t, s, "mixed", 0, 1, false, pending(append([]interlude.Interruption{q}, expiring("m", base)...)))
	far := time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)
	checkExpired(t, x, far, 0, "mixed")
}

// expiredCenturiesAway checks times past what int64 nanoseconds hold (2262),
// such as a TTL of math.MaxInt64 gives: they expire after every earlier time.
func (h *harness) expiredCenturiesAway(t *testing.T) {
	s, x := h.openExpiry(t)
	step(t, s, "centuries", 0, 1, false, pending(expiring("q", base.Add(math.MaxInt64))))
	step(t, s, "soon", 0, 1, false, pending(expiring("q", base)))
	checkExpired(t, x, base, 0, "soon")
	checkExpired(t, x, time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC), 0, "soon")
	checkExpired(t, x, time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC), 0, "soon", "centuries")
}

func (h *harness) expiredAnswered(t *testing.T) {
	s, x := h.openExpiry(t)
	for i, id := range []string{"answered", "asked-again", "still"} {
		step(t, s, id, 0, 1, false, pending(expiring("q", base.Add(time.Duration(i-2)*time.Second))))
	}
	checkExpired(t, x, base, 0, "answered", "asked-again", "still")
	// Answered: the next append has no pending question.
	step(t, s, "answered", 1, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle})
	// Asked again: the next append's question expires later.
	step(t, s, "asked-again", 1, 1, false, pending(expiring("q2", base.Add(time.Hour))))
	// An append keeping the expired question keeps the thread listed.
	step(t, s, "still", 1, 1, false, pending(expiring("q", base)))
	checkExpired(t, x, base.Add(-time.Second), 0)
	checkExpired(t, x, base.Add(time.Minute), 0, "still")
	checkExpired(t, x, base.Add(time.Hour), 0, "still", "asked-again")
}

func (h *harness) expiredOrder(t *testing.T) {
	s, x := h.openExpiry(t)
	zone := time.FixedZone("UTC-7", -7*3600)
	for _, c := range []struct {
		id string
		at []time.Time
	}{
		{"c", []time.Time{base.Add(-time.Second)}},
		{"a", []time.Time{base.Add(-time.Minute)}},
		// The earliest of a thread's questions counts, wherever it is listed.
		{"b", []time.Time{base.Add(time.Hour), base.Add(-time.Hour)}},
		{"z", []time.Time{base.Add(-time.Millisecond).In(zone)}},
		{"d", []time.Time{base.Add(-time.Nanosecond)}},
		{"e", []time.Time{base.Add(time.Nanosecond)}},
	} {
		step(t, s, c.id, 0, 1, false, pending(expiring("q", c.at...)))
	}
	checkExpired(t, x, base, 0, "b", "a", "c", "z", "d")
	checkExpired(t, x, base, 2, "b", "a")
}

func (h *harness) expiredLimit(t *testing.T) {
	s, x := h.openExpiry(t)
	var threads []listThread
	for i := range 105 {
		threads = append(threads, listThread{fmt.Sprintf("x%03d", i), "g", interlude.ThreadInterrupted, base.Add(time.Duration(i) * time.Second)})
	}
	seedList(t, s, threads)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) // when question() expires
	for _, c := range []struct{ limit, want int }{{0, 100}, {-1, 100}, {1, 1}, {7, 7}, {100, 100}, {105, 105}, {500, 105}} {
		if got := expired(t, x, now, c.limit); len(got) != c.want {
			t.Errorf("Expired(limit %d) listed %d threads, want %d", c.limit, len(got), c.want)
		}
	}
}

func (h *harness) expiredMeta(t *testing.T) {
	s, x := h.openExpiry(t)
	created := base.Add(-time.Hour)
	qs := append(expiring("q", base.Add(-time.Minute)), question("other"))
	meta := store.Meta{Graph: "refund", Status: interlude.ThreadInterrupted, Interrupts: qs, UpdatedAt: base.Add(-time.Second), CreatedAt: created}
	step(t, s, "full", 0, 2, true, meta)
	step(t, s, "full", 2, 1, false, meta)
	ms, err := x.Expired(context.Background(), base, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 {
		t.Fatalf("Expired listed %d threads, want 1", len(ms))
	}
	want := meta
	want.ThreadID, want.Version = "full", 3
	checkMeta(t, "Expired", ms[0], want)
	m, err := s.Meta(context.Background(), "full")
	if err != nil {
		t.Fatal(err)
	}
	checkMeta(t, "Expired, as Meta says", ms[0], *m)
}

func (h *harness) expiredDeleted(t *testing.T) {
	s, x := h.openExpiry(t)
	step(t, s, "gone", 0, 1, false, pending(expiring("q", base.Add(-time.Minute))))
	step(t, s, "kept", 0, 1, false, pending(expiring("q", base)))
	if err := s.Delete(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	checkExpired(t, x, base, 0, "kept")
	// The id used again starts without the old thread's expiry.
	step(t, s, "gone", 0, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle})
	checkExpired(t, x, base, 0, "kept")
}
