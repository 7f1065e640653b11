package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// dump captures everything a store holds about a thread, to prove a refused request
// changed nothing.
func dump(t *testing.T, st store.Store, thread string) string {
	t.Helper()
	ctx := context.Background()
	l, err := st.Load(ctx, thread)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.Records(ctx, thread, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal([]any{l, recs})
	return string(data)
}

func TestRejectOnPlainNodeReturnsRejectedError(t *testing.T) {
	ctx := context.Background()
	g := graph.New[refundState]()
	var got *interlude.RejectedError
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		_, err := interlude.Interrupt(ctx, interlude.Request{Message: "ok?"})
		if errors.As(err, &got) {
			return refundState{Outcome: "rejected: " + got.Message}, nil
		}
		if err != nil {
			return refundState{}, err
		}
		return refundState{Outcome: "approved"}, nil
	})
	g.AddEdge(graph.Start, "refund")
	app, _ := g.Compile()
	if _, err := app.Invoke(ctx, "r", graph.Input(refundState{Amount: 1})); err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(interlude.WithActor(ctx, "alice"), "r", graph.Resume(interlude.Reject(&interlude.RejectedError{Name: "Denied", Message: "too much"})))
	if err != nil || res.Values.Outcome != "rejected: too much" {
		t.Fatalf("%v %+v", err, res)
	}
	if got.Name != "Denied" || got.By != "alice" || !got.Given {
		t.Fatalf("rejection = %+v", got)
	}
}

func TestCancelAndNullResumeAreTheSame(t *testing.T) {
	ctx := context.Background()
	for name, cmd := range map[string]graph.Command{
		"cancel": graph.Resume(interlude.Cancel()),
	} {
		t.Run(name, func(t *testing.T) {
			app := refundGraph(t, memory.New())
			if _, err := app.Invoke(ctx, "c", graph.Input(refundState{Amount: 5})); err != nil {
				t.Fatal(err)
			}
			res, err := app.Invoke(ctx, "c", cmd)
			if err != nil || res.Status != interlude.RunCompleted || res.Values.Outcome != "cancelled" {
				t.Fatalf("%v %+v", err, res)
			}
			h, err := app.History(ctx, "c", graph.HistoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []interlude.ResolutionStatus
			for _, cp := range h {
				for _, a := range cp.Resolved {
					kinds = append(kinds, a.Resolution.Status)
				}
			}
			if len(kinds) != 1 || kinds[0] != interlude.Cancelled {
				t.Fatalf("recorded resolutions = %v", kinds)
			}
		})
	}
}

func TestRefusedAnswersLeaveThreadUnchanged(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	app := refundGraph(t, st)
	res, err := app.Invoke(ctx, "x", graph.Input(refundState{Amount: 150}))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Interrupts[0].ID
	before := dump(t, st, "x")
	cases := []struct {
		name string
		cmd  graph.Command
		want error
	}{
		{"answer fails the schema", graph.Resume(interlude.Resolve(map[string]any{"approved": "yes"})), interlude.ErrInvalidResponse},
		{"answer misses a required field", graph.Resume(interlude.Resolve(map[string]any{})), interlude.ErrInvalidResponse},
		{"answer repeats a key in another case", graph.Resume(interlude.Resolve(json.RawMessage(`{"approved":false,"APPROVED":true}`))), interlude.ErrInvalidResponse},
		{"answer repeats a key", graph.Resume(interlude.Resolve(json.RawMessage(`{"approved":"x","approved":true}`))), interlude.ErrInvalidResponse},
		{"unknown interrupt id", graph.Respond(map[string]interlude.Resolution{"int_nope": interlude.Resolve(true)}), interlude.ErrUnknownInterrupt},
		{"new input while interrupted", graph.Input(refundState{Amount: 1}), interlude.ErrThreadInterrupted},
		{"continue while interrupted", graph.Continue(), interlude.ErrThreadInterrupted},
		{"unencodable answer", graph.Resume(interlude.Resolve(func() {})), interlude.ErrInvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := app.Invoke(ctx, "x", c.cmd)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if after := dump(t, st, "x"); after != before {
				t.Fatalf("thread changed:\n%s\n%s", before, after)
			}
		})
	}
	var ie *interlude.Error
	_, err = app.Invoke(ctx, "x", graph.Resume(interlude.Resolve(map[string]any{"approved": "yes"})))
	if !errors.As(err, &ie) || len(ie.Violations) != 1 || ie.Violations[0].Path != "/approved" {
		t.Fatalf("violations = %+v", ie)
	}
	if _, err := app.Invoke(ctx, "x", graph.Input(refundState{})); !errors.As(err, &ie) || len(ie.Interrupts) != 1 || ie.Interrupts[0] != id {
		t.Fatalf("ThreadInterrupted should name the pending interrupt: %v", err)
	}
}

