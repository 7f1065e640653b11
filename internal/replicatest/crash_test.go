package replicatest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/internal/crashpoint"
	"github.com/interludehq/interlude/wire"
)

// aliceToken is the token of the person who answers in the crash tests.
const aliceToken = "alice-secret-token-0000"

// tokensFile writes a tokens file naming alice, who may run and approve.
func tokensFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("alice:"+aliceToken+":run,approve\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// asAlice returns a client of r that sends alice's token.
func asAlice(t testing.TB, r *replica) *client.Client {
	return clienttest.New(t, r.url, client.WithHTTPClient(httpClient), client.WithToken(aliceToken))
}

// crashed waits for r to die at its crash point and fails the test if it
// exited otherwise.
func crashed(t *testing.T, r *replica) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("replica %s did not die at its crash point", r.name)
	}
	r.dead.Store(true)
	if code := r.cmd.ProcessState.ExitCode(); code != crashpoint.ExitCode {
		t.Fatalf("replica %s exited with %d, want %d (the crash point)\n%s", r.name, code, crashpoint.ExitCode, r.out.String())
	}
}

// TestAReplicaKilledRightAfterAnAnswerLeavesTheStepToAnother kills a replica
// right after it commits an answer, before the step the answer starts commits,
// and checks that another replica finishes the step by itself once the dead
// run's lease expires: the answer takes effect once, the code after the
// question runs once, the history holds the one answer with who gave it, and
// the thread never reads as interrupted without a question.
func TestAReplicaKilledRightAfterAnAnswerLeavesTheStepToAnother(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	tokens := tokensFile(t)
	dying := launchWith(t, "dying", dsn, schema, time.Second, []string{crashpoint.Env + "=resolve"}, "--tokens", tokens)
	other := launchWith(t, "other", dsn, schema, time.Second, nil, "--tokens", tokens)
	dying.waitUp(t)
	other.waitUp(t)
	ctx := context.Background()
	res, err := asAlice(t, other).Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "t", Input: map[string]any{"amount": 5}})
	if err != nil || res.Status != "interrupted" || len(res.Interrupts) != 1 {
		t.Fatalf("start: %+v, %v", res, err)
	}
	if _, err := asAlice(t, dying).Resume(ctx, "t", res.Interrupts[0].ID, map[string]any{"approved": true}); err == nil {
		t.Fatal("the answer was acknowledged: the replica did not die after committing it")
	}
	crashed(t, dying)

	alice := asAlice(t, other)
	finishedByAnother(t, other, "t")
	clienttest.RefundFinishedOnce(t, alice, "t", "alice")
	clienttest.NoneListed(t, alice, "running", "interrupted", "failed")
}

// TestADeadReplicasPausedThreadReadsInterruptedWithItsQuestion kills a replica
// right after it commits a pause, before it gives the thread's lease up. Until
// the lease expires the thread is busy; then it reads interrupted with its
// question, is listed in the inbox (not as failed), its listeners are told so,
// and any replica takes the answer.
func TestADeadReplicasPausedThreadReadsInterruptedWithItsQuestion(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	dying := launchWith(t, "dying", dsn, schema, 2*time.Second, []string{crashpoint.Env + "=pause"})
	other := launch(t, "other", dsn, schema, 2*time.Second)
	dying.waitUp(t)
	other.waitUp(t)
	ctx := context.Background()
	if _, err := dying.client.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "t", Input: map[string]any{"amount": 5}}); err == nil {
		t.Fatal("the start was acknowledged: the replica did not die after committing the pause")
	}
	crashed(t, dying)
	// A listener on the other replica hears how the thread reads once the
	// dead run's lease expires. (The expiry is 2 s away: plenty to subscribe.)
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	sub, err := other.client.Subscribe(wctx, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	// Meanwhile the thread reads as running, with its question, and an
	// answer is refused as busy.
	th, err := other.client.Thread(ctx, "t")
	if err != nil || th.Status != "running" || len(th.Interrupts) != 1 {
		t.Fatalf("while the dead run's lease runs, the thread reads %+v, %v; want running with its question", th, err)
	}
	_, err = other.client.Resume(ctx, "t", th.Interrupts[0].ID, map[string]any{"approved": true})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusConflict || ce.Code != "thread_busy" || !strings.Contains(ce.Message, "try again") {
		t.Fatalf("an answer while the dead run's lease runs: %v; want 409 thread_busy saying to try again", err)
	}
	if host, _ := os.Hostname(); host != "" && strings.Contains(ce.Message, host) {
		t.Fatalf("thread_busy names the holder's host to a client: %q", ce.Message)
	}
	var end *client.Event
	for ev, err := range sub.Events() {
		if err != nil {
			t.Fatalf("listening for the dead run's end: %v", err)
		}
		if ev.Event == "end" {
			end = &ev
			break
		}
	}
	sub.Close()
	var ended struct {
		Status string `json:"status"`
	}
	if end == nil || json.Unmarshal(end.Data, &ended) != nil || ended.Status != "interrupted" {
		t.Fatalf("a listener was not told the thread waits for its answer: %+v", end)
	}
	th, err = other.client.Thread(ctx, "t")
	if err != nil || th.Status != "interrupted" || len(th.Interrupts) != 1 {
		t.Fatalf("after the lease expired the thread reads %+v, %v; want interrupted with its question", th, err)
	}
	inbox, err := other.client.Threads(ctx, client.ListOptions{Status: "interrupted"})
	if err != nil || len(inbox.Threads) != 1 || inbox.Threads[0].ThreadID != "t" || len(inbox.Threads[0].Interrupts) != 1 {
		t.Fatalf("the inbox: %+v, %v; want the thread with its question", inbox, err)
	}
	if failed, err := other.client.Threads(ctx, client.ListOptions{Status: "failed"}); err != nil || len(failed.Threads) != 0 {
		t.Fatalf("listed as failed: %+v, %v; want none", failed, err)
	}
	res, err := other.client.Resume(ctx, "t", th.Interrupts[0].ID, map[string]any{"approved": true})
	if err != nil || res.Status != "completed" {
		t.Fatalf("the answer: %+v, %v", res, err)
	}
}

