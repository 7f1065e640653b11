package storekit

import (
	"time"

	"github.com/interludehq/interlude/store"
)

// EarliestExpiry returns the earliest ExpiresAt among m's pending questions, or
// nil if none expires. Stores index it on every append.
func EarliestExpiry(m store.Meta) *time.Time {
	var first *time.Time
	for _, q := range m.Interrupts {
		if q.ExpiresAt != nil && (first == nil || q.ExpiresAt.Before(*first)) {
			t := *q.ExpiresAt
			first = &t
		}
	}
	return first
}

// ExpiredLimit returns the number of threads [store.ExpiryIndex.Expired] lists when asked for limit:
// 0 (or less) means 100.
func ExpiredLimit(limit int) int {
	if limit <= 0 {
		return 100
	}
	return limit
}

// ExpiryNanos returns EarliestExpiry(m) as Unix nanoseconds (UnixNano), or nil
// when none of m's questions expires: the value the SQL stores index.
func ExpiryNanos(m store.Meta) *int64 {
	at := EarliestExpiry(m)
	if at == nil {
		return nil
	}
	n := UnixNano(*at)
	return &n
}

// UnfinishedLimit returns the number of threads [store.RecoveryIndex.Unfinished] lists when asked for
// limit: 0 (or less) means 100.
func UnfinishedLimit(limit int) int { return ExpiredLimit(limit) }
