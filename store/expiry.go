package store

import (
	"context"
	"time"
)

// ExpiryIndex is implemented by stores that index when threads' pending questions
// expire (interlude.Request.TTL), so that a server can close each one as expired
// when its time comes, without scanning every waiting thread. The stores of this
// module implement it.
type ExpiryIndex interface {
	// Expired returns up to limit threads (0 meaning 100) with a pending question
	// whose ExpiresAt is at or before now, the earliest expiry first; with graphs,
	// only threads of those graphs, so that threads another program runs take no
	// room in the listing. A thread leaves the listing when an append replaces its
	// pending questions with ones that expire later, or with none.
	Expired(ctx context.Context, now time.Time, graphs []string, limit int) ([]Meta, error)
}

// EarliestExpiry returns the earliest ExpiresAt among m's pending questions, or
// nil if none expires. Stores index it on every append.
func EarliestExpiry(m Meta) *time.Time {
	var first *time.Time
	for _, q := range m.Interrupts {
		if q.ExpiresAt != nil && (first == nil || q.ExpiresAt.Before(*first)) {
			t := *q.ExpiresAt
			first = &t
		}
	}
	return first
}

// ExpiredLimit returns the number of threads Expired lists when asked for limit:
// 0 (or less) means 100.
func ExpiredLimit(limit int) int {
	if limit <= 0 {
		return 100
	}
	return limit
}

// ExpiryNanos returns EarliestExpiry(m) as Unix nanoseconds (UnixNano), or nil
// when none of m's questions expires: the value the SQL stores index.
func ExpiryNanos(m Meta) *int64 {
	at := EarliestExpiry(m)
	if at == nil {
		return nil
	}
	n := UnixNano(*at)
	return &n
}
