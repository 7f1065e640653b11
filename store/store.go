// Package store defines where threads are kept: an append-only log of step records
// per thread, plus a snapshot of the whole state every so often, so that neither
// loading a thread nor reading one of its old checkpoints replays the whole past.
//
// A Store knows nothing about graphs. It keeps opaque records, snapshots, and the
// few facts about each thread that listing needs (graph, status, pending
// interrupts, times). Appends are compare-and-set on the thread's version, so two
// writers can never both win.
//
// This package is the contract between a store and its callers: the Store
// interface, the types it speaks, and the optional capabilities a store may
// have (Leaser, LeaseWatcher, ExpiryIndex, RecoveryIndex, Outbox, Documents,
// Copier), which callers find with As, through any wrappers (such as
// storemetrics.Instrument).
//
// # Durability
//
// What a store has acknowledged by returning from Append is never lost, with
// one exception the caller asks for: an append marked [Append].NoSync survives
// a crash of the process but may be lost with a power loss or an operating
// system crash, together with the NoSync appends after it, until the next
// append without NoSync commits. Appends are durable in the order they
// commit, so losing one never leaves a later one in place. The graph runtime
// marks only the commits nobody has been told about yet, so what it has
// acknowledged to anyone is on disk (see graph.Durability).
//
// Implementations: store/memory (tests and ephemeral use), store/sqlite (the
// embedded default) and store/postgres (many server replicas). All pass the same
// conformance suite, store/storetest. To write another, start from
// store/storekit, the helpers these share.
package store

import (
	"context"
	"time"

	"github.com/interludehq/interlude"
)

// FormatVersion is the newest record format this build writes. Stores refuse to
// return records or snapshots whose format is newer (or zero). Every older
// format stays readable. Format 2 stores a thread's questions and answers as
// interlude.Exchange ({"interrupt": ..., "resolution": ...}); format 1 stored
// them as {"q": ..., "r": ...}. Format 3 lets a waiting subgraph's checkpoint
// refer to the questions it forwarded to its parent rather than hold copies.
const FormatVersion = 3

// Record is one entry of a thread's log.
type Record struct {
	// Version is the thread version this record creates: 1 for the first record,
	// then one more for each.
	Version int64
	// Format is the format version of Data.
	Format int
	// Kind names what happened ("step", "pause", "resolve", ...), for listings.
	Kind string
	// Data is the encoded delta.
	Data []byte
	// CreatedAt is when the record was appended.
	CreatedAt time.Time
}

// Snapshot is the full state of a thread as of one version.
type Snapshot struct {
	// Version is the thread version the snapshot reflects.
	Version int64
	// Format is the format version of Data.
	Format int
	// Data is the encoded state.
	Data []byte
}

// Meta is what a store indexes about a thread.
type Meta struct {
	// ThreadID names the thread.
	ThreadID string `json:"thread_id"`
	// Graph names the graph that runs it.
	Graph string `json:"graph"`
	// Status is its status.
	Status interlude.ThreadStatus `json:"status"`
	// Interrupts are its pending questions, for the inbox listing.
	Interrupts []interlude.Interruption `json:"interrupts"`
	// Version is the thread's current version.
	Version int64 `json:"version"`
	// CreatedAt is when the thread's first record was appended.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when its last record was appended. A store may leave it
	// at its earlier value for an append marked NoSync that keeps the graph,
	// the status and the earliest expiry of the thread's questions (a step in
	// the middle of a run, which store/sqlite and store/postgres commit
	// without rewriting their listing indexes): it is then when the thread took its current status,
	// or had its last commit someone was told of, and listings order by it.
	UpdatedAt time.Time `json:"updated_at"`
}

