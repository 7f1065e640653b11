package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
	"github.com/jackc/pgx/v5"
)

// PutDocument implements store.Documents.
func (s *Store) PutDocument(ctx context.Context, d store.Document) error {
	if err := storekit.CheckDocument(d.ThreadID, d.Kind); err != nil {
		return err
	}
	now := time.Now().UnixNano()
	created, updated := now, now
	if !d.CreatedAt.IsZero() {
		created = d.CreatedAt.UnixNano()
	}
	if !d.UpdatedAt.IsZero() {
		updated = d.UpdatedAt.UnixNano()
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO `+s.sql.schema+`.documents (thread_id, kind, key, data, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (thread_id, kind, key) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`,
		d.ThreadID, d.Kind, d.Key, nonNil(d.Data), created, updated)
	if err != nil {
		return s.wrap("put a document of", d.ThreadID, err)
	}
	return nil
}

const documentColumns = `thread_id, kind, key, data, created_at, updated_at`

func scanDocument(row pgx.Row) (store.Document, error) {
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
	d, err := scanDocument(s.pool.QueryRow(ctx, `SELECT `+documentColumns+` FROM `+s.sql.schema+`.documents
		WHERE thread_id = $1 AND kind = $2 AND key = $3`, threadID, kind, key))
	if errors.Is(err, pgx.ErrNoRows) {
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
	rows, err := s.pool.Query(ctx, `SELECT `+documentColumns+` FROM `+s.sql.schema+`.documents
		WHERE kind = $1 AND ($2 = '' OR thread_id = $2)
		ORDER BY created_at DESC, thread_id DESC, key DESC LIMIT $3 OFFSET $4`, q.Kind, q.ThreadID, store.DocumentLimit(q), q.Offset)
	if err != nil {
		return nil, fmt.Errorf("postgres store: list %s documents: %w", q.Kind, err)
	}
	defer rows.Close()
	var out []store.Document
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres store: list %s documents: %w", q.Kind, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres store: list %s documents: %w", q.Kind, err)
	}
	return out, nil
}

// DeleteDocument implements store.Documents.
func (s *Store) DeleteDocument(ctx context.Context, threadID, kind, key string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM `+s.sql.schema+`.documents WHERE thread_id = $1 AND kind = $2 AND key = $3`,
		threadID, kind, key); err != nil {
		return s.wrap("delete a document of", threadID, err)
	}
	return nil
}

// CopyThread implements store.Copier, in one transaction. A copy onto an id
// another writer creates meanwhile fails on the thread's key, as a conflict.
func (s *Store) CopyThread(ctx context.Context, from, to string) error {
	if err := storekit.CheckCopy(from, to); err != nil {
		return err
	}
	now := time.Now().UnixNano()
	sc := s.sql.schema
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+sc+`.threads WHERE id = $1)`, to).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return storekit.CopyTaken(to)
		}
		tag, err := tx.Exec(ctx, `INSERT INTO `+sc+`.threads (id, graph, status, version, interrupts, created_at, updated_at, expires_at)
			SELECT $1, graph, status, version, interrupts, $2, $2, expires_at FROM `+sc+`.threads WHERE id = $3`, to, now, from)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return storekit.NotFound(from)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+sc+`.records (thread_id, version, format, kind, data, created_at)
			SELECT $1, version, format, kind, data, created_at FROM `+sc+`.records WHERE thread_id = $2`, to, from); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO `+sc+`.snapshots (thread_id, version, format, data)
			SELECT $1, version, format, data FROM `+sc+`.snapshots WHERE thread_id = $2`, to, from)
		return err
	})
	if err != nil {
		var pe interface{ SQLState() string }
		if errors.As(err, &pe) && pe.SQLState() == "23505" {
			return storekit.CopyTaken(to)
		}
		return s.wrap("copy", from, err)
	}
	return nil
}

// documentArgs are the array parameters of an append's documents
// (store.Append.Documents), puts and deletes apart.
type documentArgs struct {
	putKinds, putKeys      []string
	putDatas               [][]byte
	putCreated, putUpdated []int64
	delKinds, delKeys      []string
	delDatas               [][]byte
	delIfUnchanged         []bool
}

// fill sets the arguments from ws and returns the bytes they carry.
func (a *documentArgs) fill(ws []store.DocumentWrite, now int64) int {
	size := 0
	for _, w := range ws {
		d := w.Document
		size += len(d.Kind) + len(d.Key) + len(d.Data)
		if w.Delete {
			a.delKinds, a.delKeys = append(a.delKinds, d.Kind), append(a.delKeys, d.Key)
			a.delDatas, a.delIfUnchanged = append(a.delDatas, nonNil(d.Data)), append(a.delIfUnchanged, w.IfUnchanged)
			continue
		}
		created, updated := storekit.DocumentNanos(d, now)
		a.putKinds, a.putKeys, a.putDatas = append(a.putKinds, d.Kind), append(a.putKeys, d.Key), append(a.putDatas, nonNil(d.Data))
		a.putCreated, a.putUpdated = append(a.putCreated, created), append(a.putUpdated, updated)
	}
	// Empty arrays rather than nil ones, which pgx sends as NULL.
	for _, p := range []*[]string{&a.putKinds, &a.putKeys, &a.delKinds, &a.delKeys} {
		if *p == nil {
			*p = []string{}
		}
	}
	for _, p := range []*[][]byte{&a.putDatas, &a.delDatas} {
		if *p == nil {
			*p = [][]byte{}
		}
	}
	for _, p := range []*[]int64{&a.putCreated, &a.putUpdated} {
		if *p == nil {
			*p = []int64{}
		}
	}
	if a.delIfUnchanged == nil {
		a.delIfUnchanged = []bool{}
	}
	return size
}
