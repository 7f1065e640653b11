package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
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
		opts: []server.Option{server.WithRecoveryWatch(0)}, tokens: []auth.Token{admin, approver}})
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
	for status, want := range map[interlude.ThreadStatus]int{"interrupted": 0, "running": 1} {
		page, err := e.client(admin).Threads(ctx, client.ListOptions{Status: status})
		if err != nil || len(page.Threads) != want {
			t.Fatalf("listed as %s: %+v (%v); want %d", status, page, err, want)
		}
	}
	if n, err := e.srv.Host().RecoverThreads(ctx); err != nil || n != 1 {
		t.Fatalf("RecoverThreads = %d, %v; want 1", n, err)
	}
	clienttest.RefundFinishedOnce(t, e.client(admin), "r", approver.Name)
	if n, err := e.srv.Host().RecoverThreads(ctx); err != nil || n != 0 {
		t.Fatalf("a second RecoverThreads = %d, %v; want 0", n, err)
	}
}

func TestTheServerFinishesARunThatDiedBetweenStepsWithoutRunningItsFinishedStepAgain(t *testing.T) {
	st := &dyingStore{}
	st.left.Store(-1 << 20)
	e := newEnv(t, setup{wrap: func(inner store.Store) store.Store { st.Store = inner.(*memory.Store); return st },
		opts: []server.Option{server.WithRecoveryWatch(0)}, tokens: []auth.Token{admin, approver}})
	ctx := context.Background()
	// The parallel graph: a and b ask, c counts its runs, then join.
	started := e.start("parallel", "p", `{}`)
	var responses []interlude.Resolution
	for _, q := range started["interrupts"].([]any) {
		responses = append(responses, interlude.Resolve(true).For(q.(map[string]any)["id"].(string)))
	}
	st.left.Store(2) // the answers and their step commit; the join's does not
	if _, err := e.client(approver).Respond(ctx, "p", responses); err == nil {
		t.Fatal("the run should have died before the join's commit")
	}
	st.left.Store(-1 << 20)
	th, err := e.client(admin).Thread(ctx, "p")
	if err != nil || th.Status != "running" || len(th.Interrupts) != 0 || len(th.Next) != 1 || th.Next[0] != "join" {
		t.Fatalf("before recovery the thread reads %+v (%v); want running, join next, no question", th, err)
	}
	for status, want := range map[interlude.ThreadStatus]int{"idle": 0, "interrupted": 0, "running": 1} {
		page, err := e.client(admin).Threads(ctx, client.ListOptions{Status: status})
		if err != nil || len(page.Threads) != want {
			t.Fatalf("listed as %s: %+v (%v); want %d", status, page, err, want)
		}
	}
	_, err = e.client(admin).Invoke(ctx, client.InvokeRequest{ThreadID: "p", Input: map[string]any{}})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 409 || ce.Code != "thread_busy" {
		t.Fatalf("input to the unfinished thread: %v; want 409 thread_busy", err)
	}
	if n, err := e.srv.Host().RecoverThreads(ctx); err != nil || n != 1 {
		t.Fatalf("RecoverThreads = %d, %v; want 1", n, err)
	}
	th, err = e.client(admin).Thread(ctx, "p")
	var v struct {
		CRuns   int      `json:"c_runs"`
		Outcome []string `json:"outcome"`
	}
	if err != nil || json.Unmarshal(th.Values, &v) != nil || th.Status != "idle" || v.CRuns != 1 || len(v.Outcome) != 2 {
		t.Fatalf("after recovery the thread reads %+v (%v); want idle, a and b approved, c run once", th, err)
	}
	if n, err := e.srv.Host().RecoverThreads(ctx); err != nil || n != 0 {
		t.Fatalf("a second RecoverThreads = %d, %v; want 0", n, err)
	}
}

// StopState is the state of the stoppable chain a → b → c.
type StopState struct {
	Done []string `json:"done,omitempty" graph:"append"`
}

// stoppableChain builds the chain a → b → c, named "chain", whose node b, on
// its first start, says so on entered and waits for its run to be cancelled;
// starts counts each node's starts.
func stoppableChain(entered chan<- struct{}, starts map[string]*atomic.Int32) builder {
	var first atomic.Bool
	return erase(func(opts ...graph.Option) (*graph.Graph[StopState], error) {
		g := graph.New[StopState]()
		for _, n := range []string{"a", "b", "c"} {
			g.AddNode(n, func(ctx context.Context, s StopState) (StopState, error) {
				starts[n].Add(1)
				if n == "b" && first.CompareAndSwap(false, true) {
					close(entered)
					<-ctx.Done()
					return StopState{}, ctx.Err()
				}
				return StopState{Done: []string{n}}, nil
			})
		}
		g.AddEdge(graph.Start, "a").AddEdge("a", "b").AddEdge("b", "c")
		return g.Compile(append([]graph.Option{graph.WithName("chain")}, opts...)...)
	})
}

func TestAServerClosedMidRunLeavesTheRunToTheNextServerToStart(t *testing.T) {
	shared := memory.New()
	keep := func(store.Store) store.Store { return shared }
	entered := make(chan struct{})
	starts := map[string]*atomic.Int32{"a": {}, "b": {}, "c": {}}
	chain := stoppableChain(entered, starts)
	first := newEnv(t, setup{wrap: keep, graphs: []builder{chain}, opts: []server.Option{server.WithRecoveryWatch(0)}})
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := first.client().Invoke(ctx, client.InvokeRequest{Graph: "chain", ThreadID: "c", Input: map[string]any{}})
		done <- err
	}()
	<-entered // step a committed; the run is in step b
	first.srv.Close()
	var ce *client.Error
	if err := <-done; !errors.As(err, &ce) || ce.Code != "unavailable" {
		t.Fatalf("the request of a run the server's Close stopped: %v; want unavailable", err)
	}
	m, err := shared.Meta(ctx, "c")
	if err != nil || m.Status != interlude.ThreadRunning {
		t.Fatalf("after Close the thread is %+v (%v); want running", m, err)
	}

	next := newEnv(t, setup{wrap: keep, graphs: []builder{chain}, opts: []server.Option{server.WithRecoveryWatch(0)}})
	if n, err := next.srv.Host().RecoverThreads(ctx); err != nil || n != 1 {
		t.Fatalf("RecoverThreads = %d, %v; want 1", n, err)
	}
	th, err := next.client().Thread(ctx, "c")
	var v StopState
	if err != nil || json.Unmarshal(th.Values, &v) != nil || th.Status != "idle" || strings.Join(v.Done, ",") != "a,b,c" {
		t.Fatalf("after recovery the thread reads %+v (%v); want idle with a, b and c done", th, err)
	}
	if a, b, c := starts["a"].Load(), starts["b"].Load(), starts["c"].Load(); a != 1 || b != 2 || c != 1 {
		t.Fatalf("the nodes started a %d, b %d, c %d times; want 1, 2 (the step in flight again), 1", a, b, c)
	}
}
