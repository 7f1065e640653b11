package postgres

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/testclock"
)

// TestProcessesClosingTheSameExpiredQuestionCloseItOnce checks what servers
// sharing the database rely on when each of them closes the questions that
// expired: the first to reach a thread closes its question, the others are told
// the thread is busy or the question is closed already, the history holds one
// expiry and the code after the question runs once.
func TestProcessesClosingTheSameExpiredQuestionCloseItOnce(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	var after atomic.Int64
	on := func(owner string) *graph.Graph[refundState] {
		g, err := graph.New[refundState]().
			AddNode("refund", func(ctx context.Context, st refundState) (refundState, error) {
				ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "refund?", TTL: time.Hour})
				if err != nil {
					return refundState{}, err
				}
				after.Add(1)
				if ans.Expired {
					return refundState{}, nil
				}
				return refundState{Refunded: st.Amount}, nil
			}).
			AddEdge(graph.Start, "refund").
			Compile(graph.WithStore(s), graph.WithName("refund"), graph.WithLease(time.Minute, owner), graph.WithClock(clock.Now))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	procs := []*graph.Graph[refundState]{on("a"), on("b"), on("c")}
	res, err := procs[0].Invoke(ctx, "x", graph.Input(refundState{Amount: 40}))
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	id := res.Interrupts[0].ID
	clock.Set(t0.Add(time.Hour))
	expire := graph.Respond(map[string]interlude.Resolution{id: interlude.Expire()})
	closed := race(t, len(procs), func(i int) error {
		_, err := procs[i].Invoke(interlude.WithActor(ctx, "interlude"), "x", expire)
		return err
	}, interlude.ErrUnknownInterrupt)
	if closed != 1 || after.Load() != 1 {
		t.Fatalf("%d processes closed the question and the code after it ran %d times; want each once", closed, after.Load())
	}
	hist, err := procs[1].History(ctx, "x", graph.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var expiries int
	for _, c := range hist {
		for _, a := range c.Resolved {
			if a.Resolution.Status == interlude.Expired {
				expiries++
			}
		}
	}
	if expiries != 1 {
		t.Fatalf("the history holds %d expiries, want 1", expiries)
	}
}
