package graph

import (
	"strconv"
	"testing"
)

// entry is a cached state of about n bytes (its estimate adds the overhead).
func entry(id string, n int) *cached[struct{}] {
	return &cached[struct{}]{id: id, st: &state[struct{}]{version: 1}, weight: weight{snapSize: n - cacheEntryOverhead}}
}

func TestTheStateCacheEvictsTheLeastRecentlyUsedStatesFirst(t *testing.T) {
	c := newCache[struct{}](8000, 0)
	for _, id := range []string{"a", "b", "c", "d"} {
		c.put(entry(id, 1000))
	}
	// a is used again (taken and put back), so b is now the oldest.
	a, ok := c.take("a")
	if !ok {
		t.Fatal("a is not cached")
	}
	c.put(a)
	for i := range 5 {
		c.put(entry("new"+strconv.Itoa(i), 1000)) // 9000 bytes in all: one must go
	}
	if v, _ := c.identity("b"); v != 0 {
		t.Error("b, the least recently used, was kept")
	}
	for _, id := range []string{"a", "c", "d", "new4"} {
		if v, _ := c.identity(id); v == 0 {
			t.Errorf("%s was evicted before the least recently used", id)
		}
	}
	if size, n := c.usage(); size > 8000 || n != 8 {
		t.Errorf("the cache holds %d states of %d bytes, want 8 within 8000", n, size)
	}
}

func TestTheStateCacheKeepsNoStateLargerThanAnEighthOfItsBudget(t *testing.T) {
	c := newCache[struct{}](8000, 0)
	c.put(entry("small", 1000))
	c.put(entry("big", 1001))
	if v, _ := c.identity("big"); v != 0 {
		t.Error("a state over an eighth of the budget was cached")
	}
	if v, _ := c.identity("small"); v == 0 {
		t.Error("the large state pushed a small one out")
	}
	// A thread that outgrew its share loses its older, smaller copy.
	c.put(entry("small", 5000))
	if v, _ := c.identity("small"); v != 0 {
		t.Error("the old copy of a state that outgrew the cache was kept")
	}
	if size, n := c.usage(); size != 0 || n != 0 {
		t.Errorf("the cache holds %d states of %d bytes, want none", n, size)
	}
}

func TestTheStateCacheStaysWithinItsBudgetAndEntryCap(t *testing.T) {
	for _, tc := range []struct {
		name            string
		budget          int64
		entries         int
		sizes           []int
		wantMax, wantIn int64
	}{
		{"bytes", 64 << 10, 0, []int{600, 8 << 10, 3000, 700, 5000}, 64 << 10, 8},
		{"entries", 1 << 30, 10, []int{600, 8 << 10, 3000}, 1 << 30, 10},
		{"off", 0, 0, []int{600}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache[struct{}](tc.budget, tc.entries)
			for i := range 1000 {
				c.put(entry(strconv.Itoa(i), tc.sizes[i%len(tc.sizes)]))
				size, n := c.usage()
				if size > tc.wantMax || (tc.entries > 0 && n > tc.entries) {
					t.Fatalf("after %d puts the cache holds %d states of %d bytes", i+1, n, size)
				}
			}
			if _, n := c.usage(); int64(n) < tc.wantIn {
				t.Errorf("the cache holds only %d states, want at least %d", n, tc.wantIn)
			}
			for i := range 1000 {
				c.drop(strconv.Itoa(i))
			}
			if size, n := c.usage(); size != 0 || n != 0 {
				t.Errorf("after dropping every thread the cache counts %d states of %d bytes", n, size)
			}
		})
	}
}
