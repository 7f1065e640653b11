package store

import (
	"context"
	"time"
)

// Leaser is implemented by stores that several processes share (such as Postgres).
// A run holds its thread's lease, so no two processes run the same thread at once;
// a lease whose holder died expires after its time to live, and any process may
// then take the thread over from its last committed record.
type Leaser interface {
	// Lease takes the thread's lease for owner for ttl. If another owner holds an
	// unexpired lease, it fails with an error matching interlude.ErrThreadBusy.
	Lease(ctx context.Context, threadID, owner string, ttl time.Duration) (Lease, error)
}

// Lease is a held thread lease.
type Lease interface {
	// Thread returns the graph and version of the thread as they were when the
	// lease was taken ("" and 0 for a thread not written yet). While the lease is
	// held no other process appends to the thread, so a run may trust them
	// instead of reading them again.
	Thread() (graph string, version int64)
	// Renew extends the lease by its time to live from now. It fails if the lease was
	// lost (it expired and another owner took it).
	Renew(ctx context.Context) error
	// Release gives the lease up.
	Release(ctx context.Context) error
}
