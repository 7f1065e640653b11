package storekit

import (
	"fmt"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// CheckDocument refuses a document (or a document query's thread and kind)
// without a thread id or a kind.
func CheckDocument(threadID, kind string) error {
	if threadID == "" || kind == "" {
		return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "a document needs a thread id and a kind"}
	}
	return nil
}

// CheckDocumentQuery refuses a query without a kind.
func CheckDocumentQuery(q store.DocumentQuery) error {
	if q.Kind == "" || q.Offset < 0 {
		return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "a document query needs a kind and an offset of at least 0"}
	}
	return nil
}

// DocumentNotFound returns the error for an unknown document.
func DocumentNotFound(threadID, kind, key string) error {
	return &interlude.Error{Code: interlude.CodeNotFound, Message: fmt.Sprintf("thread %q has no %s document %q", threadID, kind, key)}
}

// CopyTaken returns the error for a copy onto a thread that exists.
func CopyTaken(to string) error {
	return &interlude.Error{Code: interlude.CodeConflict, Message: fmt.Sprintf("thread %q exists already; copy to a new thread id", to)}
}

// CheckCopy refuses a copy without both thread ids, or onto itself.
func CheckCopy(from, to string) error {
	if from == "" || to == "" || from == to {
		return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "a copy needs two different thread ids"}
	}
	return nil
}

// CheckDocumentWrites validates the documents of an append
// (store.Append.Documents): each needs a kind, the append's thread (or none),
// and no document may be written twice.
func CheckDocumentWrites(a store.Append) error {
	for i, w := range a.Documents {
		d := w.Document
		switch {
		case d.Kind == "":
			return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("document write %d has no kind", i)}
		case d.ThreadID != "" && d.ThreadID != a.ThreadID:
			return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("document write %d names thread %q in an append to %q", i, d.ThreadID, a.ThreadID)}
		case w.IfUnchanged && !w.Delete:
			return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("document write %d is a put marked IfUnchanged, which only a delete takes", i)}
		}
		for _, o := range a.Documents[:i] {
			if o.Document.Kind == d.Kind && o.Document.Key == d.Key {
				return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("document %s %q is written twice in one append", d.Kind, d.Key)}
			}
		}
	}
	return nil
}

// DocumentNanos returns a put's creation and update times in unix
// nanoseconds, now for those it leaves zero.
func DocumentNanos(d store.Document, now int64) (created, updated int64) {
	created, updated = now, now
	if !d.CreatedAt.IsZero() {
		created = d.CreatedAt.UnixNano()
	}
	if !d.UpdatedAt.IsZero() {
		updated = d.UpdatedAt.UnixNano()
	}
	return created, updated
}
