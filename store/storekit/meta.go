package storekit

import (
	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// Scanner is a row of a query's result: database/sql's *sql.Row and *sql.Rows
// and pgx's rows alike.
type Scanner interface{ Scan(dest ...any) error }

// ScanMeta scans a thread's row as the SQL stores select it: graph, status,
// version, pending interrupts (EncodeInterrupts), created and updated times in
// Unix nanoseconds, all after the thread's id when threadID is "". storeName
// names the store in the error of unreadable interrupts.
func ScanMeta(row Scanner, storeName, threadID string) (*store.Meta, error) {
	var (
		m                = &store.Meta{ThreadID: threadID}
		status           string
		interrupts       []byte
		created, updated int64
		dest             = []any{&m.Graph, &status, &m.Version, &interrupts, &created, &updated}
	)
	if threadID == "" {
		dest = append([]any{&m.ThreadID}, dest...)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	m.Status = interlude.ThreadStatus(status)
	m.CreatedAt, m.UpdatedAt = FromUnixNano(created), FromUnixNano(updated)
	var err error
	m.Interrupts, err = DecodeInterrupts(storeName, m.ThreadID, interrupts)
	return m, err
}

// Rows is a query's result rows: database/sql's *sql.Rows and pgx's rows alike.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// ScanMetas scans every row of a thread listing, each starting with the
// thread's id (ScanMeta). The caller closes rows.
func ScanMetas(rows Rows, storeName string) ([]store.Meta, error) {
	var threads []store.Meta
	for rows.Next() {
		m, err := ScanMeta(rows, storeName, "")
		if err != nil {
			return nil, err
		}
		threads = append(threads, *m)
	}
	return threads, rows.Err()
}
