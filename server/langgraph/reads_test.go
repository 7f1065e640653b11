package langgraph_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// readCounting is a memory store that counts the reads a request makes of a
// thread and of the documents filed under it.
type readCounting struct {
	*memory.Store
	reads atomic.Int64
}

func (s *readCounting) Load(ctx context.Context, id string) (*store.Loaded, error) {
	s.reads.Add(1)
	return s.Store.Load(ctx, id)
}

func (s *readCounting) Meta(ctx context.Context, id string) (*store.Meta, error) {
	s.reads.Add(1)
	return s.Store.Meta(ctx, id)
}

func (s *readCounting) Head(ctx context.Context, id string) (*store.Meta, error) {
	s.reads.Add(1)
	return s.Store.Head(ctx, id)
}

func (s *readCounting) Document(ctx context.Context, id, kind, key string) (*store.Document, error) {
	s.reads.Add(1)
	return s.Store.Document(ctx, id, kind, key)
}

// TestARunOnAStoredThreadReadsItOnce checks that a run with input on a thread
// the store keeps reads the store once (holding the thread), not its record
// among the threads created without a run first; that the first run on a
// thread this process created without a run, in a store of its own, reads it
// once too; and that a run on a thread deleted since, or on none, is still
// told apart.
func TestARunOnAStoredThreadReadsItOnce(t *testing.T) {
	st := &readCounting{Store: memory.New()}
	srv := refundServer(t, st)
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	s := &lgServer{t: t, url: hs.URL}
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	s.must(200, "POST", "/threads", map[string]any{}, &th)
	wait := "/threads/" + th.ThreadID + "/runs/wait"
	input := map[string]any{"input": map[string]any{"amount": 150}, "assistant_id": "refund"}
	resume := map[string]any{"command": map[string]any{"resume": map[string]any{"approved": true}}, "assistant_id": "refund"}
	st.reads.Store(0)
	s.must(200, "POST", wait, input, nil)
	if n := st.reads.Load(); n != 1 {
		t.Errorf("the first run on a thread created here without a run read the store %d times, want 1 (the thread)", n)
	}
	s.must(200, "POST", wait, resume, nil)
	st.reads.Store(0)
	s.must(200, "POST", wait, input, nil)
	if n := st.reads.Load(); n != 1 {
		t.Errorf("a run on a stored thread read the store %d times, want 1", n)
	}
	s.must(404, "POST", "/threads/nope/runs/wait", input, nil)
	s.must(404, "GET", "/threads/nope", nil, nil)
	s.must(200, "POST", "/threads", map[string]any{}, &th)
	s.must(204, "DELETE", "/threads/"+th.ThreadID, nil, nil)
	s.must(404, "POST", "/threads/"+th.ThreadID+"/runs/wait", input, nil)
}

// sharedStore is a memory store that says it is shared by several processes,
// as a store.Leaser is: each lease is granted, and reads the thread.
type sharedStore struct {
	*readCounting
}

type grantedLease struct {
	graph   string
	version int64
	loaded  *store.Loaded
}

func (l *grantedLease) Thread() (string, int64)           { return l.graph, l.version }
func (l *grantedLease) Loaded() *store.Loaded             { return l.loaded }
func (l *grantedLease) Renew(ctx context.Context) error   { return nil }
func (l *grantedLease) Release(ctx context.Context) error { return nil }

func (s sharedStore) Lease(ctx context.Context, req store.LeaseRequest) (store.Lease, error) {
	l := &grantedLease{}
	ld, err := s.Load(ctx, req.ThreadID)
	switch {
	case errors.Is(err, interlude.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		l.graph, l.version = ld.Meta.Graph, ld.Meta.Version
		if req.Load && (l.version != req.Cached || !ld.Meta.CreatedAt.Equal(req.CachedCreatedAt)) {
			l.loaded = ld
		}
	}
	return l, nil
}

// TestAThreadAnotherReplicaDeletedIsNotRun checks that on a store shared by
// several processes, the first run on a thread this process created without
// a run reads its record, so that a thread another process deleted meanwhile
// is refused rather than created again.
func TestAThreadAnotherReplicaDeletedIsNotRun(t *testing.T) {
	st := sharedStore{&readCounting{Store: memory.New()}}
	var urls []string
	for range 2 {
		srv := refundServer(t, st)
		t.Cleanup(func() { srv.Close() })
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		urls = append(urls, hs.URL)
	}
	a, b := &lgServer{t: t, url: urls[0]}, &lgServer{t: t, url: urls[1]}
	input := map[string]any{"input": map[string]any{"amount": 150}, "assistant_id": "refund"}
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	a.must(200, "POST", "/threads", map[string]any{}, &th)
	b.must(204, "DELETE", "/threads/"+th.ThreadID, nil, nil)
	a.must(404, "POST", "/threads/"+th.ThreadID+"/runs/wait", input, nil)
	a.must(404, "GET", "/threads/"+th.ThreadID, nil, nil)
	a.must(200, "POST", "/threads", map[string]any{}, &th)
	a.must(200, "POST", "/threads/"+th.ThreadID+"/runs/wait", input, nil)
}
