package store

import (
	"encoding/base64"
	"time"
)

var encoding = base64.RawURLEncoding

// Before reports whether a thread updated at u with id id sorts after cursor c in a
// newest-first listing, that is, belongs to the page after c.
func Before(u time.Time, id string, c Cursor) bool {
	if !u.Equal(c.UpdatedAt) {
		return u.Before(c.UpdatedAt)
	}
	return id < c.ThreadID
}

// NewPage makes a listing page from up to limit+1 threads in listing order: the
// first limit are the page, and one more means there is a next page, whose
// cursor starts after the page's last thread.
func NewPage(threads []Meta, limit int) *Page {
	page := &Page{Threads: threads}
	if page.Threads == nil {
		page.Threads = []Meta{}
	}
	if len(page.Threads) > limit {
		page.Threads = page.Threads[:limit]
		last := page.Threads[limit-1]
		page.NextCursor = EncodeCursor(Cursor{UpdatedAt: last.UpdatedAt, ThreadID: last.ThreadID})
	}
	return page
}
