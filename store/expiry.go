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
