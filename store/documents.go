package store

import (
	"context"
	"time"
)

// Documents is an optional capability of a store: small documents filed under
// a thread id by the adapters that serve threads, such as the metadata a
// LangGraph client sets on a thread and the runs it started, so that they
// survive a restart and every process sharing the store reads the same. A
// document may come before its thread's first record (a thread created empty),
// and Store.Delete forgets a thread's documents with the thread. A write
// (PutDocument, DeleteDocument) is durable when it returns, as an append is:
// what a server answers after writing a document survives a crash. A store
// may commit concurrent writes together to share the cost (SQLite commits
// them with the appends waiting at the same moment, under one fsync).
type Documents interface {
	// PutDocument writes d, replacing the document with the same thread, kind
	// and key. A replacement keeps the CreatedAt of the first put.
	PutDocument(ctx context.Context, d Document) error
	// Document returns one document, or an error matching
	// interlude.ErrNotFound.
	Document(ctx context.Context, threadID, kind, key string) (*Document, error)
	// Documents lists the documents of one kind, newest created first (then by
	// thread id and key, descending). A listing of one thread's may read and
	// sort all its documents of the kind: keep them few.
	Documents(ctx context.Context, q DocumentQuery) ([]Document, error)
	// DeleteDocument forgets one document; an unknown one is not an error.
	DeleteDocument(ctx context.Context, threadID, kind, key string) error
}

// Document is a document of Documents.
type Document struct {
	// ThreadID is the thread it is filed under.
	ThreadID string
	// Kind names what it is ("langgraph.thread", "langgraph.run", ...).
	Kind string
	// Key tells apart the documents of one kind of a thread ("" for the only one).
	Key string
	// Data is the document, opaque to the store.
	Data []byte
	// CreatedAt is when it was first put; the store sets it if zero.
	CreatedAt time.Time
	// UpdatedAt is when it was last put; the store sets it if zero.
	UpdatedAt time.Time
}

// DocumentWrite is a change to one document carried by an append
// (Append.Documents): a put, as PutDocument makes it, or a delete.
type DocumentWrite struct {
	// Document is the document to put; for a delete, its ThreadID, Kind and
	// Key name the document (and Data the data IfUnchanged expects). Its
	// ThreadID is the append's, or empty for the append's.
	Document Document
	// Delete forgets the document instead of putting it; an unknown one is
	// not an error.
	Delete bool
	// IfUnchanged, with Delete, forgets the document only if its data is
	// still exactly Document.Data, so that a put made since the caller read it
	// survives.
	IfUnchanged bool
}

// DocumentQuery selects documents for Documents.List.
type DocumentQuery struct {
	// Kind is the kind listed; it is required.
	Kind string
	// ThreadID keeps only the documents of one thread, if set.
	ThreadID string
	// Limit caps how many are returned: 0 means 100, and stores cap it at 10,000.
	Limit int
	// Offset skips that many of the first ones.
	Offset int
}

// DocumentLimit is the number of documents a query returns at most: its
// Limit, 100 if unset, capped at 10,000.
func DocumentLimit(q DocumentQuery) int {
	switch {
	case q.Limit <= 0:
		return 100
	case q.Limit > 10000:
		return 10000
	}
	return q.Limit
}

// Copier is an optional capability of a store: CopyThread makes thread to a
// copy of thread from, with the same log, snapshots and facts (its creation and
// update times are those of the copy), so that the copy's state and history
// read as the original's and each then goes its own way. Documents, leases and
// notices are not copied. An unknown from is an error matching
// interlude.ErrNotFound, an existing to one matching interlude.ErrConflict.
type Copier interface {
	CopyThread(ctx context.Context, from, to string) error
}
