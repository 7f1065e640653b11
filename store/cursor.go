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