// Append is one atomic change to a thread.
type Append struct {
	// ThreadID names the thread.
	ThreadID string
	// Expect is the version the thread must have now (0 for a new thread). If it has
	// another, the append fails with an error matching interlude.ErrConflict.
	Expect int64
	// Meta replaces the indexed facts. ThreadID and Version are set by the store,
	// and CreatedAt too, except that a new thread (Expect 0) keeps a CreatedAt
	// given here: the runtime sets it, so that it knows the thread's creation
	// time as stored and can tell its copy from a thread deleted and created again
	// under the same id, which starts over at version 1.
	Meta Meta
	// Records are appended in order; their versions must be Expect+1, Expect+2, ...
	// The slice is the caller's again once Append returns (a store keeps
	// copies of its elements, not the slice), so a runtime may reuse it for
	// its next append.
	Records []Record
	// Snapshot, if set, is kept with the thread; its version must be that of the
	// last record. Load starts from the newest snapshot, History from the newest
	// one before its page; the runtime decides how often to write one.
	Snapshot *Snapshot
	// NoSync lets the store commit the append without waiting for the disk: it
	// is applied in order and seen by every reader at once, and a crash of the
	// process loses nothing, but a power loss or an operating system crash may
	// lose it until an append without NoSync commits, which makes every append
	// before it durable too. The runtime sets it on the commits nobody has been
	// told about yet (the intermediate steps of a run, see graph.Durability).
	// Without it, an append is durable when Append returns. A store that has
	// nothing to gain (store/memory) ignores it.
	NoSync bool
	// Handover says that the caller hands the Data of Records and Snapshot over
	// to the store: it neither changes nor reuses them once Append is called, so
	// a store that keeps them in memory (store/memory) need not copy them. The
	// runtime sets it: it encodes each record for its append alone.
	Handover bool

	// Outbox holds the notices of the change (see Outbox), written with it or
	// not at all. A notice whose id the store already has is not written again.
	// A store without the Outbox capability refuses an append that carries any.
	Outbox []Notice

	// Documents are changes to the thread's documents (see Documents), made
	// with the append or not at all, in order, and as durable as it (NoSync
	// included): what a caller files about a commit, such as the record of
	// the run the commit ends, is then kept exactly when the commit is, in
	// one transaction. Each names a document of the append's thread, and no
	// document twice. A store without the Documents capability refuses an
	// append that carries any.
	Documents []DocumentWrite
}

// Loaded is a thread as read for running it: its facts, its snapshot, and the
// records after the snapshot.
type Loaded struct {
	// Meta is the thread's indexed facts.
	Meta Meta
	// Snapshot is the newest snapshot, or nil if none was written.
	Snapshot *Snapshot
	// Records are those after the snapshot, in version order.
	Records []Record
}

// HistoryPage is a page of a thread's log, newest first, with what rebuilds the
// state just before it: the state as of any record of the page is Base with Lead
// and the page's older records applied, however long the thread is.
type HistoryPage struct {
	// Records are the page's records, newest first.
	Records []Record
	// Base is the newest snapshot older than the page's oldest record, or nil if
	// there is none: the state before the page then starts from nothing.
	Base *Snapshot
	// Lead are the records after Base (or from the first) and before the page,
	// oldest first.
	Lead []Record
}

// Query selects threads for a listing.
type Query struct {
	// Status keeps only threads with this status, if set.
	Status interlude.ThreadStatus
	// Graph keeps only threads of this graph, if set.
	Graph string
	// Limit caps the page size; 0 means 50. Stores cap it at 1000.
	Limit int
	// Cursor continues a previous listing (Page.NextCursor).
	Cursor string
}

// Page is one page of a listing, newest updated first.
type Page struct {
	// Threads are the threads on this page.
	Threads []Meta
	// NextCursor continues the listing, or "" at its end.
	NextCursor string
}

// Store keeps threads. Implementations are safe for concurrent use.
//
// A store that wraps another (to time its operations, say) implements
//
//	Unwrap() Store
//
// returning the store it wraps, as a wrapping error does for errors.Unwrap:
// As then finds the wrapped store's optional capabilities through it.
type Store interface {
	// Append applies a to its thread atomically, if the thread is at a.Expect.
	Append(ctx context.Context, a Append) error
	// Load returns the thread's facts, snapshot and the records after it. An unknown
	// thread is an error matching interlude.ErrNotFound.
	Load(ctx context.Context, threadID string) (*Loaded, error)
	// Version returns the thread's current version, or 0 for an unknown thread. It is
	// cheap, so a runtime can check a cached copy before using it.
	Version(ctx context.Context, threadID string) (int64, error)
	// Records returns the thread's records with after < version <= before (before 0
	// meaning no upper bound), oldest first, at most limit (0 meaning all).
	Records(ctx context.Context, threadID string, after, before int64, limit int) ([]Record, error)
	// History returns a page of the thread's log: its newest limit records (0
	// meaning all) with version < before (0 meaning no bound), newest first, and
	// the snapshot and records that rebuild the state before them. Its cost
	// follows the page and the snapshot interval, not the thread's length. A known
	// thread with no record before `before` gives an empty page; an unknown thread
	// is an error matching interlude.ErrNotFound.
	History(ctx context.Context, threadID string, before int64, limit int) (*HistoryPage, error)
	// Meta returns the thread's indexed facts.
	Meta(ctx context.Context, threadID string) (*Meta, error)
	// List returns a page of threads matching q, newest updated first.
	List(ctx context.Context, q Query) (*Page, error)
	// Delete forgets a thread; deleting an unknown thread is not an error.
	Delete(ctx context.Context, threadID string) error
	// Close releases the store's resources.
	Close() error
}
