package store

import (
	"context"
	"encoding/json"
	"time"
)

// Notice is one entry of the outbox: a change worth telling people about (a
// question raised or closed, a thread failed), written in the same append as
// the change itself (Append.Outbox), so that a change that was committed is
// never left untold, and delivered from there at least once.
type Notice struct {
	// ID is the notice's stable id, the same on every attempt, so that a
	// receiver can drop a repeated delivery.
	ID string `json:"id"`
	// Seq orders the notices of a store: the store numbers them as they are
	// written, and listings page by it.
	Seq int64 `json:"seq"`
	// ThreadID names the thread the change happened to.
	ThreadID string `json:"thread_id"`
	// Graph names the thread's graph.
	Graph string `json:"graph"`
	// Type says what happened (NoticeRaised, NoticeAnswered, ...).
	Type string `json:"type"`
	// InterruptID names the question the notice is about, if any.
	InterruptID string `json:"interrupt_id,omitempty"`
	// Data is the notice's JSON payload, as the runtime wrote it.
	Data json.RawMessage `json:"data"`
	// CreatedAt is when the change was committed.
	CreatedAt time.Time `json:"created_at"`

	// State is where delivery stands; the store keeps it.
	State NoticeState `json:"state"`
	// Attempts counts the deliveries tried so far.
	Attempts int `json:"attempts"`
	// NextAt is when the next attempt is due, while State is pending.
	NextAt time.Time `json:"next_attempt_at"`
	// LastError is what the last failed attempt said.
	LastError string `json:"last_error,omitempty"`
	// DeliveredTo names the destinations that took the notice, so that a
	// retry goes only to the others.
	DeliveredTo []string `json:"delivered_to"`
	// SettledAt is when delivery ended (delivered or failed), if it has.
	SettledAt *time.Time `json:"settled_at,omitempty"`
}

// What a notice reports (Notice.Type).
const (
	// NoticeRaised: a question was asked.
	NoticeRaised = "interrupt.raised"
	// NoticeAnswered: a question was answered (resume).
	NoticeAnswered = "interrupt.answered"
	// NoticeRejected: a question was rejected.
	NoticeRejected = "interrupt.rejected"
	// NoticeCancelled: a question was cancelled.
	NoticeCancelled = "interrupt.cancelled"
	// NoticeExpired: a question's time to live passed and it was closed.
	NoticeExpired = "interrupt.expired"
	// NoticeFailed: a thread's run failed.
	NoticeFailed = "thread.failed"
	// NoticeEscalated: a question waited long enough to be escalated: more
	// people were told, or it was reassigned.
	NoticeEscalated = "interrupt.escalated"
)

// NoticeTypes lists every notice type, for validating configurations.
var NoticeTypes = []string{NoticeRaised, NoticeAnswered, NoticeRejected, NoticeCancelled, NoticeExpired, NoticeFailed, NoticeEscalated}

// NoticeState is where a notice's delivery stands.
type NoticeState string

// Delivery states.
const (
	// NoticePending: not delivered yet; due at NextAt.
	NoticePending NoticeState = "pending"
	// NoticeDelivered: every destination took it.
	NoticeDelivered NoticeState = "delivered"
	// NoticeDead: the last attempt failed; it waits for a retry by hand
	// (Outbox.RetryNotice).
	NoticeDead NoticeState = "failed"
)

// Outbox is implemented by stores that keep the notices written with appends
// (Append.Outbox) and hand them to dispatchers. The stores of this module
// implement it; a store that does not must refuse appends that carry notices.
type Outbox interface {
	// ClaimNotices takes up to c.Limit pending notices that are due at c.Now
	// and that no other owner's unexpired claim holds, oldest first, for
	// c.Owner until c.Now+c.TTL, and counts the attempt. Across the processes
	// sharing the store, a notice is claimed by one owner at a time.
	ClaimNotices(ctx context.Context, c NoticeClaim) ([]Notice, error)
	// SettleNotice records what came of an attempt on a notice claimed by
	// s.Owner, and ends the claim. If the claim was lost (it expired and
	// another owner took the notice), it fails with an error matching
	// interlude.ErrConflict and changes nothing.
	SettleNotice(ctx context.Context, s NoticeSettle) error
	// SettleNotices records the outcomes of several attempts together, each
	// as SettleNotice would: one whose claim was lost (or whose notice is
	// unknown) changes nothing and its error is joined into the result, and
	// the others are recorded all the same. It need not wait for the disk:
	// a settle lost to a crash only delivers its notice again, with the same
	// id, which receivers drop (delivery is at least once).
	SettleNotices(ctx context.Context, ss []NoticeSettle) error
	// Notices returns a page of the outbox, newest first (q.Before continues
	// it), and the ones in q.State only if set.
	Notices(ctx context.Context, q NoticeQuery) ([]Notice, error)
	// RetryNotice makes a failed notice pending again, due at now, with its
	// count of attempts reset. An unknown id is an error matching
	// interlude.ErrNotFound; a notice that is not failed one matching
	// interlude.ErrConflict.
	RetryNotice(ctx context.Context, id string, now time.Time) error
}

// NoticeClaim asks for due notices (Outbox.ClaimNotices).
type NoticeClaim struct {
	// Owner names the claimant.
	Owner string
	// Now is the time due notices are judged by.
	Now time.Time
	// TTL is how long the claim lasts: after it another owner may take the
	// notice, so that a dispatcher that died does not keep it.
	TTL time.Duration
	// Limit caps how many notices are taken; 0 means 100.
	Limit int
}

// NoticeSettle is what came of one attempt (Outbox.SettleNotice).
type NoticeSettle struct {
	// ID names the notice; Owner the claim it was attempted under.
	ID, Owner string
	// State is the notice's new state: pending (to try again at NextAt),
	// delivered, or failed for good.
	State NoticeState
	// NextAt is when a pending notice is due again.
	NextAt time.Time
	// Error says why the attempt failed, if it did.
	Error string
	// DeliveredTo names every destination that has taken the notice so far.
	DeliveredTo []string
	// At is when the attempt ended.
	At time.Time
}

// NoticeQuery selects notices for the delivery log (Outbox.Notices).
type NoticeQuery struct {
	// State keeps only notices in this state, if set.
	State NoticeState
	// Before keeps only notices with Seq below it, to continue a listing
	// (0: from the newest).
	Before int64
	// Limit caps the page; 0 means 50, and stores cap it at 1000.
	Limit int
}
