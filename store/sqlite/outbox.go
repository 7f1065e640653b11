package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

const noticeColumns = `id, seq, thread_id, graph, type, interrupt_id, data, created_at, state, attempts, next_at, last_error, delivered_to, settled_at`

// insertNotices writes the notices of a in the append's transaction.
func (s *Store) insertNotices(ctx context.Context, a store.Append, now int64) error {
	for _, n := range a.Outbox {
		created := now
		if !n.CreatedAt.IsZero() {
			created = n.CreatedAt.UnixNano()
		}
		if _, err := s.insNotice.ExecContext(ctx, n.ID, a.ThreadID, n.Graph, n.Type, n.InterruptID, nonNil(n.Data), created, created); err != nil {
			return s.wrap("append to", a.ThreadID, err)
		}
	}
	return nil
}

// scanNotices reads rows of noticeColumns.
func scanNotices(rows *sql.Rows, err error) ([]store.Notice, error) {
	if err != nil {
		return nil, fmt.Errorf("sqlite store: read the outbox: %w", err)
	}
	defer rows.Close()
	out := []store.Notice{}
	for rows.Next() {
		var (
			n             store.Notice
			data          []byte
			state, to     string
			created, next int64
			settled       sql.NullInt64
		)
		if err := rows.Scan(&n.ID, &n.Seq, &n.ThreadID, &n.Graph, &n.Type, &n.InterruptID, &data, &created, &state, &n.Attempts, &next, &n.LastError, &to, &settled); err != nil {
			return nil, fmt.Errorf("sqlite store: read the outbox: %w", err)
		}
		n.Data, n.State, n.CreatedAt, n.NextAt = data, store.NoticeState(state), storekit.FromUnixNano(created), storekit.FromUnixNano(next)
		if to == "[]" { // the common case, spared a decode
			n.DeliveredTo = []string{}
		} else if err := json.Unmarshal([]byte(to), &n.DeliveredTo); err != nil {
			return nil, fmt.Errorf("sqlite store: notice %s: delivered_to: %w", n.ID, err)
		} else if n.DeliveredTo == nil {
			n.DeliveredTo = []string{}
		}
		if settled.Valid {
			t := storekit.FromUnixNano(settled.Int64)
			n.SettledAt = &t
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: read the outbox: %w", err)
	}
	return out, nil
}

// ClaimNotices implements store.Outbox. A claim joins the appends' group
// commit (commit.go), sharing their transaction rather than taking the writer
// on its own, and does not make the group wait for the disk: a claim lost to
// a crash leaves its notices due, to be claimed again.
func (s *Store) ClaimNotices(ctx context.Context, c store.NoticeClaim) ([]store.Notice, error) {
	now := c.Now.UnixNano()
	var out []store.Notice
	err := s.commits.submit(ctx, &appendReq{ctx: ctx, a: store.Append{NoSync: true}, write: func(ctx context.Context) error {
		var err error
		out, err = scanNotices(s.claimNotices.QueryContext(ctx, c.Owner, c.Now.Add(c.TTL).UnixNano(), now, storekit.NoticeLimit(c.Limit)))
		return err
	}})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: claim notices: %w", err)
	}
	slices.SortFunc(out, storekit.CompareDue)
	return out, nil
}

// SettleNotice implements store.Outbox.
func (s *Store) SettleNotice(ctx context.Context, st store.NoticeSettle) error {
	return s.SettleNotices(ctx, []store.NoticeSettle{st})
}

// SettleNotices implements store.Outbox: the outcomes are written together in
// the appends' group commit (commit.go), without making the group wait for the
// disk (a settle lost to a crash delivers its notice again).
func (s *Store) SettleNotices(ctx context.Context, ss []store.NoticeSettle) error {
	var errs []error
	valid := make([]store.NoticeSettle, 0, len(ss))
	for _, st := range ss {
		if err := storekit.CheckSettle(st); err != nil {
			errs = append(errs, err)
			continue
		}
		valid = append(valid, st)
	}
	if len(valid) == 0 {
		return errors.Join(errs...)
	}
	tos := make([]string, len(valid))
	for i, st := range valid {
		tos[i] = storekit.DeliveredTo(st.DeliveredTo)
	}
	var refused []error // the notices the op found missing or claimed by another, if it commits
	err := s.commits.submit(ctx, &appendReq{ctx: ctx, a: store.Append{NoSync: true}, write: func(ctx context.Context) error {
		refused = refused[:0]
		upd := s.settleNotice
		for i, st := range valid {
			var settled any
			next := st.NextAt.UnixNano()
			if st.State != store.NoticePending {
				settled, next = st.At.UnixNano(), 0
			}
			res, err := upd.ExecContext(ctx, string(st.State), next, st.Error, tos[i], settled, st.ID, st.Owner)
			if err != nil {
				return fmt.Errorf("sqlite store: settle notice %s: %w", st.ID, err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				continue
			}
			var one int
			switch err := s.wc.QueryRowContext(ctx, `SELECT 1 FROM outbox WHERE id = ?`, st.ID).Scan(&one); {
			case errors.Is(err, sql.ErrNoRows):
				refused = append(refused, storekit.NoticeNotFound(st.ID))
			case err != nil:
				return fmt.Errorf("sqlite store: read notice %s: %w", st.ID, err)
			default:
				refused = append(refused, storekit.ClaimLost(st.ID, st.Owner))
			}
		}
		return nil
	}})
	if err != nil {
		return fmt.Errorf("sqlite store: settle notices: %w", err)
	}
	return errors.Join(append(errs, refused...)...)
}

// Notices implements store.Outbox.
func (s *Store) Notices(ctx context.Context, q store.NoticeQuery) ([]store.Notice, error) {
	var (
		where []string
		args  []any
	)
	if q.State != "" {
		where, args = append(where, "state = ?"), append(args, string(q.State))
	}
	if q.Before > 0 {
		where, args = append(where, "seq < ?"), append(args, q.Before)
	}
	query := `SELECT ` + noticeColumns + ` FROM outbox`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY seq DESC LIMIT ?"
	return scanNotices(s.r.QueryContext(ctx, query, append(args, storekit.NoticePageLimit(q.Limit))...))
}

// RetryNotice implements store.Outbox. The retry joins the group commit of
// the appends (commit.go) without making the group wait for the disk, as a
// claim does: a retry lost to a crash leaves the notice failed, to be retried
// again.
func (s *Store) RetryNotice(ctx context.Context, id string, now time.Time) error {
	var refused error // why the notice was not retried, if the write commits
	err := s.commits.submit(ctx, &appendReq{ctx: ctx, a: store.Append{NoSync: true}, write: func(ctx context.Context) error {
		refused = nil
		res, err := s.wc.ExecContext(ctx, `UPDATE outbox SET state = 'pending', attempts = 0, next_at = ?, settled_at = NULL, owner = '', claimed_until = 0
			WHERE id = ? AND state = 'failed'`, now.UnixNano(), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var state string
		switch err := s.wc.QueryRowContext(ctx, `SELECT state FROM outbox WHERE id = ?`, id).Scan(&state); {
		case errors.Is(err, sql.ErrNoRows):
			refused = storekit.NoticeNotFound(id)
		case err != nil:
			return fmt.Errorf("read notice %s: %w", id, err)
		default:
			refused = storekit.NotFailed(id, store.NoticeState(state))
		}
		return nil
	}})
	if err != nil {
		return fmt.Errorf("sqlite store: retry notice %s: %w", id, err)
	}
	return refused
}
