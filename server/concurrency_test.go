package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/graph"
)

func TestFiftyConcurrentAnswersOneDecisionWinsIdenticalOnesReplayOthersAre409(t *testing.T) {
	e := newEnv(t, setup{})
	ctx := context.Background()
	c := e.client()
	res, err := c.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "race", Input: map[string]any{"amount": 150}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Interrupts[0].ID
	answerOf := func(i int) map[string]any { // five different answers, each sent ten times
		return map[string]any{"approved": i%5 == 0, "variant": i % 5}
	}
	type reply struct {
		variant int
		res     *graph.Result[json.RawMessage]
		err     error
	}
	replies := make([]reply, 50)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 50 {
		wg.Go(func() {
			<-start
			r, err := c.Resume(ctx, "race", id, answerOf(i))
			replies[i] = reply{i % 5, r, err}
		})
	}
	close(start)
	wg.Wait()

	h, err := c.History(ctx, "race", client.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var resolutions []interlude.Resolution
	for _, cp := range h.Checkpoints {
		resolutions = append(resolutions, cp.Resolved...)
	}
	if len(resolutions) != 1 {
		t.Fatalf("%d resolutions recorded, want exactly 1: %+v", len(resolutions), resolutions)
	}
	var won struct {
		Approved bool `json:"approved"`
		Variant  int  `json:"variant"`
	}
	if err := decode(resolutions[0].Response, &won); err != nil {
		t.Fatal(err)
	}
	wantOutcome := map[bool]string{true: "refunded", false: "declined"}[won.Approved]
	ok, refused := 0, 0
	for i, r := range replies {
		switch {
		case r.variant == won.Variant:
			if r.err != nil {
				t.Errorf("request %d, identical to the winner, failed: %v", i, r.err)
				continue
			}
			ok++
			if r.res.Status != "completed" {
				t.Errorf("request %d: status %s", i, r.res.Status)
			}
			sameJSON(t, "values", r.res.Values, fmt.Sprintf(`{"amount":150,"attempts":2,"outcome":%q}`, wantOutcome))
		default:
			var ce *client.Error
			if !errors.As(r.err, &ce) || ce.Status != http.StatusConflict {
				t.Errorf("request %d with another answer: err %v, want a 409", i, r.err)
				continue
			}
			if !errors.Is(r.err, interlude.ErrUnknownInterrupt) && !errors.Is(r.err, interlude.ErrConflict) {
				t.Errorf("request %d: code %s", i, ce.Code)
			}
			refused++
		}
	}
	if ok != 10 || refused != 40 {
		t.Fatalf("%d answered 200 and %d refused, want 10 and 40", ok, refused)
	}
	th, err := c.Thread(ctx, "race")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "final values", th.Values, fmt.Sprintf(`{"amount":150,"attempts":2,"outcome":%q}`, wantOutcome))
}

func TestConcurrentStartsOfOneThreadWithDifferentGraphsLeaveItToOneGraph(t *testing.T) {
	e := newEnv(t, setup{})
	c := e.client()
	ctx := context.Background()
	errs := make([]error, 20)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range errs {
		wg.Go(func() {
			<-start
			req := client.InvokeRequest{Graph: "refund", ThreadID: "same", Input: map[string]any{"amount": 1}}
			if i%2 == 1 {
				req = client.InvokeRequest{Graph: "two-step", ThreadID: "same", Input: map[string]any{}}
			}
			_, errs[i] = c.Invoke(ctx, req)
		})
	}
	close(start)
	wg.Wait()
	th, err := c.Thread(ctx, "same")
	if err != nil {
		t.Fatal(err)
	}
	winner := map[string]int{"refund": 0, "two-step": 1}[th.Graph]
	started := 0
	for i, err := range errs {
		switch {
		case err == nil:
			started++
			if i%2 != winner {
				t.Errorf("request %d started the thread with the losing graph", i)
			}
		case i%2 == winner:
			if !errors.Is(err, interlude.ErrThreadInterrupted) {
				t.Errorf("request %d (same graph): %v", i, err)
			}
		default:
			if ce, ok := err.(*client.Error); !ok || ce.Status != http.StatusBadRequest || ce.Path() != "graph" {
				t.Errorf("request %d (other graph): %v", i, err)
			}
		}
	}
	if started != 1 || th.Status != "interrupted" || len(th.Interrupts) != 1 {
		t.Fatalf("%d runs started; thread %+v", started, th)
	}
}
