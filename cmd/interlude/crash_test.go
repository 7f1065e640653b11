package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/internal/crashpoint"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/sqlite"
	"github.com/interludehq/interlude/wire"
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
	alice := clienttest.New(t, dying.url, client.WithToken(aliceToken))
	res, err := alice.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "order-1", Input: map[string]any{"amount": 150}})
	if err != nil || res.Status != "interrupted" || len(res.Interrupts) != 1 {
		t.Fatalf("start: %+v, %v", res, err)
	}
	if _, err := alice.Resume(ctx, "order-1", res.Interrupts[0].ID, map[string]any{"approved": true}); err == nil {
		t.Fatal("the answer was acknowledged: the process did not die after committing it")
	}
	crashed(t, dying)

	// What the dead process left: the answer committed, the step not, and the
	// thread running, not interrupted without a question.
	m, err := storedMeta(dir, "order-1")
	if err != nil || m.Status != interlude.ThreadRunning || len(m.Interrupts) != 0 {
		t.Fatalf("after the crash the thread is %+v (%v); want running with no question", m, err)
	}

	fresh := startServerIn(t, dir, nil)
	alice = clienttest.New(t, fresh.url, client.WithToken(aliceToken))
	var th *wire.Thread
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
	clienttest.RefundFinishedOnce(t, alice, "order-1", "alice")
	clienttest.NoneListed(t, alice, "running", "interrupted", "failed")
}

// TestAServerFinishesAnAgentRunWhoseProcessDiedBetweenItsModelTurnAndItsTools
// kills `interlude serve` on SQLite right after the support agent's model turn
// commits, before its tool step does, and checks that a fresh server over the
// same file runs the run on by itself from that checkpoint: the thread reads
// running (not idle with a step due) until then, then waits for the refund's
// approval; the model's turn is not taken again, and the approval finishes the
// conversation.
func TestAServerFinishesAnAgentRunWhoseProcessDiedBetweenItsModelTurnAndItsTools(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	dying := startServerIn(t, dir, []string{crashpoint.Env + "=step"})
	alice := clienttest.New(t, dying.url, client.WithToken(aliceToken))
	message := []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "Please refund order A-1001"}}}}
	if _, err := alice.Invoke(ctx, client.InvokeRequest{Graph: "support-agent", ThreadID: "chat-1", Messages: message}); err == nil {
		t.Fatal("the run was acknowledged: the process did not die after the model's turn")
	}
	crashed(t, dying)

	m, err := storedMeta(dir, "chat-1")
	if err != nil || m.Status != interlude.ThreadRunning || m.Version != 1 {
		t.Fatalf("after the crash the thread is %+v (%v); want running at its first checkpoint", m, err)
	}

	fresh := startServerIn(t, dir, nil)
	alice = clienttest.New(t, fresh.url, client.WithToken(aliceToken))
	var th *wire.Thread
	finished := waitFor(15*time.Second, func() bool {
		if th, err = alice.Thread(ctx, "chat-1"); err != nil {
			return true
		}
		if th.Status == "idle" && len(th.Next) > 0 {
			t.Errorf("the thread reads idle with %v due", th.Next)
		}
		return th.Status != "running"
	})
	if err != nil || !finished {
		t.Fatalf("the fresh server did not run the thread on: %+v, %v\n%s", th, err, fresh.stderr.String())
	}
	if th.Status != "interrupted" || len(th.Interrupts) != 1 || th.Interrupts[0].Message != "Approve a refund of $150 for order A-1001?" {
		t.Fatalf("the thread reads %s with %d questions (%+v); want interrupted, asking to approve the refund", th.Status, len(th.Interrupts), th.Interrupts)
	}
	if n := assistantTurns(t, th.Messages); n != 1 {
		t.Fatalf("the transcript has %d assistant turns; want 1 (the model's turn not taken again)\n%s", n, th.Messages)
	}
	res, err := alice.Resume(ctx, "chat-1", th.Interrupts[0].ID, map[string]any{"action": "approve"})
	if err != nil || res.Status != "completed" {
		t.Fatalf("the approval: %+v, %v", res, err)
	}
	if th, err = alice.Thread(ctx, "chat-1"); err != nil || assistantTurns(t, th.Messages) != 2 || !strings.Contains(string(th.Messages), "Done: Refunded $150 on order A-1001.") {
		t.Fatalf("the finished conversation: %v\n%s", err, th.Messages)
	}
}

