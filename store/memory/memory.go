// Package memory is a Store that keeps threads in process memory. It is what a
// graph compiled without a store uses; everything is lost when the process exits.
package memory

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

// Store keeps threads in memory. The zero value is not usable; call New.
type Store struct {
	mu      sync.RWMutex
	threads map[string]*thread
	closed  bool
	outbox  outbox
	docs    map[docKey]store.Document
}

type docKey struct{ thread, kind, key string }

type thread struct {
	meta      store.Meta
	records   []store.Record
	snapshots []store.Snapshot // in version order
	expires   *time.Time       // storekit.EarliestExpiry(meta), taken when meta was appended
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.ExpiryIndex   = (*Store)(nil)
	_ store.RecoveryIndex = (*Store)(nil)
	_ store.Outbox        = (*Store)(nil)
	_ store.Documents     = (*Store)(nil)
	_ store.Copier        = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{threads: make(map[string]*thread), docs: make(map[docKey]store.Document)}
}

// Append implements store.Store.
func (s *Store) Append(ctx context.Context, a store.Append) error {
	if err := storekit.CheckAppend(a); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[a.ThreadID]
	var version int64
	if t != nil {
		version = t.meta.Version
	}
	if version != a.Expect {
		return storekit.Conflict(a.ThreadID, a.Expect, version)
	}
	now := time.Now().UTC()
	if t == nil {
		// Room for a few records from the start: a thread's first run
		// commits several (a pause and its answer, say).
		t = &thread{records: make([]store.Record, 0, 4)}
		t.meta.CreatedAt = now
		if !a.Meta.CreatedAt.IsZero() {
			t.meta.CreatedAt = a.Meta.CreatedAt.UTC()
		}
		s.threads[a.ThreadID] = t
	}
	created := t.meta.CreatedAt
	t.meta = cloneMeta(a.Meta)
	t.meta.ThreadID = a.ThreadID
	t.meta.CreatedAt = created
	if t.meta.UpdatedAt.IsZero() {
		t.meta.UpdatedAt = now
	}
	for _, r := range a.Records {
		if !a.Handover {
			r.Data = slices.Clone(r.Data)
		}
		if r.CreatedAt.IsZero() {
			r.CreatedAt = now
		}
		t.records = append(t.records, r)
	}
	t.meta.Version = a.Records[len(a.Records)-1].Version
	t.expires = storekit.EarliestExpiry(t.meta)
	if a.Snapshot != nil {
		snap := *a.Snapshot
		if !a.Handover {
			snap.Data = slices.Clone(snap.Data)
		}
		t.snapshots = append(t.snapshots, snap)
	}
	s.outbox.add(a, now)
	for _, w := range a.Documents {
		d := w.Document
		d.ThreadID = a.ThreadID
		if w.Delete {
			s.deleteDocument(d, w.IfUnchanged)
		} else {
			s.putDocument(d, now)
		}
	}
	return nil
}

// readThread returns what read makes of thread threadID, read under the read
// lock, or an error matching interlude.ErrNotFound if there is no such thread.
func readThread[T any](ctx context.Context, s *Store, threadID string, read func(t *thread) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.threads[threadID]
	if t == nil {
		return zero, storekit.NotFound(threadID)
	}
	return read(t)
}

// cloneMeta returns a copy of m that shares no slice with it, so that neither the
// caller nor the store sees the other's later changes.
func cloneMeta(m store.Meta) store.Meta {
	m.Interrupts = slices.Clone(m.Interrupts)
	return m
}

// Load implements store.Store.
func (s *Store) Load(ctx context.Context, threadID string) (*store.Loaded, error) {
	return readThread(ctx, s, threadID, func(t *thread) (*store.Loaded, error) {
		out := &store.Loaded{Meta: cloneMeta(t.meta)}
		var after int64
		if n := len(t.snapshots); n > 0 {
			snap := t.snapshots[n-1]
			if err := storekit.CheckFormat(threadID, snap.Version, snap.Format); err != nil {
				return nil, err
			}
			out.Snapshot = &snap
			after = snap.Version
		}
		var err error
		out.Records, err = recordsBetween(threadID, t.records, after, 0, 0)
		return out, err
	})
}

