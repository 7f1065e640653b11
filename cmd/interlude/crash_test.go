package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/internal/crashpoint"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/sqlite"
)

// TestAServerFinishesAnAnswerWhoseProcessDiedBeforeItsStep kills `interlude
// serve` on SQLite right after it commits an answer, before the step the
// answer starts commits, and checks that a fresh server over the same file
// finishes the step by itself: the answer takes effect once, the code after the
// question runs once, the history holds the one answer with who gave it, and the
// thread never reads as interrupted without a question.
func TestAServerFinishesAnAnswerWhoseProcessDiedBeforeItsStep(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	dying := startServerIn(t, dir, []string{crashpoint.Env + "=resolve"})
	alice := client.New(dying.url, client.WithToken(aliceToken))
	res, err := alice.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "order-1", Input: map[string]any{"amount": 150}})
	if err != nil || res.Status != "interrupted" || len(res.Interrupts) != 1 {
		t.Fatalf("start: %+v, %v", res, err)
	}
	if _, err := alice.Resume(ctx, "order-1", res.Interrupts[0].ID, map[string]any{"approved": true}); err == nil {
		t.Fatal("the answer was acknowledged: the process did not die after committing it")
	}
	<-dying.done
	if code := dying.cmd.ProcessState.ExitCode(); code != crashpoint.ExitCode {
		t.Fatalf("the server exited with %d, want %d (the crash point)\n%s", code, crashpoint.ExitCode, dying.stderr.String())
	}

	// What the dead process left: the answer committed, the step not, and the
	// thread running, not interrupted without a question.
	st, err := sqlite.Open(filepath.Join(dir, "serve.db"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Meta(ctx, "order-1")
	st.Close()
	if err != nil || m.Status != store.StatusRunning || len(m.Interrupts) != 0 {
		t.Fatalf("after the crash the thread is %+v (%v); want running with no question", m, err)
	}

	fresh := startServerIn(t, dir, nil)
	alice = client.New(fresh.url, client.WithToken(aliceToken))
	var th *client.Thread
	finished := waitFor(15*time.Second, func() bool {
		if th, err = alice.Thread(ctx, "order-1"); err != nil {
			return true
		}
		if th.Status == "interrupted" && len(th.Interrupts) == 0 {
			t.Errorf("the thread reads interrupted without a question: %+v", th)
		}
		return th.Status != "running"
	})
	if err != nil || !finished {
		t.Fatalf("the fresh server did not finish the thread: %+v, %v\n%s", th, err, fresh.stderr.String())
	}
	var v struct {
		Attempts int    `json:"attempts"`
		Outcome  string `json:"outcome"`
	}
	if err := json.Unmarshal(th.Values, &v); err != nil || th.Status != "idle" || v.Attempts != 2 || v.Outcome != "refunded" || len(th.Interrupts) != 0 {
		t.Fatalf("the finished thread: status %s, values %s; want idle, refunded, its node started twice", th.Status, th.Values)
	}
	h, err := alice.History(ctx, "order-1", client.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, cp := range h.Checkpoints {
		for _, r := range cp.Resolved {
			by = append(by, r.Resolution.By)
		}
	}
	if len(by) != 1 || by[0] != "alice" {
		t.Fatalf("the history holds answers by %q; want one, by alice", by)
	}
	for _, status := range []string{"running", "interrupted", "failed"} {
		page, err := alice.Threads(ctx, client.ListOptions{Status: status})
		if err != nil || len(page.Threads) != 0 {
			t.Errorf("listed as %s: %+v, %v; want none", status, page, err)
		}
	}
}
