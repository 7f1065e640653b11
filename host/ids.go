package host

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewID returns a new thread or run id: prefix, the Unix milliseconds in 12
// hex digits, then 12 random ones. Ids made later sort after, so that the store
// files a new thread's rows (its record, log, snapshots and documents, all keyed
// by thread id first) at the end of each table, beside the other new threads',
// rather than on a random page.
func NewID(prefix string) string { return newIDAt(prefix, time.Now()) }

// newIDAt is NewID at the time t.
func newIDAt(prefix string, t time.Time) string {
	var b [12]byte
	ms := uint64(t.UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	rand.Read(b[6:])
	return prefix + hex.EncodeToString(b[:])
}