// TestAReplicaKilledBetweenStepsLeavesTheRunToAnother kills a replica right
// after it commits a step after which a node is due (the parallel graph's
// answered branches, before the join), and checks that another replica runs
// the thread on by itself once the dead run's lease expires: the thread reads
// running meanwhile, never failed nor idle with a node due, the committed step
// is not run again (branch c ran once), and the join completes it.
func TestAReplicaKilledBetweenStepsLeavesTheRunToAnother(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	tokens := tokensFile(t)
	dying := launchWith(t, "dying", dsn, schema, time.Second, []string{crashpoint.Env + "=step"}, "--tokens", tokens)
	other := launchWith(t, "other", dsn, schema, time.Second, nil, "--tokens", tokens)
	dying.waitUp(t)
	other.waitUp(t)
	ctx := context.Background()
	res, err := asAlice(t, other).Invoke(ctx, client.InvokeRequest{Graph: "parallel", ThreadID: "p", Input: map[string]any{}})
	if err != nil || res.Status != "interrupted" || len(res.Interrupts) != 2 {
		t.Fatalf("start: %+v, %v", res, err)
	}
	var answers []interlude.Resolution
	for _, q := range res.Interrupts {
		answers = append(answers, interlude.Resolve(true).For(q.ID))
	}
	if _, err := asAlice(t, dying).Respond(ctx, "p", answers); err == nil {
		t.Fatal("the answers were acknowledged: the replica did not die after the step")
	}
	crashed(t, dying)

	alice := asAlice(t, other)
	th := finishedByAnother(t, other, "p")
	var v struct {
		CRuns   int      `json:"c_runs"`
		Outcome []string `json:"outcome"`
	}
	if err := json.Unmarshal(th.Values, &v); err != nil || th.Status != "idle" || v.CRuns != 1 || len(v.Outcome) != 2 || v.Outcome[0] != "a" || v.Outcome[1] != "b" {
		t.Fatalf("the finished thread: status %s, values %s; want idle, a and b approved, c run once", th.Status, th.Values)
	}
	for _, status := range []interlude.ThreadStatus{"running", "interrupted", "failed"} {
		page, err := alice.Threads(ctx, client.ListOptions{Status: status})
		if err != nil || len(page.Threads) != 0 {
			t.Errorf("listed as %s: %+v, %v; want none", status, page, err)
		}
	}
}

// finishedByAnother polls the other replica until the thread no longer reads
// running, failing if it ever reads as a thread in limbo would: failed, idle
// with a node due, or interrupted without a question.
func finishedByAnother(t *testing.T, other *replica, thread string) *wire.Thread {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		th, err := asAlice(t, other).Thread(context.Background(), thread)
		if err != nil {
			t.Fatal(err)
		}
		if th.Status == "failed" || (th.Status == "idle" && len(th.Next) > 0) || (th.Status == "interrupted" && len(th.Interrupts) == 0) {
			t.Fatalf("the thread reads %s (next %v, %d questions); want running until another replica finishes it", th.Status, th.Next, len(th.Interrupts))
		}
		if th.Status != "running" {
			return th
		}
		if time.Now().After(deadline) {
			t.Fatalf("the other replica did not finish the thread: %+v\n%s", th, other.out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling another process
	}
}
