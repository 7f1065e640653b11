package host

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

func TestNewIDsSortByTheTimeTheyWereMade(t *testing.T) {
	at := time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 100 {
		ids = append(ids, newIDAt("thr_", at.Add(time.Duration(i)*time.Millisecond)))
	}
	if !slices.IsSorted(ids) {
		t.Fatalf("ids made a millisecond apart do not sort in the order they were made: %v", ids)
	}
	form := regexp.MustCompile(`^thr_[0-9a-f]{24}$`)
	for _, id := range ids {
		if !form.MatchString(id) {
			t.Fatalf("id %q is not thr_ and 24 hex digits", id)
		}
	}
	if a, b := newIDAt("run_", at), newIDAt("run_", at); a == b {
		t.Fatalf("two ids made in the same millisecond are the same: %s", a)
	}
}
