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
	// Lease takes the thread's lease as the request says. If another owner holds
	// an unexpired lease, it fails with an error matching interlude.ErrThreadBusy.
	Lease(ctx context.Context, req LeaseRequest) (Lease, error)
}

// LeaseRequest asks for a thread's lease.
type LeaseRequest struct {
	// ThreadID is the thread to lease.
	ThreadID string
	// Owner names the taker, in the error another taker gets while it holds
	// the lease.
	Owner string
	// TTL is how long the lease lasts unless renewed.
	TTL time.Duration
	// Load asks for the thread as Load returns it (Lease.Loaded), read in the
	// same round trip, unless the thread is at version Cached: a run whose
	// cached copy is stale, or that has none, then needs no second trip.
	Load bool
	// Cached is the version of the taker's copy of the thread (0 for none).
	Cached int64
	// CachedCreatedAt is the creation time of the taker's copy (Meta.CreatedAt),
	// zero if unknown. A thread deleted and created again starts over at version
	// 1, so the version alone cannot tell the copy of the old thread from the
	// new one: the thread is loaded unless both match.
	CachedCreatedAt time.Time
}

// Lease is a held thread lease.
type Lease interface {
	// Thread returns the graph and version of the thread as they were when the
	// lease was taken ("" and 0 for a thread not written yet). While the lease is
	// held no other process appends to the thread, so a run may trust them
	// instead of reading them again.
	Thread() (graph string, version int64)
	// Loaded returns the thread as read with the lease, if the request asked
	// for it and the thread exists at another version than the cached one;
	// otherwise nil.
	Loaded() *Loaded
	// Renew extends the lease by its time to live from now. It fails if the lease was
	// lost (it expired and another owner took it).
	Renew(ctx context.Context) error
	// Release gives the lease up.
	Release(ctx context.Context) error
}

// LeaseWatcher is implemented by stores that several processes share (such as
// Postgres): it finds the threads whose run died with its process, so that one
// process can tell the threads' listeners.
type LeaseWatcher interface {
	// ExpiredLeases returns the threads whose lease expired without being
	// released since they were last returned, and marks them returned: across
	// all the processes sharing the store, each expiry is returned once. A lease
	// taken or renewed afterwards may expire, and be returned, again.
	ExpiredLeases(ctx context.Context) ([]ExpiredLease, error)
}

// ExpiredLease is a thread whose run's lease expired. It reads as failed until
// a run takes it over, unless its last record ended a run (interrupted or
// failed) or left the run more to do (running: a server finishes it).
type ExpiredLease struct {
	// ThreadID names the thread.
	ThreadID string
	// Version is the thread's version (0 if it has no record).
	Version int64
}
