package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
	"github.com/jackc/pgx/v5"
)

// noticeArgs are the notices of an append as the arrays its statement unnests.
type noticeArgs struct {
	ids, graphs, types, interrupts []string
	datas                          [][]byte
	created                        []int64
}

// fill sets the arrays from ns, stamping notices without a time with now, and
// returns the bytes they carry.
func (a *noticeArgs) fill(ns []store.Notice, now int64) (size int) {
	for _, n := range ns {
		at := now
		if !n.CreatedAt.IsZero() {
			at = n.CreatedAt.UnixNano()
		}
		a.ids = append(a.ids, n.ID)
		a.graphs = append(a.graphs, n.Graph)
		a.types = append(a.types, n.Type)
		a.interrupts = append(a.interrupts, n.InterruptID)
		a.datas = append(a.datas, nonNil(n.Data))
		a.created = append(a.created, at)
		size += len(n.Data)
	}
	return size
}

const noticeColumns = `id, seq, thread_id, graph, type, interrupt_id, data, created_at, state, attempts, next_at, last_error, delivered_to, settled_at`

func scanNotices(rows pgx.Rows, err error) ([]store.Notice, error) {
	if err != nil {
		return nil, fmt.Errorf("postgres store: read the outbox: %w", err)
	}
	defer rows.Close()
	out := []store.Notice{}
	for rows.Next() {
		var (
			n             store.Notice
			state         string
			created, next int64
			settled       *int64
		)
		if err := rows.Scan(&n.ID, &n.Seq, &n.ThreadID, &n.Graph, &n.Type, &n.InterruptID, &n.Data, &created, &state, &n.Attempts, &next, &n.LastError, &n.DeliveredTo, &settled); err != nil {
			return nil, fmt.Errorf("postgres store: read the outbox: %w", err)
		}
		n.State, n.CreatedAt, n.NextAt = store.NoticeState(state), storekit.FromUnixNano(created), storekit.FromUnixNano(next)
		if n.DeliveredTo == nil {
			n.DeliveredTo = []string{}
		}
		if settled != nil {
			t := storekit.FromUnixNano(*settled)
			n.SettledAt = &t
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres store: read the outbox: %w", err)
	}
	return out, nil
}

// ClaimNotices implements store.Outbox. Replicas claiming together skip the
// rows another holds locked, so each notice goes to one of them. The claim
// commits without waiting for the log's flush (on the store's second pool,
// synchronous_commit off): a claim lost to a database crash leaves its
// notices due, to be claimed and delivered again.
func (s *Store) ClaimNotices(ctx context.Context, c store.NoticeClaim) ([]store.Notice, error) {
	q := s.sql.schema
	out, err := scanNotices(s.fast.Query(ctx, `UPDATE `+q+`.outbox SET owner = $1, claimed_until = $2, attempts = attempts + 1
		WHERE seq IN (SELECT seq FROM `+q+`.outbox WHERE state = 'pending' AND next_at <= $3 AND (owner = '' OR claimed_until <= $3)
			ORDER BY next_at, seq LIMIT $4 FOR UPDATE SKIP LOCKED)
		RETURNING `+noticeColumns, c.Owner, c.Now.Add(c.TTL).UnixNano(), c.Now.UnixNano(), storekit.NoticeLimit(c.Limit)))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, storekit.CompareDue)
	return out, nil
}

// SettleNotice implements store.Outbox.
func (s *Store) SettleNotice(ctx context.Context, st store.NoticeSettle) error {
	return s.SettleNotices(ctx, []store.NoticeSettle{st})
}

