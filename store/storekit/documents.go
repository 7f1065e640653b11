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
