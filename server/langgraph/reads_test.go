package langgraph_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"

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
// among the threads created without a run first, and that a run on a thread
// created without a run, or on none, still tells them apart.
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
	if n := st.reads.Load(); n != 2 {
		t.Errorf("the first run on a thread created without a run read the store %d times, want 2 (the thread, then its record)", n)
	}
	s.must(200, "POST", wait, resume, nil)
	st.reads.Store(0)
	s.must(200, "POST", wait, input, nil)
	if n := st.reads.Load(); n != 1 {
		t.Errorf("a run on a stored thread read the store %d times, want 1", n)
	}
	s.must(404, "POST", "/threads/nope/runs/wait", input, nil)
	s.must(404, "GET", "/threads/nope", nil, nil)
}
