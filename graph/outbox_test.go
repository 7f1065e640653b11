package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// outboxOf lists every notice of st, oldest first.
func outboxOf(t *testing.T, st *memory.Store) []store.Notice {
	t.Helper()
	ns, err := st.Notices(context.Background(), store.NoticeQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(ns)
	return ns
}

func TestEveryQuestionRaisedAndClosedAndEveryFailureIsWrittenToTheOutbox(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	g := graph.New[refundState]()
	fail := true
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		if _, err := interlude.Interrupt(ctx, interlude.Request{Message: "Approve?", Reason: "approval"}); err != nil {
			return s, err
		}
		if fail {
			fail = false
			return s, errors.New("bank down")
		}
		return refundState{Outcome: "ok"}, nil
	})
	g.AddEdge(graph.Start, "refund")
	app, err := g.Compile(graph.WithStore(st), graph.WithName("refund"), graph.WithOutbox())
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(ctx, "r", graph.Input(refundState{Amount: 5}))
	if err != nil {
		t.Fatal(err)
	}
	qid := res.Interrupts[0].ID
	if _, err := app.Invoke(interlude.WithActor(ctx, "alice"), "r", graph.Resume(interlude.Resolve(true))); err == nil {
		t.Fatal("the node's failure was not reported")
	}
	var types []string
	for _, n := range outboxOf(t, st) {
		types = append(types, n.Type)
		var d graph.NoticeData
		if err := json.Unmarshal(n.Data, &d); err != nil {
			t.Fatal(err)
		}
		if n.ThreadID != "r" || n.Graph != "refund" || d.ThreadID != "r" || d.Graph != "refund" {
			t.Errorf("notice %s names thread %q/%q graph %q/%q", n.Type, n.ThreadID, d.ThreadID, n.Graph, d.Graph)
		}
		switch n.Type {
		case store.NoticeRaised:
			if d.Interrupt == nil || d.Interrupt.ID != qid || d.Interrupt.Message != "Approve?" || n.InterruptID != qid {
				t.Errorf("raised notice carries %+v", d.Interrupt)
			}
		case store.NoticeAnswered:
			if d.Resolution == nil || d.Resolution.By != "alice" || d.Interrupt == nil || d.Interrupt.ID != qid {
				t.Errorf("answered notice carries %+v %+v", d.Interrupt, d.Resolution)
			}
		case store.NoticeFailed:
			if !strings.Contains(d.Error, "bank down") {
				t.Errorf("failed notice says %q", d.Error)
			}
		}
	}
	if want := []string{store.NoticeRaised, store.NoticeAnswered, store.NoticeFailed}; !slices.Equal(types, want) {
		t.Fatalf("outbox = %v, want %v", types, want)
	}
	// Continuing the failed thread runs the node again with its recorded
	// answer: nothing new to tell. A second thread's question is cancelled.
	if _, err := app.Invoke(ctx, "r", graph.Continue()); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Invoke(ctx, "s", graph.Input(refundState{})); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Invoke(interlude.WithActor(ctx, "bob"), "s", graph.Resume(interlude.Cancel())); err != nil {
		t.Fatal(err)
	}
	types = types[:0]
	ids := map[string]bool{}
	for _, n := range outboxOf(t, st) {
		types = append(types, n.ThreadID+":"+n.Type)
		if ids[n.ID] {
			t.Errorf("notice id %s used twice", n.ID)
		}
		ids[n.ID] = true
	}
	want := []string{"r:" + store.NoticeRaised, "r:" + store.NoticeAnswered, "r:" + store.NoticeFailed, "s:" + store.NoticeRaised, "s:" + store.NoticeCancelled}
	if !slices.Equal(types, want) {
		t.Fatalf("outbox = %v, want %v", types, want)
	}
}

func TestAGraphWithoutWithOutboxWritesNoNotices(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	g := graph.New[refundState]()
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		_, err := interlude.Interrupt(ctx, interlude.Request{Message: "Approve?"})
		return s, err
	})
	g.AddEdge(graph.Start, "refund")
	app, _ := g.Compile(graph.WithStore(st))
	if _, err := app.Invoke(ctx, "r", graph.Input(refundState{})); err != nil {
		t.Fatal(err)
	}
	if ns := outboxOf(t, st); len(ns) != 0 {
		t.Fatalf("outbox holds %d notices", len(ns))
	}
}

func TestNoticeIDsSortInTheOrderTheirChangesWereMade(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	g := graph.New[refundState]()
	g.AddNode("refund", func(ctx context.Context, s refundState) (refundState, error) {
		if _, err := interlude.Interrupt(ctx, interlude.Request{Message: "Approve?", Reason: "approval"}); err != nil {
			return s, err
		}
		return refundState{Outcome: "ok"}, nil
	})
	g.AddEdge(graph.Start, "refund")
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Microsecond); return now }
	app, err := g.Compile(graph.WithStore(st), graph.WithName("refund"), graph.WithOutbox(), graph.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	// Thread names that sort against the order of their changes.
	for _, id := range []string{"z", "m", "a"} {
		if _, err := app.Invoke(ctx, id, graph.Input(refundState{Amount: 5})); err != nil {
			t.Fatal(err)
		}
		if _, err := app.Invoke(ctx, id, graph.Resume(interlude.Resolve(true))); err != nil {
			t.Fatal(err)
		}
	}
	ns := outboxOf(t, st)
	if len(ns) != 6 {
		t.Fatalf("%d notices, want 6", len(ns))
	}
	for i, n := range ns {
		if len(n.ID) != 36 || !strings.HasPrefix(n.ID, "evt_") || strings.Trim(n.ID[4:], "0123456789abcdef") != "" {
			t.Errorf("notice id %q is not evt_ and 32 hex digits", n.ID)
		}
		if i > 0 && n.ID <= ns[i-1].ID {
			t.Errorf("notice %d's id %s sorts before the one written before it, %s", i, n.ID, ns[i-1].ID)
		}
	}
}