// SettleNotices implements store.Outbox: one statement, committed without
// waiting for the log's flush (on the store's second pool, synchronous_commit
// off; a settle lost to a database crash delivers its notice again).
func (s *Store) SettleNotices(ctx context.Context, ss []store.NoticeSettle) error {
	var errs []error
	var v settleArrays
	first := make(map[string]bool, len(ss)) // the ids in v
	var again []store.NoticeSettle          // outcomes for an id already in v
	for _, st := range ss {
		if err := storekit.CheckSettle(st); err != nil {
			errs = append(errs, err)
			continue
		}
		if first[st.ID] {
			again = append(again, st)
			continue
		}
		first[st.ID] = true
		v.add(st)
	}
	if len(v.ids) == 0 && len(again) == 0 {
		return errors.Join(errs...)
	}
	// An id comes once in the arrays (the first outcome for it): an UPDATE
	// joined to several rows for one notice would apply any one of them.
	rows, err := s.fast.Query(ctx, `UPDATE `+s.sql.schema+`.outbox o SET state = v.state, next_at = v.next_at, last_error = v.last_error,
			delivered_to = ARRAY(SELECT jsonb_array_elements_text(v.delivered_to::jsonb)), settled_at = v.settled_at, owner = '', claimed_until = 0
		FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::bigint[])
			AS v(id, owner, state, next_at, last_error, delivered_to, settled_at)
		WHERE o.id = v.id AND o.owner = v.owner AND o.state = 'pending'
		RETURNING o.id`, v.ids, v.owners, v.states, v.next, v.errors, v.to, v.settled)
	if err != nil {
		return fmt.Errorf("postgres store: settle notices: %w", err)
	}
	settled := make(map[string]bool, len(v.ids))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("postgres store: settle notices: %w", err)
		}
		settled[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres store: settle notices: %w", err)
	}
	for i, id := range v.ids {
		if !settled[id] {
			errs = append(errs, s.noticeMissing(ctx, id, storekit.ClaimLost(id, v.owners[i])))
		}
	}
	// A second outcome for one notice finds the claim ended by the first, as
	// it would have alone.
	for _, st := range again {
		errs = append(errs, s.noticeMissing(ctx, st.ID, storekit.ClaimLost(st.ID, st.Owner)))
	}
	return errors.Join(errs...)
}

// settleArrays are outcomes as the arrays the settle statement unnests.
type settleArrays struct {
	ids, owners, states, errors, to []string
	next                            []int64
	settled                         []*int64
}

// add appends one outcome.
func (a *settleArrays) add(st store.NoticeSettle) {
	var settled *int64
	next := st.NextAt.UnixNano()
	if st.State != store.NoticePending {
		at := st.At.UnixNano()
		settled, next = &at, 0
	}
	to := storekit.DeliveredTo(st.DeliveredTo)
	a.ids, a.owners, a.states = append(a.ids, st.ID), append(a.owners, st.Owner), append(a.states, string(st.State))
	a.next, a.errors, a.to, a.settled = append(a.next, next), append(a.errors, st.Error), append(a.to, to), append(a.settled, settled)
}

// noticeMissing returns NoticeNotFound for an unknown id, else otherwise (or,
// when nil, that the notice has not failed).
func (s *Store) noticeMissing(ctx context.Context, id string, otherwise error) error {
	var state string
	err := s.pool.QueryRow(ctx, `SELECT state FROM `+s.sql.schema+`.outbox WHERE id = $1`, id).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return storekit.NoticeNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("postgres store: read notice %s: %w", id, err)
	}
	if otherwise == nil {
		return storekit.NotFailed(id, store.NoticeState(state))
	}
	return otherwise
}

// Notices implements store.Outbox.
func (s *Store) Notices(ctx context.Context, q store.NoticeQuery) ([]store.Notice, error) {
	var (
		where []string
		args  []any
	)
	if q.State != "" {
		args = append(args, string(q.State))
		where = append(where, fmt.Sprintf("state = $%d", len(args)))
	}
	if q.Before > 0 {
		args = append(args, q.Before)
		where = append(where, fmt.Sprintf("seq < $%d", len(args)))
	}
	query := `SELECT ` + noticeColumns + ` FROM ` + s.sql.schema + `.outbox`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, storekit.NoticePageLimit(q.Limit))
	query += fmt.Sprintf(" ORDER BY seq DESC LIMIT $%d", len(args))
	return scanNotices(s.pool.Query(ctx, query, args...))
}

// RetryNotice implements store.Outbox.
func (s *Store) RetryNotice(ctx context.Context, id string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE `+s.sql.schema+`.outbox SET state = 'pending', attempts = 0, next_at = $1, settled_at = NULL, owner = '', claimed_until = 0
		WHERE id = $2 AND state = 'failed'`, now.UnixNano(), id)
	if err != nil {
		return fmt.Errorf("postgres store: retry notice %s: %w", id, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	return s.noticeMissing(ctx, id, nil)
}
