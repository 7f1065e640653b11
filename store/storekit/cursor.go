package storekit

import (
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

var encoding = base64.RawURLEncoding

// Cursor is the position in a listing after which the next page starts.
type Cursor struct {
	// UpdatedAt is when the last thread on the previous page was updated.
	UpdatedAt time.Time `json:"u"`
	// ThreadID is that thread's id; it orders threads updated at the same time.
	ThreadID string `json:"t"`
}

// EncodeCursor encodes c for [store.Page.NextCursor].
func EncodeCursor(c Cursor) string {
	b, _ := json.Marshal(c)
	return encoding.EncodeToString(b)
}

// DecodeCursor decodes a [store.Query.Cursor]; a malformed cursor is an error matching
// interlude.ErrInvalidRequest.
func DecodeCursor(s string) (Cursor, error) {
	var c Cursor
	b, err := encoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return c, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "the cursor is malformed; pass next_cursor from a previous page unchanged"}
	}
	return c, nil
}

// PageLimit returns q's limit with the default (50) and cap (1000) applied.
func PageLimit(q store.Query) int {
	switch {
	case q.Limit <= 0:
		return 50
	case q.Limit > 1000:
		return 1000
	}
	return q.Limit
}

// OnLaterPage reports whether a thread updated at u with id id sorts after cursor
// c in a newest-first listing, that is, belongs to a page after c.
func OnLaterPage(u time.Time, id string, c Cursor) bool {
	if !u.Equal(c.UpdatedAt) {
		return u.Before(c.UpdatedAt)
	}
	return id < c.ThreadID
}

// NewPage makes a listing page from up to limit+1 threads in listing order: the
// first limit are the page, and one more means there is a next page, whose
// cursor starts after the page's last thread.
func NewPage(threads []store.Meta, limit int) *store.Page {
	page := &store.Page{Threads: threads}
	if page.Threads == nil {
		page.Threads = []store.Meta{}
	}
	if len(page.Threads) > limit {
		page.Threads = page.Threads[:limit]
		last := page.Threads[limit-1]
		page.NextCursor = EncodeCursor(Cursor{UpdatedAt: last.UpdatedAt, ThreadID: last.ThreadID})
	}
	return page
}
