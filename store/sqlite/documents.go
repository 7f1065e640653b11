package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

// write runs fn in the transaction of a group of the group commit (commit.go),
// durable if durable is set.
func (s *Store) write(ctx context.Context, op, threadID string, durable bool, fn func(ctx context.Context) error) error {
	return s.commits.submit(ctx, &appendReq{ctx: ctx, a: store.Append{ThreadID: threadID, NoSync: !durable}, write: func(ctx context.Context) error {
		if err := fn(ctx); err != nil {
			return s.wrap(op, threadID, err)
		}
		return nil
	}})
}

// PutDocument implements store.Documents. The write joins the group commit of
// the appends (commit.go): it returns once the transaction holding it is
// durable, and writes made at the same moment share its fsync.
func (s *Store) PutDocument(ctx context.Context, d store.Document) error {
	if err := storekit.CheckDocument(d.ThreadID, d.Kind); err != nil {
		return err
	}
	created, updated := storekit.DocumentNanos(d, time.Now().UnixNano())
	data := nonNil(d.Data)
	return s.write(ctx, "put a document of", d.ThreadID, true, func(ctx context.Context) error {
		_, err := s.putDocument.ExecContext(ctx, d.ThreadID, d.Kind, d.Key, data, created, updated)
		return err
	})
}

// writeDocuments writes the documents of a in the append's transaction.
func (s *Store) writeDocuments(ctx context.Context, a store.Append, now int64) error {
	for _, w := range a.Documents {
		d := w.Document
		var err error
		switch {
		case w.Delete && w.IfUnchanged:
			_, err = s.delDocumentIf.ExecContext(ctx, a.ThreadID, d.Kind, d.Key, nonNil(d.Data))
		case w.Delete:
			_, err = s.delDocument.ExecContext(ctx, a.ThreadID, d.Kind, d.Key)
		default:
			created, updated := storekit.DocumentNanos(d, now)
			_, err = s.putDocument.ExecContext(ctx, a.ThreadID, d.Kind, d.Key, nonNil(d.Data), created, updated)
		}
		if err != nil {
			return s.wrap("write a document of", a.ThreadID, err)
		}
	}
	return nil
}

const documentColumns = `thread_id, kind, key, data, created_at, updated_at`

func scanDocument(row storekit.Scanner) (store.Document, error) {
	var d store.Document
	var created, updated int64
	if err := row.Scan(&d.ThreadID, &d.Kind, &d.Key, &d.Data, &created, &updated); err != nil {
		return d, err
	}
	d.CreatedAt, d.UpdatedAt = storekit.FromUnixNano(created), storekit.FromUnixNano(updated)
	return d, nil
}

// Document implements store.Documents.
func (s *Store) Document(ctx context.Context, threadID, kind, key string) (*store.Document, error) {
	ctx, err := byKey(ctx)
	if err != nil {
		return nil, err
	}
	d, err := scanDocument(s.selDocument.QueryRowContext(ctx, threadID, kind, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, storekit.DocumentNotFound(threadID, kind, key)
	}
	if err != nil {
		return nil, s.wrap("read a document of", threadID, err)
	}
	return &d, nil
}

// Documents implements store.Documents.
func (s *Store) Documents(ctx context.Context, q store.DocumentQuery) ([]store.Document, error) {
	if err := storekit.CheckDocumentQuery(q); err != nil {
		return nil, err
	}
	var rows *sql.Rows
	var err error
	if q.ThreadID != "" {
		rows, err = s.selThreadDocuments.QueryContext(ctx, q.Kind, q.ThreadID, store.DocumentLimit(q), q.Offset)
	} else {
		rows, err = s.selDocuments.QueryContext(ctx, q.Kind, store.DocumentLimit(q), q.Offset)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store: list %s documents: %w", q.Kind, err)
	}
	defer rows.Close()
	var out []store.Document
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite store: list %s documents: %w", q.Kind, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: list %s documents: %w", q.Kind, err)
	}
	return out, nil
}

// DeleteDocument implements store.Documents. Like PutDocument, it joins the
// group commit of the appends.
func (s *Store) DeleteDocument(ctx context.Context, threadID, kind, key string) error {
	return s.write(ctx, "delete a document of", threadID, true, func(ctx context.Context) error {
		_, err := s.delDocument.ExecContext(ctx, threadID, kind, key)
		return err
	})
}

// The statements of documents. A listing of one thread's documents
// (selThreadDocumentsSQL) reads them by the primary key and sorts them in a
// temporary B-tree: they are few, as the adapters prune them (to about a
// hundred runs a thread). NOT INDEXED keeps the planner off documents_kind,
// which would walk every thread's documents of the kind.
const (
	putDocumentSQL = `INSERT INTO documents (thread_id, kind, key, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (thread_id, kind, key) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`
	delDocumentSQL        = `DELETE FROM documents WHERE thread_id = ? AND kind = ? AND key = ?`
	delDocumentIfSQL      = `DELETE FROM documents WHERE thread_id = ? AND kind = ? AND key = ? AND data = ?`
	selDocumentSQL        = `SELECT ` + documentColumns + ` FROM documents WHERE thread_id = ? AND kind = ? AND key = ?`
	selDocumentsSQL       = `SELECT ` + documentColumns + ` FROM documents WHERE kind = ? ORDER BY created_at DESC, thread_id DESC, key DESC LIMIT ? OFFSET ?`
	selThreadDocumentsSQL = `SELECT ` + documentColumns + ` FROM documents NOT INDEXED WHERE kind = ? AND thread_id = ? ORDER BY created_at DESC, key DESC LIMIT ? OFFSET ?`
)

// CopyThread implements store.Copier, in one transaction: a durable write of
// the group commit.
func (s *Store) CopyThread(ctx context.Context, from, to string) error {
	if err := storekit.CheckCopy(from, to); err != nil {
		return err
	}
	now := time.Now().UnixNano()
	return s.write(ctx, "copy", from, true, func(ctx context.Context) error {
		var n int
		if err := s.wc.QueryRowContext(ctx, `SELECT COUNT(*) FROM threads WHERE id = ?`, to).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return storekit.CopyTaken(to)
		}
		res, err := s.wc.ExecContext(ctx, `INSERT INTO threads (id, graph, status, version, interrupts, created_at, updated_at, expires_at)
			SELECT ?, graph, status, version, interrupts, ?, ?, expires_at FROM threads WHERE id = ?`, to, now, now, from)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = storekit.NotFound(from)
			}
			return err
		}
		if _, err := s.wc.ExecContext(ctx, `INSERT INTO records (thread_id, version, format, kind, data, created_at)
			SELECT ?, version, format, kind, data, created_at FROM records WHERE thread_id = ?`, to, from); err != nil {
			return err
		}
		_, err = s.wc.ExecContext(ctx, `INSERT INTO snapshots (thread_id, version, format, data)
			SELECT ?, version, format, data FROM snapshots WHERE thread_id = ?`, to, from)
		return err
	})
}
