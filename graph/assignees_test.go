package graph_test

import (
	"context"
	"errors"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store/memory"
)

func TestAnAnswerFromANonAssigneeIsRefusedAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	g := graph.New[refundState]()
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "Approve?", Assignees: []string{"alice", "finance", "alice"}})
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
	cases := []struct {
		name    string
		who     *interlude.Answerer
		allowed bool
	}{
		{"a stranger", &interlude.Answerer{Name: "mallory", Groups: []string{"support"}}, false},
		{"the assignee", &interlude.Answerer{Name: "alice"}, true},
		{"a member of the assigned group", &interlude.Answerer{Name: "bob", Groups: []string{"finance"}}, true},
		{"an admin", &interlude.Answerer{Name: "root", Admin: true}, true},
		{"the program itself", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			thread := "order-" + c.name
			res, err := app.Invoke(ctx, thread, graph.Input(refundState{Amount: 1}))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Interrupts[0].Assignees; len(got) != 2 || got[0] != "alice" || got[1] != "finance" {
				t.Fatalf("assignees recorded as %v, want [alice finance]", got)
			}
			actx := ctx
			if c.who != nil {
				actx = interlude.WithAnswerer(ctx, *c.who)
			}
			before := dump(t, st, thread)
			for _, cmd := range []graph.Command{graph.Resume(interlude.Resolve(true)), graph.Resume(interlude.Reject(errors.New("no"))), graph.Resume(interlude.Cancel())} {
				_, err = app.Invoke(actx, thread, cmd)
				if c.allowed {
					break
				}
				if !errors.Is(err, interlude.ErrForbidden) {
					t.Fatalf("answer by %s = %v, want forbidden", c.name, err)
				}
				if after := dump(t, st, thread); after != before {
					t.Fatalf("a refused answer changed the thread")
				}
			}
			if c.allowed && err != nil {
				t.Fatalf("answer by %s refused: %v", c.name, err)
			}
		})
	}
}
