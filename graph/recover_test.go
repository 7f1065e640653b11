package graph_test

import (
	"context"
	"errors"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// dieAfterAnswer pauses thread id on a store whose process "dies" right after
// committing the answer (the step's commit fails), and returns the store.
func dieAfterAnswer(t *testing.T, id string) *memory.Store {
	t.Helper()
	ctx := context.Background()
	mem := memory.New()
	dying := &failingStore{Store: mem, left: 2} // the pause, then the answer
	app := refundGraph(t, dying)
	res, err := app.Invoke(ctx, id, graph.Input(refundState{Amount: 9}))
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("start: %v %+v", err, res)
	}
	answer := graph.Respond(map[string]interlude.Resolution{res.Interrupts[0].ID: interlude.Resolve(map[string]any{"approved": true})})
	if _, err := app.Invoke(interlude.WithActor(ctx, "alice"), id, answer); err == nil {
		t.Fatal("the step's commit should have failed")
	}
	return mem
}

func TestAnAnsweredThreadWhoseRunDiedReadsRunningNotInterruptedWithoutQuestion(t *testing.T) {
	ctx := context.Background()
	mem := dieAfterAnswer(t, "d")
	snap, err := refundGraph(t, mem).State(ctx, "d")
	if err != nil || snap.Status != interlude.ThreadRunning || len(snap.Interrupts) != 0 {
		t.Fatalf("the thread reads %v: %+v; want running with no question", err, snap)
	}
	inbox, err := mem.List(ctx, store.Query{Status: interlude.ThreadInterrupted})
	if err != nil || len(inbox.Threads) != 0 {
		t.Fatalf("the inbox lists %v %+v; want nothing", err, inbox)
	}
	unfinished, err := mem.Unfinished(ctx, nil, 0)
	if err != nil || len(unfinished) != 1 || unfinished[0].ThreadID != "d" {
		t.Fatalf("Unfinished lists %v %+v; want d", err, unfinished)
	}
}

func TestRecoverFinishesTheAnsweredStepOnceWithTheRecordedAnswer(t *testing.T) {
	ctx := context.Background()
	mem := dieAfterAnswer(t, "d")
	restarted := refundGraph(t, mem)
	res, err := restarted.Invoke(ctx, "d", graph.Recover())
	if err != nil || res.Status != interlude.RunCompleted || res.Values.Outcome != "refunded" || res.Values.Attempts != 2 {
		t.Fatalf("recover: %v %+v; want completed, refunded, the node's body started twice", err, res)
	}
	h, err := restarted.History(ctx, "d", graph.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, cp := range h {
		for _, a := range cp.Resolved {
			by = append(by, a.Resolution.By)
		}
	}
	if len(by) != 1 || by[0] != "alice" {
		t.Fatalf("history holds resolutions by %v; want one, by alice", by)
	}
	if left, _ := mem.Unfinished(ctx, nil, 0); len(left) != 0 {
		t.Fatalf("still unfinished: %+v", left)
	}
	// Nothing is left to finish: a second recovery changes nothing.
	if _, err := restarted.Invoke(ctx, "d", graph.Recover()); !errors.Is(err, interlude.ErrConflict) {
		t.Fatalf("a second recover: %v; want conflict", err)
	}
	if snap, _ := restarted.State(ctx, "d"); snap.Checkpoint != res.Checkpoint || snap.Values.Attempts != 2 {
		t.Fatalf("the second recover changed the thread: %+v", snap)
	}
}

func TestInputToAThreadWithAnUnfinishedAnsweredStepIsRefused(t *testing.T) {
	ctx := context.Background()
	mem := dieAfterAnswer(t, "d")
	app := refundGraph(t, mem)
	_, err := app.Invoke(ctx, "d", graph.Input(refundState{Amount: 1}))
	var ie *interlude.Error
	if !errors.As(err, &ie) || ie.Code != interlude.CodeThreadBusy {
		t.Fatalf("input: %v; want thread_busy", err)
	}
	// A plain continue finishes the step, as the refusal says.
	res, err := app.Invoke(ctx, "d", graph.Continue())
	if err != nil || res.Status != interlude.RunCompleted || res.Values.Outcome != "refunded" {
		t.Fatalf("continue: %v %+v", err, res)
	}
}

func TestRecoverLeavesAStepThisProcessRunsToItsRun(t *testing.T) {
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	g := graph.New[refundState]()
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		if _, err := interlude.Interrupt(ctx, interlude.Request{Message: "ok?"}); err != nil {
			return s, err
		}
		entered <- struct{}{}
		<-release
		return refundState{Outcome: "refunded"}, nil
	})
	g.AddEdge(graph.Start, "refund")
	app, err := g.Compile(graph.WithStore(memory.New()), graph.WithName("slow"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Invoke(ctx, "s", graph.Input(refundState{})); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := app.Invoke(ctx, "s", graph.Resume(interlude.Resolve(true)))
		done <- err
	}()
	<-entered // the answer is committed; its run is in the node
	if _, err := app.Invoke(ctx, "s", graph.Recover()); !errors.Is(err, interlude.ErrThreadBusy) {
		t.Fatalf("recover during the answer's run: %v; want thread_busy at once", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
