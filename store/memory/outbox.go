package memory

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

// outbox holds the notices of a Store, under the store's lock.
type outbox struct {
	notices []*notice // in Seq order
	byID    map[string]*notice
}

type notice struct {
	store.Notice
	owner string
	until time.Time // the claim's end
}

// add keeps the notices of a, stamped with now unless they carry a time.
func (o *outbox) add(a store.Append, now time.Time) {
	if o.byID == nil {
		o.byID = make(map[string]*notice)
	}
	for _, n := range a.Outbox {
		if o.byID[n.ID] != nil {
			continue
		}
		n.ThreadID, n.Data = a.ThreadID, slices.Clone(n.Data)
		if n.CreatedAt.IsZero() {
			n.CreatedAt = now
		}
		n.CreatedAt = n.CreatedAt.UTC()
		n.Seq = int64(len(o.notices)) + 1
		n.State, n.Attempts, n.NextAt, n.LastError, n.DeliveredTo, n.SettledAt = store.NoticePending, 0, n.CreatedAt, "", nil, nil
		x := &notice{Notice: n}
		o.notices = append(o.notices, x)
		o.byID[n.ID] = x
	}
}

func (x *notice) public() store.Notice {
	n := x.Notice
	n.Data = slices.Clone(n.Data)
	n.DeliveredTo = slices.Clone(n.DeliveredTo)
	if n.DeliveredTo == nil {
		n.DeliveredTo = []string{}
	}
	return n
}

// ClaimNotices implements store.Outbox.
func (s *Store) ClaimNotices(ctx context.Context, c store.NoticeClaim) ([]store.Notice, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := storekit.NoticeLimit(c.Limit)
	var out []store.Notice
	due := make([]*notice, 0)
	for _, x := range s.outbox.notices {
		if x.State == store.NoticePending && !x.NextAt.After(c.Now) && (x.owner == "" || !x.until.After(c.Now)) {
			due = append(due, x)
		}
	}
	slices.SortStableFunc(due, func(a, b *notice) int { return a.NextAt.Compare(b.NextAt) })
	for _, x := range due {
		if len(out) == limit {
			break
		}
		x.owner, x.until = c.Owner, c.Now.Add(c.TTL)
		x.Attempts++
		out = append(out, x.public())
	}
	return out, nil
}

// SettleNotice implements store.Outbox.
func (s *Store) SettleNotice(ctx context.Context, st store.NoticeSettle) error {
	return s.SettleNotices(ctx, []store.NoticeSettle{st})
}

// SettleNotices implements store.Outbox.
func (s *Store) SettleNotices(ctx context.Context, ss []store.NoticeSettle) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, st := range ss {
		if err := s.settle(st); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// settle records one outcome; s.mu is held.
func (s *Store) settle(st store.NoticeSettle) error {
	if err := storekit.CheckSettle(st); err != nil {
		return err
	}
	x := s.outbox.byID[st.ID]
	if x == nil {
		return storekit.NoticeNotFound(st.ID)
	}
	if x.owner != st.Owner || x.State != store.NoticePending {
		return storekit.ClaimLost(st.ID, st.Owner)
	}
	x.owner, x.until = "", time.Time{}
	x.State, x.LastError, x.DeliveredTo = st.State, st.Error, slices.Clone(st.DeliveredTo)
	if st.State == store.NoticePending {
		x.NextAt = st.NextAt.UTC()
	} else {
		at := st.At.UTC()
		x.SettledAt = &at
	}
	return nil
}

// Notices implements store.Outbox.
func (s *Store) Notices(ctx context.Context, q store.NoticeQuery) ([]store.Notice, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	limit := storekit.NoticePageLimit(q.Limit)
	out := []store.Notice{}
	for i := len(s.outbox.notices) - 1; i >= 0 && len(out) < limit; i-- {
		x := s.outbox.notices[i]
		if (q.Before > 0 && x.Seq >= q.Before) || (q.State != "" && x.State != q.State) {
			continue
		}
		out = append(out, x.public())
	}
	return out, nil
}

// RetryNotice implements store.Outbox.
func (s *Store) RetryNotice(ctx context.Context, id string, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.outbox.byID[id]
	if x == nil {
		return storekit.NoticeNotFound(id)
	}
	if x.State != store.NoticeDead {
		return storekit.NotFailed(id, x.State)
	}
	x.State, x.Attempts, x.NextAt, x.SettledAt, x.owner = store.NoticePending, 0, now.UTC(), nil, ""
	return nil
}