func recordsBetween(threadID string, recs []store.Record, after, before int64, limit int) ([]store.Record, error) {
	var out []store.Record
	for _, r := range recs[min(int(after), len(recs)):] {
		if before > 0 && r.Version > before {
			break
		}
		if err := storekit.CheckFormat(threadID, r.Version, r.Format); err != nil {
			return nil, err
		}
		out = append(out, r)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// Version implements store.Store.
func (s *Store) Version(ctx context.Context, threadID string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if t := s.threads[threadID]; t != nil {
		return t.meta.Version, nil
	}
	return 0, nil
}

// Records implements store.Store.
func (s *Store) Records(ctx context.Context, threadID string, after, before int64, limit int) ([]store.Record, error) {
	return readThread(ctx, s, threadID, func(t *thread) ([]store.Record, error) {
		return recordsBetween(threadID, t.records, max(after, 0), before, limit)
	})
}

// History implements store.Store.
func (s *Store) History(ctx context.Context, threadID string, before int64, limit int) (*store.HistoryPage, error) {
	return readThread(ctx, s, threadID, func(t *thread) (*store.HistoryPage, error) {
		newest := int64(len(t.records)) // record v is t.records[v-1]
		if before > 0 {
			newest = min(newest, before-1)
		}
		oldest := int64(1)
		if limit > 0 {
			oldest = max(oldest, newest-int64(limit)+1)
		}
		out := &store.HistoryPage{}
		for v := newest; v >= oldest; v-- {
			r := t.records[v-1]
			if err := storekit.CheckFormat(threadID, r.Version, r.Format); err != nil {
				return nil, err
			}
			out.Records = append(out.Records, r)
		}
		if len(out.Records) == 0 {
			return out, nil
		}
		i, _ := slices.BinarySearchFunc(t.snapshots, oldest, func(sn store.Snapshot, v int64) int { return cmp.Compare(sn.Version, v) })
		var after int64
		if i > 0 {
			snap := t.snapshots[i-1]
			if err := storekit.CheckFormat(threadID, snap.Version, snap.Format); err != nil {
				return nil, err
			}
			out.Base, after = &snap, snap.Version
		}
		if after < oldest-1 {
			var err error
			if out.Lead, err = recordsBetween(threadID, t.records, after, oldest-1, 0); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
}

// Meta implements store.Store.
func (s *Store) Meta(ctx context.Context, threadID string) (*store.Meta, error) {
	return readThread(ctx, s, threadID, func(t *thread) (*store.Meta, error) {
		m := cloneMeta(t.meta)
		return &m, nil
	})
}

// Head implements store.Header.
func (s *Store) Head(ctx context.Context, threadID string) (*store.Meta, error) {
	return readThread(ctx, s, threadID, func(t *thread) (*store.Meta, error) {
		m := t.meta
		m.Interrupts = nil
		return &m, nil
	})
}

// List implements store.Store. It scans every thread, which is fine for the memory
// store's purposes (tests, small embedded uses).
func (s *Store) List(ctx context.Context, q store.Query) (*store.Page, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var after *storekit.Cursor
	if q.Cursor != "" {
		c, err := storekit.DecodeCursor(q.Cursor)
		if err != nil {
			return nil, err
		}
		after = &c
	}
	s.mu.RLock()
	var metas []store.Meta
	for _, t := range s.threads {
		m := t.meta
		if (q.Status != "" && m.Status != q.Status) || (q.Graph != "" && m.Graph != q.Graph) {
			continue
		}
		if after != nil && !storekit.OnLaterPage(m.UpdatedAt, m.ThreadID, *after) {
			continue
		}
		metas = append(metas, cloneMeta(m))
	}
	s.mu.RUnlock()
	slices.SortFunc(metas, func(a, b store.Meta) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ThreadID, a.ThreadID)
	})
	limit := storekit.PageLimit(q)
	return storekit.NewPage(metas, limit), nil
}

// Expired implements store.ExpiryIndex. Like List it scans every thread, which
// suits the memory store's purposes (tests, small embedded uses); threads whose
// questions expire at the same time come in thread id order.
func (s *Store) Expired(ctx context.Context, now time.Time, graphs []string, limit int) ([]store.Meta, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit = storekit.ExpiredLimit(limit)
	type due struct {
		at   time.Time
		meta store.Meta
	}
	var dues []due
	s.mu.RLock()
	for _, t := range s.threads {
		if t.expires != nil && !t.expires.After(now) && (len(graphs) == 0 || slices.Contains(graphs, t.meta.Graph)) {
			dues = append(dues, due{*t.expires, cloneMeta(t.meta)})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(dues, func(a, b due) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.meta.ThreadID, b.meta.ThreadID)
	})
	out := make([]store.Meta, 0, min(limit, len(dues)))
	for _, d := range dues[:min(limit, len(dues))] {
		out = append(out, d.meta)
	}
	return out, nil
}

// Unfinished implements store.RecoveryIndex. Like List it scans every thread;
// threads updated at the same time come in thread id order.
func (s *Store) Unfinished(ctx context.Context, graphs []string, limit int) ([]store.Meta, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit = storekit.UnfinishedLimit(limit)
	var metas []store.Meta
	s.mu.RLock()
	for _, t := range s.threads {
		if t.meta.Status == interlude.ThreadRunning && (len(graphs) == 0 || slices.Contains(graphs, t.meta.Graph)) {
			metas = append(metas, cloneMeta(t.meta))
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(metas, func(a, b store.Meta) int {
		if c := a.UpdatedAt.Compare(b.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ThreadID, b.ThreadID)
	})
	return metas[:min(limit, len(metas))], nil
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.threads, threadID)
	for k := range s.docs {
		if k.thread == threadID {
			delete(s.docs, k)
		}
	}
	return nil
}

// CopyThread implements store.Copier.
func (s *Store) CopyThread(ctx context.Context, from, to string) error {
	if err := storekit.CheckCopy(from, to); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.threads[from]
	if src == nil {
		return storekit.NotFound(from)
	}
	if s.threads[to] != nil {
		return storekit.CopyTaken(to)
	}
	now := time.Now().UTC()
	t := &thread{meta: cloneMeta(src.meta), expires: src.expires}
	t.meta.ThreadID, t.meta.CreatedAt, t.meta.UpdatedAt = to, now, now
	for _, r := range src.records {
		r.Data = slices.Clone(r.Data)
		t.records = append(t.records, r)
	}
	for _, sn := range src.snapshots {
		sn.Data = slices.Clone(sn.Data)
		t.snapshots = append(t.snapshots, sn)
	}
	s.threads[to] = t
	return nil
}

// PutDocument implements store.Documents.
func (s *Store) PutDocument(ctx context.Context, d store.Document) error {
	if err := storekit.CheckDocument(d.ThreadID, d.Kind); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putDocument(d, time.Now().UTC())
	return nil
}

// putDocument writes d, under the write lock.
func (s *Store) putDocument(d store.Document, now time.Time) {
	k := docKey{d.ThreadID, d.Kind, d.Key}
	d.Data = slices.Clone(d.Data)
	if old, ok := s.docs[k]; ok {
		d.CreatedAt = old.CreatedAt
	} else if d.CreatedAt.IsZero() {
		d.CreatedAt = now
	}
	if d.UpdatedAt.IsZero() {
		d.UpdatedAt = now
	}
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	s.docs[k] = d
}

// deleteDocument forgets the document d names, under the write lock; with
// ifUnchanged, only if it holds d.Data.
func (s *Store) deleteDocument(d store.Document, ifUnchanged bool) {
	k := docKey{d.ThreadID, d.Kind, d.Key}
	if old, ok := s.docs[k]; ok && (!ifUnchanged || bytes.Equal(old.Data, d.Data)) {
		delete(s.docs, k)
	}
}

// Document implements store.Documents.
func (s *Store) Document(ctx context.Context, threadID, kind, key string) (*store.Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, ok := s.docs[docKey{threadID, kind, key}]
	if !ok {
		return nil, storekit.DocumentNotFound(threadID, kind, key)
	}
	d.Data = slices.Clone(d.Data)
	return &d, nil
}

// Documents implements store.Documents. It scans every document, which suits
// the memory store's purposes (tests, small embedded uses).
func (s *Store) Documents(ctx context.Context, q store.DocumentQuery) ([]store.Document, error) {
	if err := storekit.CheckDocumentQuery(q); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []store.Document
	s.mu.RLock()
	for k, d := range s.docs {
		if k.kind == q.Kind && (q.ThreadID == "" || k.thread == q.ThreadID) {
			d.Data = slices.Clone(d.Data)
			out = append(out, d)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b store.Document) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		if c := cmp.Compare(b.ThreadID, a.ThreadID); c != 0 {
			return c
		}
		return cmp.Compare(b.Key, a.Key)
	})
	out = out[min(q.Offset, len(out)):]
	return out[:min(store.DocumentLimit(q), len(out))], nil
}

// DeleteDocument implements store.Documents.
func (s *Store) DeleteDocument(ctx context.Context, threadID, kind, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleteDocument(store.Document{ThreadID: threadID, Kind: kind, Key: key}, false)
	return nil
}

// Close implements store.Store.
func (s *Store) Close() error { return nil }