// refundApproved pauses a refund of 150 on the thread and approves it, returning
// the question's id, the answer and the run it started.
func refundApproved(t *testing.T, app *graph.Graph[refundState], thread string) (string, graph.Command, *graph.Result[refundState]) {
	t.Helper()
	ctx := context.Background()
	res, err := app.Invoke(ctx, thread, graph.Input(refundState{Amount: 150}))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Interrupts[0].ID
	answer := graph.Respond(map[string]interlude.Resolution{id: interlude.Resolve(map[string]any{"approved": true})})
	first, err := app.Invoke(ctx, thread, answer)
	if err != nil || first.Values.Outcome != "refunded" {
		t.Fatalf("%v %+v", err, first)
	}
	return id, answer, first
}

func TestIdenticalAnswerReplayedReturnsSameOutcome(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	app := refundGraph(t, st)
	id, _, first := refundApproved(t, app, "r")
	before := dump(t, st, "r")
	again, err := app.Invoke(ctx, "r", graph.Respond(map[string]interlude.Resolution{id: interlude.Resolve(json.RawMessage(` { "approved" : true } `))}))
	if err != nil || again.Status != first.Status || again.Values != first.Values || again.Checkpoint != first.Checkpoint {
		t.Fatalf("replay: %v %+v, want %+v", err, again, first)
	}
	if dump(t, st, "r") != before {
		t.Fatal("replay changed the thread")
	}
	_, err = app.Invoke(ctx, "r", graph.Respond(map[string]interlude.Resolution{id: interlude.Resolve(map[string]any{"approved": false})}))
	if !errors.Is(err, interlude.ErrUnknownInterrupt) {
		t.Fatalf("different answer to a resolved id: err = %v", err)
	}
	if _, err := app.Invoke(ctx, "r", graph.Resume(interlude.Resolve(map[string]any{"approved": true}))); !errors.Is(err, interlude.ErrNotInterrupted) {
		t.Fatalf("bare resume of a completed thread: err = %v", err)
	}
}

func TestAReplayedAnswerReturnsItsRunsOutcomeAfterTheThreadMovedOn(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	app := refundGraph(t, st)
	id, answer, first := refundApproved(t, app, "m")
	// The thread moves on: new input pauses it on a new question.
	later, err := app.Invoke(ctx, "m", graph.Input(refundState{Amount: 77}))
	if err != nil || later.Status != interlude.RunInterrupted || later.Interrupts[0].ID == id {
		t.Fatalf("new input: %v %+v", err, later)
	}
	before := dump(t, st, "m")
	again, err := app.Invoke(ctx, "m", answer)
	if err != nil || again.Status != first.Status || again.Values != first.Values || again.Checkpoint != first.Checkpoint || len(again.Interrupts) != 0 {
		t.Fatalf("the retried answer: %v %+v; want its run's outcome %+v, not the thread as it is now", err, again, first)
	}
	if dump(t, st, "m") != before {
		t.Fatal("the replay changed the thread")
	}
}

type gateState struct {
	Topic     string `json:"topic"`
	Draft     string `json:"draft,omitempty"`
	Reviewed  bool   `json:"reviewed,omitempty"`
	Published bool   `json:"published,omitempty"`
}

