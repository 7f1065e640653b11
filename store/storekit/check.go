package storekit

import (
	"fmt"
	"strconv"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// CheckFormat returns an error matching interlude.ErrUnknownFormat unless format is a
// version this build reads. Stores call it on every record and snapshot they return.
func CheckFormat(threadID string, version int64, format int) error {
	if format >= 1 && format <= store.FormatVersion {
		return nil
	}
	return &interlude.Error{
		Code: interlude.CodeUnknownFormat,
		Message: fmt.Sprintf("thread %q version %d has format %d, but this build reads formats 1 to %d; upgrade Interlude to read it",
			threadID, version, format, store.FormatVersion),
	}
}

// CheckAppend validates the shape of an append before a store applies it.
func CheckAppend(a store.Append) error {
	if a.ThreadID == "" {
		return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "append needs a thread id"}
	}
	if a.Expect < 0 {
		return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("append expects version %d; versions start at 0 (a new thread)", a.Expect)}
	}
	if len(a.Records) == 0 {
		return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "append needs at least one record"}
	}
	for i, r := range a.Records {
		if r.Version != a.Expect+int64(i)+1 {
			return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("record %d has version %d, want %d", i, r.Version, a.Expect+int64(i)+1)}
		}
		if err := CheckFormat(a.ThreadID, r.Version, r.Format); err != nil {
			return err
		}
	}
	if s := a.Snapshot; s != nil {
		if s.Version != a.Records[len(a.Records)-1].Version {
			return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "snapshot version must be that of the last appended record"}
		}
		if err := CheckFormat(a.ThreadID, s.Version, s.Format); err != nil {
			return err
		}
	}
	if err := CheckNotices(a); err != nil {
		return err
	}
	return CheckDocumentWrites(a)
}

// Conflict returns the error for a failed compare-and-set.
func Conflict(threadID string, expect, actual int64) error {
	return &interlude.Error{
		Code:    interlude.CodeConflict,
		Message: fmt.Sprintf("thread %q is at version %d, not %d: another writer changed it first; reload and try again", threadID, actual, expect),
	}
}

// NotFound returns the error for an unknown thread.
func NotFound(threadID string) error {
	// Written as fmt's %q writes it, without fmt: a runtime meets this
	// error for every new thread it opens.
	var buf [128]byte
	b := append(buf[:0], "thread "...)
	b = strconv.AppendQuote(b, threadID)
	b = append(b, " does not exist"...)
	return &interlude.Error{Code: interlude.CodeNotFound, Message: string(b)}
}
