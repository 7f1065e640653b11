package langgraph

import (
	"regexp"
	"testing"
	"time"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewIDsAreVersion7UUIDsThatSortByTime(t *testing.T) {
	at := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)
	prev := ""
	for i := range 100 {
		id := uuidAt(at.Add(time.Duration(i) * time.Millisecond))
		if !uuidV7.MatchString(id) {
			t.Fatalf("id %q is not a version 7 uuid", id)
		}
		if id <= prev {
			t.Fatalf("id %q, made a millisecond after %q, does not sort after it", id, prev)
		}
		prev = id
	}
	if a, b := uuidAt(at), uuidAt(at); a == b {
		t.Fatalf("two ids of the same millisecond are both %q", a)
	}
	if id := newUUID(); !uuidV7.MatchString(id) {
		t.Fatalf("newUUID made %q, not a version 7 uuid", id)
	}
}
