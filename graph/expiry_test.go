package graph_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/testclock"
	"github.com/interludehq/interlude/store/memory"
)

func TestAQuestionPastItsTTLTakesOnlyACancellationOrAnExpiry(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	g := graph.New[refundState]()
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "ok?", TTL: time.Hour})
		if err != nil {
			return refundState{}, err
		}
		if ans.Cancelled {
			return refundState{Outcome: "withdrawn by " + ans.By}, nil
		}
		return refundState{Outcome: "approved"}, nil
	})
	g.AddEdge(graph.Start, "refund")
	st := memory.New()
	app, err := g.Compile(graph.WithStore(st), graph.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(ctx, "e", graph.Input(refundState{Amount: 1}))
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	q := res.Interrupts[0]
	if q.ExpiresAt == nil || !q.ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("expires_at = %v, want %v", q.ExpiresAt, t0.Add(time.Hour))
	}
	expire := graph.Respond(map[string]interlude.Resolution{q.ID: interlude.Expire()})

	before := dump(t, st, "e")
	clock.Set(t0.Add(time.Hour - time.Nanosecond))
	if _, err := app.Invoke(ctx, "e", expire); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Fatalf("an expiry before its time: err = %v, want invalid_request", err)
	}
	clock.Set(t0.Add(time.Hour))
	for _, late := range []graph.Command{graph.Resume(interlude.Resolve(map[string]any{"approved": true})), graph.Resume(interlude.Reject(errors.New("no")).For(q.ID))} {
		if _, err := app.Invoke(ctx, "e", late); !errors.Is(err, interlude.ErrUnknownInterrupt) {
			t.Fatalf("an answer after the question expired: err = %v, want unknown_interrupt", err)
		}
	}
	if dump(t, st, "e") != before {
		t.Fatal("a refused answer changed the thread")
	}

	res, err = app.Invoke(interlude.WithActor(ctx, "interlude"), "e", expire)
	if err != nil || res.Status != interlude.RunCompleted || res.Values.Outcome != "withdrawn by interlude" {
		t.Fatalf("expiring the question: %v %+v", err, res)
	}
	if _, err := app.Invoke(ctx, "e", expire); !errors.Is(err, interlude.ErrUnknownInterrupt) {
		t.Fatalf("a second expiry of the question: err = %v, want unknown_interrupt", err)
	}
	hist, err := app.History(ctx, "e", graph.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []interlude.ResolutionStatus
	for _, c := range hist {
		for _, a := range c.Resolved {
			if a.Interrupt.ID == q.ID {
				kinds = append(kinds, a.Resolution.Status)
				if a.Resolution.By != "interlude" {
					t.Fatalf("the expiry is recorded as given by %q, want interlude", a.Resolution.By)
				}
			}
		}
	}
	if len(kinds) != 1 || kinds[0] != interlude.Expired {
		t.Fatalf("history holds %v for the question, want one expiry", kinds)
	}
}

func TestAQuestionWithoutTTLCannotExpireButCanBeCancelled(t *testing.T) {
	ctx := context.Background()
	app := refundGraph(t, memory.New())
	res, err := app.Invoke(ctx, "n", graph.Input(refundState{Amount: 5}))
	if err != nil || res.Interrupts[0].ExpiresAt != nil {
		t.Fatalf("%v %+v", err, res)
	}
	id := res.Interrupts[0].ID
	if _, err := app.Invoke(ctx, "n", graph.Respond(map[string]interlude.Resolution{id: interlude.Expire()})); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Fatalf("expiring a question without a TTL: err = %v, want invalid_request", err)
	}
	if _, err := app.Invoke(ctx, "n", graph.Resume(interlude.Cancel().For(id))); err != nil {
		t.Fatal(err)
	}
}