func gatedGraph(t testing.TB) *graph.Graph[gateState] {
	g := graph.New[gateState]()
	g.AddNode("draft", func(ctx context.Context, s gateState) (gateState, error) {
		return gateState{Draft: "about " + s.Topic}, nil
	})
	g.AddNode("review", func(ctx context.Context, s gateState) (gateState, error) { return gateState{Reviewed: true}, nil })
	g.AddNode("publish", func(ctx context.Context, s gateState) (gateState, error) { return gateState{Published: true}, nil })
	g.AddEdge(graph.Start, "draft").AddEdge("draft", "review").AddEdge("review", "publish")
	app, err := g.Compile(graph.InterruptAfter("draft"), graph.InterruptBefore("publish"))
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestBreakpointsPauseWithoutInterruptAndContinueOnPlainCall(t *testing.T) {
	ctx := context.Background()
	app := gatedGraph(t)
	res, err := app.Invoke(ctx, "g", graph.Input(gateState{Topic: "go"}))
	if err != nil || res.Status != interlude.RunInterrupted || len(res.Interrupts) != 0 || res.Breakpoint == nil || *res.Breakpoint != (graph.Breakpoint{Node: "draft", When: "after"}) {
		t.Fatalf("after draft: %v %+v", err, res)
	}
	if _, err := app.Invoke(ctx, "g", graph.Resume(interlude.Resolve(true))); !errors.Is(err, interlude.ErrNotInterrupted) {
		t.Fatalf("resume at a breakpoint: err = %v", err)
	}
	if _, err := app.Invoke(ctx, "g", graph.Input(gateState{Topic: "x"})); !errors.Is(err, interlude.ErrThreadInterrupted) {
		t.Fatalf("input at a breakpoint: err = %v", err)
	}
	res, err = app.Invoke(ctx, "g", graph.Continue())
	if err != nil || res.Breakpoint == nil || *res.Breakpoint != (graph.Breakpoint{Node: "publish", When: "before"}) || !res.Values.Reviewed || res.Values.Published {
		t.Fatalf("before publish: %v %+v", err, res)
	}
	res, err = app.Invoke(ctx, "g", graph.Continue())
	if err != nil || res.Status != interlude.RunCompleted || !res.Values.Published {
		t.Fatalf("end: %v %+v", err, res)
	}
}

func TestConcurrentAnswersExactlyOneWins(t *testing.T) {
	ctx := context.Background()
	var completions atomic.Int32
	g := graph.New[refundState]()
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "ok?"})
		if err != nil {
			return refundState{}, err
		}
		completions.Add(1)
		var v string
		ans.Decode(&v)
		return refundState{Outcome: v}, nil
	})
	g.AddEdge(graph.Start, "refund")
	app, _ := g.Compile()
	res, _ := app.Invoke(ctx, "race", graph.Input(refundState{}))
	id := res.Interrupts[0].ID
	var wg sync.WaitGroup
	var wins, refused atomic.Int32
	start := make(chan struct{})
	for i := range 50 {
		wg.Go(func() {
			<-start
			_, err := app.Invoke(ctx, "race", graph.Respond(map[string]interlude.Resolution{id: interlude.Resolve(string(rune('a'+i%26)) + string(rune('0'+i/26)))}))
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, interlude.ErrUnknownInterrupt), errors.Is(err, interlude.ErrConflict):
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 || refused.Load() != 49 || completions.Load() != 1 {
		t.Fatalf("wins %d refused %d completions %d", wins.Load(), refused.Load(), completions.Load())
	}
}

func TestSwallowedInterruptStillPauses(t *testing.T) {
	ctx := context.Background()
	ran := 0
	g := graph.New[refundState]()
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		ran++
		interlude.Interrupt(ctx, interlude.Request{Message: "ok?"}) // error ignored
		return refundState{Outcome: "should not be written"}, nil
	})
	g.AddEdge(graph.Start, "refund")
	app, _ := g.Compile()
	res, err := app.Invoke(ctx, "s", graph.Input(refundState{}))
	if err != nil || res.Status != interlude.RunInterrupted || res.Values.Outcome != "" || len(res.Interrupts) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestForkFromPausedCheckpointRefiresWithNewID(t *testing.T) {
	ctx := context.Background()
	app := refundGraph(t, memory.New())
	res, _ := app.Invoke(ctx, "f", graph.Input(refundState{Amount: 10}))
	oldID, pausedAt := res.Interrupts[0].ID, res.Checkpoint
	if _, err := app.Invoke(ctx, "f", graph.Resume(interlude.Resolve(map[string]any{"approved": true}))); err != nil {
		t.Fatal(err)
	}
	res, err := app.Fork(ctx, "f", pausedAt)
	if err != nil || res.Status != interlude.RunInterrupted || len(res.Interrupts) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	if res.Interrupts[0].ID == oldID {
		t.Fatal("fork re-fired the interrupt with the old id")
	}
	if _, err := app.Invoke(ctx, "f", graph.Respond(map[string]interlude.Resolution{oldID: interlude.Resolve(map[string]any{"approved": false})})); !errors.Is(err, interlude.ErrUnknownInterrupt) {
		t.Fatalf("an answer to the old branch's question reached the fork: %v", err)
	}
	res, err = app.Invoke(ctx, "f", graph.Resume(interlude.Resolve(map[string]any{"approved": false})))
	if err != nil || res.Values.Outcome != "declined" {
		t.Fatalf("%v %+v", err, res)
	}
	h, err := app.History(ctx, "f", graph.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var raised []string
	outcomes := map[string]bool{}
	for _, cp := range h {
		for _, q := range cp.Raised {
			raised = append(raised, q.ID)
		}
		outcomes[cp.Values.Outcome] = true
	}
	if len(raised) != 2 || !outcomes["refunded"] || !outcomes["declined"] {
		t.Fatalf("history should keep both branches: raised %v outcomes %v", raised, outcomes)
	}
}

func TestInterruptOutsideRunIsAnError(t *testing.T) {
	if _, err := interlude.Interrupt(context.Background(), interlude.Request{Message: "?"}); !errors.Is(err, interlude.ErrNotInRun) {
		t.Fatalf("err = %v", err)
	}
}

// failingStore fails every append after the first n, as a process that dies right
// after committing the answers would.
type failingStore struct {
	store.Store
	left int
}

func (f *failingStore) Append(ctx context.Context, a store.Append) error {
	if f.left == 0 {
		return errors.New("the process died")
	}
	f.left--
	return f.Store.Append(ctx, a)
}

func TestRetriedAnswerFinishesAStepWhoseRunDied(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	dying := &failingStore{Store: mem, left: 2} // the pause, then the answer; the step's commit fails
	app := refundGraph(t, dying)
	res, _ := app.Invoke(ctx, "d", graph.Input(refundState{Amount: 9}))
	answer := graph.Respond(map[string]interlude.Resolution{res.Interrupts[0].ID: interlude.Resolve(map[string]any{"approved": true})})
	if _, err := app.Invoke(ctx, "d", answer); err == nil {
		t.Fatal("the step's commit should have failed")
	}
	restarted := refundGraph(t, mem)
	res, err := restarted.Invoke(ctx, "d", answer)
	if err != nil || res.Status != interlude.RunCompleted || res.Values.Outcome != "refunded" {
		t.Fatalf("%v %+v", err, res)
	}
	h, _ := restarted.History(ctx, "d", graph.HistoryOptions{})
	n := 0
	for _, cp := range h {
		n += len(cp.Resolved)
	}
	if n != 1 {
		t.Fatalf("%d resolutions in history, want 1", n)
	}
}

// deadRunStore reports, as a shared store does, that the process holding the
// thread's lease stopped.
type deadRunStore struct{ store.Store }

func (d deadRunStore) Load(ctx context.Context, id string) (*store.Loaded, error) {
	l, err := d.Store.Load(ctx, id)
	if err == nil {
		l.Meta.Status = interlude.ThreadFailed
	}
	return l, err
}

func TestStateShowsAThreadWhoseRunDiedAsFailed(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	refundGraph(t, mem).Invoke(ctx, "d", graph.Input(refundState{Amount: 1}))
	snap, err := refundGraph(t, deadRunStore{mem}).State(ctx, "d")
	if err != nil || snap.Status != interlude.ThreadFailed || !strings.Contains(snap.Error, "continue the thread") {
		t.Fatalf("%v %+v", err, snap)
	}
}

// TestATaskChangingTheExchangesItReadsLeavesTheAnswersAlone checks that the
// exchanges a task reads are its own copy: a node that overwrites the recorded
// answer to its first question still gets that answer when it runs again.
func TestATaskChangingTheExchangesItReadsLeavesTheAnswersAlone(t *testing.T) {
	ctx := context.Background()
	g := graph.New[refundState]()
	var firstAnswers []string
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		_, err := interlude.Interrupt(ctx, interlude.Request{Name: "first", Message: "ok?"})
		var rej *interlude.RejectedError
		if !errors.As(err, &rej) {
			return refundState{}, errors.New("the first question was not rejected")
		}
		firstAnswers = append(firstAnswers, rej.Name)
		for _, x := range interlude.Exchanges(ctx) {
			if x.Resolution != nil {
				x.Resolution.Status = interlude.Resolved
				x.Resolution.Response = json.RawMessage(`true`)
				if x.Resolution.Error != nil {
					x.Resolution.Error.Name = "Overwritten"
				}
			}
		}
		if _, err := interlude.Interrupt(ctx, interlude.Request{Name: "second", Message: "sure?"}); err != nil {
			return refundState{}, err
		}
		return refundState{Outcome: "done"}, nil
	})
	g.AddEdge(graph.Start, "refund")
	app, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Invoke(ctx, "x", graph.Input(refundState{Amount: 1})); err != nil {
		t.Fatal(err)
	}
	snap, err := app.State(ctx, "x")
	if err != nil || len(snap.Interrupts) != 1 {
		t.Fatalf("%v %+v", err, snap)
	}
	if _, err := app.Invoke(ctx, "x", graph.Resume(interlude.Reject(&interlude.RejectedError{Name: "Denied"}).For(snap.Interrupts[0].ID))); err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(ctx, "x", graph.Resume(interlude.Resolve(true)))
	if err != nil || res.Values.Outcome != "done" {
		t.Fatalf("%v %+v", err, res)
	}
	if len(firstAnswers) != 2 || firstAnswers[0] != "Denied" || firstAnswers[1] != "Denied" {
		t.Fatalf("the first question's answer read %q on its two runs, want Denied both times", firstAnswers)
	}
}
