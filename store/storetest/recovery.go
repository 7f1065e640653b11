package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// recoveryCases are the subtests of stores that implement store.RecoveryIndex;
// Run skips them for the others.
func (h *harness) recoveryCases() []struct {
	name string
	fn   func(*testing.T)
} {
	return []struct {
		name string
		fn   func(*testing.T)
	}{
		{"UnfinishedListsOnlyRunningThreadsOldestFirst", h.unfinishedRunning},
		{"UnfinishedLeavesWhenTheStepCommits", h.unfinishedLeaves},
		{"UnfinishedLimitHonouredZeroMeaning100", h.unfinishedLimit},
		{"UnfinishedListsOnlyTheGivenGraphs", h.unfinishedGraphs},
		{"UnfinishedForgetsDeletedThreads", h.unfinishedDeleted},
	}
}

// openRecovery opens a store and returns it with its recovery index, skipping
// the test if the store has none.
func (h *harness) openRecovery(t *testing.T) (store.Store, store.RecoveryIndex) {
	t.Helper()
	s := h.open(t)
	x, ok := s.(store.RecoveryIndex)
	if !ok {
		t.Skipf("%T does not implement store.RecoveryIndex", s)
	}
	return s, x
}

// running returns the meta of a thread whose answers were committed at base+at.
func running(graph string, at time.Duration) store.Meta {
	return store.Meta{Graph: graph, Status: interlude.ThreadRunning, UpdatedAt: base.Add(at)}
}

func checkUnfinished(t *testing.T, x store.RecoveryIndex, graphs []string, limit int, want ...string) {
	t.Helper()
	ms, err := x.Unfinished(context.Background(), graphs, limit)
	if err != nil {
		t.Fatalf("Unfinished(%v, %d): %v", graphs, limit, err)
	}
	got := []string{}
	for _, m := range ms {
		got = append(got, m.ThreadID)
		if m.Status != interlude.ThreadRunning || m.Version == 0 || m.Graph == "" || m.UpdatedAt.IsZero() || m.CreatedAt.IsZero() {
			t.Errorf("Unfinished lists %s with incomplete facts: %+v", m.ThreadID, m)
		}
	}
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Unfinished(%v, %d) = %v, want %v", graphs, limit, got, want)
	}
}

func (h *harness) unfinishedRunning(t *testing.T) {
	s, x := h.openRecovery(t)
	checkUnfinished(t, x, nil, 0)
	step(t, s, "late", 0, 1, false, running("g", 3*time.Second))
	step(t, s, "early", 0, 1, false, running("g", time.Second))
	step(t, s, "tie-b", 0, 1, false, running("g", 2*time.Second))
	step(t, s, "tie-a", 0, 1, false, running("g", 2*time.Second))
	for i, st := range []interlude.ThreadStatus{interlude.ThreadIdle, interlude.ThreadInterrupted, interlude.ThreadFailed} {
		step(t, s, string(st), 0, 1, false, store.Meta{Graph: "g", Status: st, UpdatedAt: base.Add(time.Duration(i) * time.Millisecond)})
	}
	checkUnfinished(t, x, nil, 0, "early", "tie-a", "tie-b", "late")
}

func (h *harness) unfinishedLeaves(t *testing.T) {
	s, x := h.openRecovery(t)
	step(t, s, "t", 0, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadInterrupted, Interrupts: expiring("q"), UpdatedAt: base})
	checkUnfinished(t, x, nil, 0)
	step(t, s, "t", 1, 1, false, running("g", time.Second)) // the answers
	checkUnfinished(t, x, nil, 0, "t")
	step(t, s, "t", 2, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle, UpdatedAt: base.Add(2 * time.Second)}) // the step
	checkUnfinished(t, x, nil, 0)
}

func (h *harness) unfinishedLimit(t *testing.T) {
	s, x := h.openRecovery(t)
	var want []string
	for i := range 103 {
		id := fmt.Sprintf("t%03d", i)
		step(t, s, id, 0, 1, false, running("g", time.Duration(i)*time.Second))
		want = append(want, id)
	}
	checkUnfinished(t, x, nil, 2, want[:2]...)
	checkUnfinished(t, x, nil, 0, want[:100]...)
}

func (h *harness) unfinishedGraphs(t *testing.T) {
	s, x := h.openRecovery(t)
	for i := range 3 {
		step(t, s, fmt.Sprintf("other-%d", i), 0, 1, false, running("elsewhere", time.Duration(i)*time.Second))
	}
	step(t, s, "mine", 0, 1, false, running("mine", time.Minute))
	step(t, s, "g", 0, 1, false, running("g", time.Hour))
	checkUnfinished(t, x, []string{"mine"}, 3, "mine")
	checkUnfinished(t, x, []string{"g", "mine"}, 3, "mine", "g")
	checkUnfinished(t, x, []string{"nowhere"}, 3)
}

func (h *harness) unfinishedDeleted(t *testing.T) {
	s, x := h.openRecovery(t)
	step(t, s, "gone", 0, 1, false, running("g", 0))
	step(t, s, "kept", 0, 1, false, running("g", time.Second))
	if err := s.Delete(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	checkUnfinished(t, x, nil, 0, "kept")
}
