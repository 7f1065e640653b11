package graph_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store/memory"
)

func TestAnEscalationReassignsItsQuestionOnceAndStaysInTheHistory(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	g := graph.New[refundState]()
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "Approve?", Assignees: []string{"finance"}})
		if err != nil {
			return s, err
		}
		return refundState{Outcome: "by " + ans.By}, nil
	})
	g.AddEdge(graph.Start, "refund")
	app, err := g.Compile(graph.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(ctx, "t", graph.Input(refundState{}))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Interrupts[0].ID
	refused := []struct {
		name string
		e    graph.Escalation
		want error
	}{
		{"an unknown question", graph.Escalation{InterruptID: "int_nope", Step: 1}, interlude.ErrUnknownInterrupt},
		{"step 0", graph.Escalation{InterruptID: id}, interlude.ErrInvalidRequest},
		{"an empty assignee", graph.Escalation{InterruptID: id, Step: 1, ReassignTo: []string{""}}, interlude.ErrInvalidRequest},
	}
	for _, c := range refused {
		if _, err := app.Escalate(ctx, "t", c.e); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	res, err = app.Escalate(ctx, "t", graph.Escalation{InterruptID: id, Step: 1, Notify: []string{"olga"}, ReassignTo: []string{"ops"}, By: "policy"})
	if err != nil {
		t.Fatal(err)
	}
	if q := res.Interrupts[0]; !slices.Equal(q.Assignees, []string{"ops"}) || q.Escalations != 1 {
		t.Fatalf("after escalating: %+v", q)
	}
	if _, err := app.Escalate(ctx, "t", graph.Escalation{InterruptID: id, Step: 1, ReassignTo: []string{"elsewhere"}}); !errors.Is(err, interlude.ErrConflict) {
		t.Fatalf("the same step again: %v", err)
	}
	hist, err := app.History(ctx, "t", graph.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hist[0].Kind != "escalate" || len(hist[0].Escalations) != 1 || hist[0].Escalations[0].By != "policy" {
		t.Fatalf("history: %+v", hist)
	}
	_, err = app.Invoke(interlude.WithAnswerer(ctx, interlude.Answerer{Name: "fiona", Groups: []string{"finance"}}), "t", graph.Resume(interlude.Resolve(true)))
	if !errors.Is(err, interlude.ErrForbidden) {
		t.Fatalf("the former assignees answered: %v", err)
	}
	res, err = app.Invoke(interlude.WithAnswerer(ctx, interlude.Answerer{Name: "olga", Groups: []string{"ops"}}), "t", graph.Resume(interlude.Resolve(true)))
	if err != nil || res.Values.Outcome != "by olga" {
		t.Fatalf("the new assignee's answer: %+v %v", res, err)
	}
}
