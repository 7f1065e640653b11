package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// dyingStore commits only the given number of appends more (left), then
// refuses every one, as a store does to a process that died: what was
// committed before stays. A negative left commits all.
type dyingStore struct {
	*memory.Store
	left atomic.Int32
}

func (d *dyingStore) Append(ctx context.Context, a store.Append) error {
	if d.left.Load() == 0 {
		return errors.New("the process died")
	}
	d.left.Add(-1)
	return d.Store.Append(ctx, a)
}

func TestTheServerFinishesAStepWhoseRunDiedAfterTheAnswer(t *testing.T) {
	st := &dyingStore{}
	st.left.Store(-1 << 20)
	e := newEnv(t, setup{wrap: func(inner store.Store) store.Store { st.Store = inner.(*memory.Store); return st },
		opts: []server.Option{server.WithRecoveryWatch(0)}, tokens: []server.Token{admin, approver}})
	ctx := context.Background()
	started := e.start("refund", "r", `{"amount":5}`)
	id := started["interrupts"].([]any)[0].(map[string]any)["id"].(string)
	st.left.Store(1) // the answer commits; the step it starts does not
	if _, err := e.client(approver).Resume(ctx, "r", id, map[string]any{"approved": true}); err == nil {
		t.Fatal("the answer's run should have failed to commit its step")
	}
	st.left.Store(-1 << 20)
	th, err := e.client(admin).Thread(ctx, "r")
	if err != nil || th.Status != "running" || len(th.Interrupts) != 0 {
		t.Fatalf("before recovery the thread reads %+v (%v); want running, no question", th, err)
	}
	for status, want := range map[string]int{"interrupted": 0, "running": 1} {
		page, err := e.client(admin).Threads(ctx, client.ListOptions{Status: status})
		if err != nil || len(page.Threads) != want {
			t.Fatalf("listed as %s: %+v (%v); want %d", status, page, err, want)
		}
	}
	if n, err := e.srv.RecoverThreads(ctx); err != nil || n != 1 {
		t.Fatalf("RecoverThreads = %d, %v; want 1", n, err)
	}
	th, err = e.client(admin).Thread(ctx, "r")
	var v struct {
		Attempts int    `json:"attempts"`
		Outcome  string `json:"outcome"`
	}
	if err != nil || json.Unmarshal(th.Values, &v) != nil || th.Status != "idle" || v.Attempts != 2 || v.Outcome != "refunded" {
		t.Fatalf("after recovery the thread reads %+v (%v); want idle, refunded, attempts 2", th, err)
	}
	h, err := e.client(admin).History(ctx, "r", client.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, cp := range h.Checkpoints {
		for _, r := range cp.Resolved {
			by = append(by, r.Resolution.By)
		}
	}
	if len(by) != 1 || by[0] != approver.Name {
		t.Fatalf("history holds resolutions by %v; want one, by %s", by, approver.Name)
	}
	if n, err := e.srv.RecoverThreads(ctx); err != nil || n != 0 {
		t.Fatalf("a second RecoverThreads = %d, %v; want 0", n, err)
	}
}
