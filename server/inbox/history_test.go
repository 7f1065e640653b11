package inbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// RoundState is the state of the rounds graph.
type RoundState struct {
	N int `json:"n,omitempty"`
}

// roundsGraph asks "Round N?" once per input, numbering the rounds of a thread.
func roundsGraph(opts ...graph.Option) (graph.Erased, error) {
	g := graph.New[RoundState]()
	g.AddNode("ask", func(ctx context.Context, s RoundState) (RoundState, error) {
		if _, err := interlude.Interrupt(ctx, interlude.Request{Message: fmt.Sprintf("Round %d?", s.N+1)}); err != nil {
			return RoundState{}, err
		}
		return RoundState{N: s.N + 1}, nil
	})
	g.AddEdge(graph.Start, "ask")
	c, err := g.Compile(append([]graph.Option{graph.WithName("rounds")}, opts...)...)
	if err != nil {
		return nil, err
	}
	return c.Erase(), nil
}

// TestALongThreadsHistoryIsReadAPageAtATime opens questions of a thread whose
// history is longer than a page: the inbox reads the newest page, reads back
// only as far as an old question it is asked to show, and shows earlier
// history when asked; it never asks for the whole history at once.
func TestALongThreadsHistoryIsReadAPageAtATime(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil, roundsGraph)
	c := e.client()
	var first string
	const rounds = 12
	for i := range rounds {
		res := e.start(c, "rounds", "long", map[string]any{})
		if i == 0 {
			first = res.Interrupts[0].ID
		}
		if i < rounds-1 {
			if _, err := c.Resume(context.Background(), "long", res.Interrupts[0].ID, true); err != nil {
				t.Fatal(err)
			}
		}
	}

	openInbox(t, ctx, e)
	until(t, ctx, "the pending question", rows+` === 1`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("long"))))
	until(t, ctx, "its page", `document.querySelector('.question h2')?.innerText === 'Round 12?' && document.querySelector('.history')`)
	timeline := `[...document.querySelectorAll('.history .timeline .asked')].map(e => e.innerText.trim())`
	shown := eval[[]string](t, ctx, timeline)
	if len(shown) == 0 || len(shown) >= rounds || shown[len(shown)-1] != "This question Round 12?" {
		t.Fatalf("the first page of history shows %q; want the latest rounds only", shown)
	}
	for range rounds {
		if !eval[bool](t, ctx, `Boolean(document.querySelector('.history button.older-history'))`) {
			break
		}
		before := len(eval[[]string](t, ctx, timeline))
		do(t, ctx, "show earlier history", chromedp.Click(chromedp.CSS(`.history button.older-history`)))
		until(t, ctx, "earlier rounds", fmt.Sprintf(`%s.length > %d || document.querySelector('.history .form-error')`, timeline, before))
		if got := eval[string](t, ctx, `document.activeElement?.innerText ?? ''`); got != "Show earlier history" && got != "History" {
			t.Errorf("after showing earlier history the focus is on %q", got)
		}
	}
	shown = eval[[]string](t, ctx, timeline)
	if len(shown) != rounds || shown[0] != "Round 1?" {
		t.Fatalf("the whole history shows %q; want rounds 1 to %d", shown, rounds)
	}
	contains(t, "round 1 in the history", text(t, ctx, ".history .timeline li"), "Round 1?", "Approved")

	// An answered question older than the newest page, opened by its address.
	do(t, ctx, "open round 1", chromedp.Navigate(fmt.Sprintf("%s/inbox/#/q/long/%s", e.url, first)))
	until(t, ctx, "round 1", `document.querySelector('.question h2')?.innerText === 'Round 1?'`)
	contains(t, "round 1", text(t, ctx, ".question .resolved"), "Approved")

	// Every read of history was a page.
	urls := eval[[]string](t, ctx, `performance.getEntriesByType('resource').map(r => r.name).filter(u => u.includes('/history'))`)
	if len(urls) == 0 {
		t.Fatal("the page read no history")
	}
	for _, u := range urls {
		if !strings.Contains(u, "limit=") {
			t.Errorf("the inbox asked for the whole history: %s", u)
		}
	}
}