// assistantTurns counts the assistant messages of a transcript.
func assistantTurns(t *testing.T, messages json.RawMessage) int {
	t.Helper()
	var ms []struct {
		Role string `json:"role"`
	}
	if err := json.Unmarshal(messages, &ms); err != nil {
		t.Fatalf("the transcript: %v\n%s", err, messages)
	}
	n := 0
	for _, m := range ms {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// crashed waits for the server to die at its crash point.
func crashed(t *testing.T, dying *liveServer) {
	t.Helper()
	<-dying.done
	if code := dying.cmd.ProcessState.ExitCode(); code != crashpoint.ExitCode {
		t.Fatalf("the server exited with %d, want %d (the crash point)\n%s", code, crashpoint.ExitCode, dying.stderr.String())
	}
}

// storedMeta reads what the server's SQLite file holds about a thread.
func storedMeta(dir, thread string) (*store.Meta, error) {
	st, err := sqlite.Open(filepath.Join(dir, "serve.db"))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Meta(context.Background(), thread)
}

// TestAServerKilledAfterAnyCommitLosesNothingItAcknowledged kills `interlude
// serve` on SQLite (durability async, the default) right after each commit of
// a support-agent conversation in turn (its model turn, its pause for the
// refund's approval, the approval, the tools' step, the model's answer), and
// checks that a fresh server over the same file keeps everything the dead one
// acknowledged: an acknowledged question is still the one asked (or answered
// once), and the conversation ends as it would have, with the refund's
// approval given once and the model's turns not taken again.
func TestAServerKilledAfterAnyCommitLosesNothingItAcknowledged(t *testing.T) {
	message := []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "Please refund order A-1001"}}}}
	approve := map[string]any{"action": "approve"}
	for n := 1; n <= 5; n++ {
		t.Run(fmt.Sprintf("after commit %d", n), func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			dying := startServerIn(t, dir, []string{fmt.Sprintf("%s=#%d", crashpoint.Env, n)})
			alice := clienttest.New(t, dying.url, client.WithToken(aliceToken))
			asked := "" // the question the dead server acknowledged
			res, err := alice.Invoke(ctx, client.InvokeRequest{Graph: "support-agent", ThreadID: "chat-1", Messages: message})
			if err == nil {
				if res.Status != "interrupted" || len(res.Interrupts) != 1 {
					t.Fatalf("the start answered %+v; want the refund's question", res)
				}
				asked = res.Interrupts[0].ID
				if _, err := alice.Resume(ctx, "chat-1", asked, approve); err == nil {
					t.Fatalf("the approval was acknowledged: the server did not die after commit %d", n)
				}
			}
			crashed(t, dying)

			fresh := startServerIn(t, dir, nil)
			alice = clienttest.New(t, fresh.url, client.WithToken(aliceToken))
			var th *wire.Thread
			settled := waitFor(15*time.Second, func() bool {
				th, err = alice.Thread(ctx, "chat-1")
				return err != nil || th.Status != "running"
			})
			if err != nil || !settled {
				t.Fatalf("the fresh server did not settle the thread: %+v, %v\n%s", th, err, fresh.stderr.String())
			}
			if th.Status == "interrupted" {
				if len(th.Interrupts) != 1 || (asked != "" && th.Interrupts[0].ID != asked) {
					t.Fatalf("the thread asks %+v; want the question acknowledged before the crash (%q)", th.Interrupts, asked)
				}
				res, err := alice.Resume(ctx, "chat-1", th.Interrupts[0].ID, approve)
				if err != nil || res.Status != "completed" {
					t.Fatalf("the approval on the fresh server: %+v, %v", res, err)
				}
			} else if th.Status != "completed" && th.Status != "idle" {
				t.Fatalf("the thread reads %s; want it waiting for the approval or finished", th.Status)
			}
			if th, err = alice.Thread(ctx, "chat-1"); err != nil || assistantTurns(t, th.Messages) != 2 || !strings.Contains(string(th.Messages), "Done: Refunded $150 on order A-1001.") {
				t.Fatalf("the finished conversation: %v\n%s", err, th.Messages)
			}
			if by := clienttest.AnsweredBy(t, alice, "chat-1"); len(by) != 1 || by[0] != "alice" {
				t.Fatalf("the history holds answers by %q; want one, by alice", by)
			}
		})
	}
}
