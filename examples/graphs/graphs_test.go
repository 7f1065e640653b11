package graphs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
)

var ctx = context.Background()

func TestRefundApprovedEndsRefundedAfterTwoAttempts(t *testing.T) {
	g, err := graphs.Refund()
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(ctx, "r", graph.Input(json.RawMessage(`{"amount":150}`)))
	if err != nil || res.Interrupts[0].Message != "Approve a refund of $150?" || string(res.Interrupts[0].Schema) != graphs.ApprovalSchema {
		t.Fatalf("%v %+v", err, res)
	}
	res, err = g.Invoke(ctx, "r", graph.Resume(interlude.Resolve(json.RawMessage(`{"approved":true}`))))
	if err != nil || res.Values.Outcome != "refunded" || res.Values.Attempts != 2 {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestTwoStepAsksTwiceUnlessFirstAnswerIsNo(t *testing.T) {
	g, _ := graphs.TwoStep()
	for _, c := range []struct {
		answers []bool
		outcome string
	}{{[]bool{true, true}, "done"}, {[]bool{true, false}, "stopped"}, {[]bool{false}, "stopped"}} {
		id := t.Name() + string(rune(len(c.answers)+'0')) + c.outcome
		res, _ := g.Invoke(ctx, id, graph.Input(json.RawMessage(`{}`)))
		for _, a := range c.answers {
			var err error
			if res, err = g.Invoke(ctx, id, graph.Resume(interlude.Resolve(a))); err != nil {
				t.Fatal(err)
			}
		}
		if res.Status != interlude.RunCompleted || res.Values.Outcome != c.outcome || !slices.Equal(res.Values.Answers, c.answers) {
			t.Fatalf("answers %v: %+v", c.answers, res)
		}
	}
}

func TestParallelJoinListsApprovedBranches(t *testing.T) {
	g, _ := graphs.Parallel()
	res, _ := g.Invoke(ctx, "p", graph.Input(json.RawMessage(`{}`)))
	if _, err := g.Invoke(ctx, "p", graph.Resume(interlude.Resolve(true))); !errors.Is(err, interlude.ErrAmbiguousResume) {
		t.Fatalf("bare resume: %v", err)
	}
	byMsg := map[string]string{}
	for _, q := range res.Interrupts {
		byMsg[q.Message] = q.ID
	}
	res, _ = g.Invoke(ctx, "p", graph.Respond(map[string]interlude.Resolution{byMsg["Approve a?"]: interlude.Resolve(true)}))
	res, err := g.Invoke(ctx, "p", graph.Respond(map[string]interlude.Resolution{byMsg["Approve b?"]: interlude.Resolve(true)}))
	if err != nil || res.Values.CRuns != 1 || !slices.Equal(res.Values.Outcome, []string{"a", "b"}) {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestGatedPublishesOnlyAfterBothBreakpoints(t *testing.T) {
	g, _ := graphs.Gated()
	res, _ := g.Invoke(ctx, "g", graph.Input(json.RawMessage(`{"topic":"tea"}`)))
	if _, err := g.Invoke(ctx, "g", graph.Resume(interlude.Resolve(true))); !errors.Is(err, interlude.ErrNotInterrupted) {
		t.Fatalf("resume at a breakpoint: %v", err)
	}
	res, _ = g.Invoke(ctx, "g", graph.Continue())
	if res.Values.Published || res.Breakpoint == nil || res.Breakpoint.Node != "publish" {
		t.Fatalf("%+v", res)
	}
	res, _ = g.Invoke(ctx, "g", graph.Continue())
	if !res.Values.Published || res.Status != interlude.RunCompleted {
		t.Fatalf("%+v", res)
	}
}

func TestSupportAgentDecisions(t *testing.T) {
	cases := []struct {
		name string
		ans  interlude.Resolution
		want string
	}{
		{"approve", agent.Approve(), "Done: Refunded $150 on order A-1001."},
		{"edit", agent.Edit(graphs.RefundArgs{OrderID: "A-1001", Amount: 40}), "Done: Refunded $40 on order A-1001."},
		{"reject", interlude.Reject(&interlude.RejectedError{Name: "Denied", Message: "Needs a manager."}), "I could not issue the refund: Needs a manager."},
		{"respond", agent.RespondWith("Refund already issued last week."), "Done: Refund already issued last week."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := graphs.SupportAgent(nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Invoke(ctx, "s", agent.Ask("Please refund order A-1001"))
			if err != nil || len(res.Interrupts) != 1 || res.Interrupts[0].Message != "Approve a refund of $150 for order A-1001?" {
				t.Fatalf("%v %+v", err, res)
			}
			res, err = a.Invoke(ctx, "s", graph.Respond(map[string]interlude.Resolution{res.Interrupts[0].ID: c.ans}))
			if err != nil || res.Status != interlude.RunCompleted {
				t.Fatalf("%v %+v", err, res)
			}
			if got := res.Values.Messages[len(res.Values.Messages)-1].Text(); got != c.want {
				t.Fatalf("final answer %q, want %q", got, c.want)
			}
		})
	}
}

func TestSupportAgentRefusesAnEmptyConversation(t *testing.T) {
	a, err := graphs.SupportAgent(nil)
	if err != nil {
		t.Fatal(err)
	}
	g := a.Erase() // as the server runs it
	for _, input := range []string{`{"messages":[]}`, `{}`} {
		res, err := g.Invoke(ctx, "empty", graph.Input(json.RawMessage(input)))
		var ie *interlude.Error
		if !errors.As(err, &ie) || ie.Code != interlude.CodeInvalidRequest || res != nil {
			t.Fatalf("input %s: err %v, result %+v", input, err, res)
		}
		if _, err := g.State(ctx, "empty"); !errors.Is(err, interlude.ErrNotFound) {
			t.Fatalf("input %s: the refused input made the thread: %v", input, err)
		}
	}
}

func TestSupportAgentAnswersEveryMessageOfALongConversation(t *testing.T) {
	a, err := graphs.SupportAgent(nil) // at most 10 model turns per run
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := range 25 {
		ask, answer := "What can you do?", "I can look up orders and issue refunds. Which order is it about?"
		if i%5 == 4 {
			ask, answer = fmt.Sprintf("Please refund $%d on order A-%d", i, 1000+i), fmt.Sprintf("Done: Refunded $%d on order A-%d.", i, 1000+i)
		}
		res, err := a.Invoke(ctx, "long", agent.Ask(ask))
		for err == nil && res.Status == interlude.RunInterrupted {
			res, err = a.Invoke(ctx, "long", graph.Resume(agent.Approve()))
			want += 2 // the tool call and its results
		}
		want += 2 // the message and its answer
		msgs := res.Values.Messages
		if err != nil || res.Status != interlude.RunCompleted || len(msgs) != want || msgs[len(msgs)-1].Text() != answer {
			t.Fatalf("message %d (%q): %v, status %s, %d messages (want %d), answer %q", i+1, ask, err, res.Status, len(msgs), want, msgs[len(msgs)-1].Text())
		}
	}
}

func TestSupportScriptRefundsTheOrderThePersonNamed(t *testing.T) {
	cases := []struct{ ask, order string }{
		{"Please refund order A-1001", "A-1001"},
		{"refund order Z-9 please", "Z-9"},
		{"Can you refund order #1234?", "1234"},
		{"refund order no. 77, it broke", "77"},
		{"I want a refund for b-700", "B-700"},
		{"refund #88 please", "88"},
		{"Refund my order, it arrived broken", ""},
		{"Please refund it", ""},
	}
	for _, c := range cases {
		t.Run(c.ask, func(t *testing.T) {
			a, err := graphs.SupportAgent(nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Invoke(ctx, "t", agent.Ask(c.ask))
			if err != nil {
				t.Fatal(err)
			}
			if c.order == "" {
				if res.Status != interlude.RunCompleted || !strings.Contains(res.Values.Messages[len(res.Values.Messages)-1].Text(), "Give me its number") {
					t.Fatalf("a message naming no order got status %s and %q; want a question for the order number", res.Status, res.Values.Messages[len(res.Values.Messages)-1].Text())
				}
				return
			}
			want := "Approve a refund of $150 for order " + c.order + "?"
			if res.Status != interlude.RunInterrupted || len(res.Interrupts) != 1 || res.Interrupts[0].Message != want {
				t.Fatalf("status %s, questions %+v; want %q", res.Status, res.Interrupts, want)
			}
		})
	}
}

func TestDollarsReadsAsPeopleWriteMoney(t *testing.T) {
	for v, want := range map[float64]string{150: "$150", 89.5: "$89.50", 0.1: "$0.10", 19.999: "$20.00", 1234.56: "$1234.56"} {
		if got := graphs.Dollars(v); got != want {
			t.Errorf("Dollars(%v) = %q, want %q", v, got, want)
		}
	}
}
