package storekit

import (
	"math"
	"time"
)

var (
	maxNanos = time.Unix(0, math.MaxInt64)
	minNanos = time.Unix(0, math.MinInt64)
)

// UnixNano returns t as Unix nanoseconds, the way the SQL stores keep times,
// clamped to the range of int64. time.Time.UnixNano wraps around past 2262, so
// an expiry centuries away (a TTL of math.MaxInt64) would index as long past;
// clamped, it stays after every time before it.
func UnixNano(t time.Time) int64 {
	switch {
	case t.After(maxNanos):
		return math.MaxInt64
	case t.Before(minNanos):
		return math.MinInt64
	}
	return t.UnixNano()
}

// FromUnixNano is the time that UnixNano made n from, in UTC.
func FromUnixNano(n int64) time.Time { return time.Unix(0, n).UTC() }
