package storekit

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/store"
)

// CheckNotices validates the notices of an append (store.Append.Outbox): each
// needs an id, a known type and the append's thread.
func CheckNotices(a store.Append) error {
	for i, n := range a.Outbox {
		switch {
		case n.ID == "":
			return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("notice %d has no id", i)}
		case !slices.Contains(store.NoticeTypes, n.Type):
			return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("notice %s has unknown type %q; known: %v", n.ID, n.Type, store.NoticeTypes)}
		case n.ThreadID != "" && n.ThreadID != a.ThreadID:
			return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("notice %s names thread %q in an append to %q", n.ID, n.ThreadID, a.ThreadID)}
		}
	}
	return nil
}

// NoticeLimit returns a claim's limit with its default (100) and cap (1000).
func NoticeLimit(n int) int {
	switch {
	case n <= 0:
		return 100
	case n > 1000:
		return 1000
	}
	return n
}

// NoticePageLimit returns a delivery-log page's limit with its default (50)
// and cap (1000).
func NoticePageLimit(n int) int {
	if n <= 0 {
		return 50
	}
	return min(n, 1000)
}

// CheckSettle validates an attempt's outcome.
func CheckSettle(s store.NoticeSettle) error {
	switch s.State {
	case store.NoticePending, store.NoticeDelivered, store.NoticeDead:
		return nil
	}
	return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("notice %s cannot be settled as %q; use pending, delivered or failed", s.ID, s.State)}
}

// NoticeNotFound is the error for an unknown notice id.
func NoticeNotFound(id string) error {
	return &interlude.Error{Code: interlude.CodeNotFound, Message: fmt.Sprintf("no notification has id %q; list them with GET /v1/notifications", id)}
}

// ClaimLost is the error for settling a notice whose claim another owner took.
func ClaimLost(id, owner string) error {
	return &interlude.Error{Code: interlude.CodeConflict, Message: fmt.Sprintf("notification %s is no longer claimed by %s: its claim expired and another dispatcher took it", id, owner)}
}

// NotFailed is the error for retrying a notice that has not failed.
func NotFailed(id string, state store.NoticeState) error {
	return &interlude.Error{Code: interlude.CodeConflict, Message: fmt.Sprintf("notification %s is %s, not failed; only a failed notification can be retried", id, state)}
}

// DeliveredTo is a notice's list of the destinations that took it
// (store.NoticeSettle.DeliveredTo) as a JSON array, as json.Marshal writes it
// ("[]" for none).
func DeliveredTo(names []string) string {
	if len(names) == 0 {
		return "[]"
	}
	var buf [128]byte
	return string(jsonappend.Strings(buf[:0], names))
}

// CompareDue orders notices as a claim hands them out: by when they fall due,
// then in the order they were written.
func CompareDue(a, b store.Notice) int {
	if c := a.NextAt.Compare(b.NextAt); c != 0 {
		return c
	}
	return cmp.Compare(a.Seq, b.Seq)
}
