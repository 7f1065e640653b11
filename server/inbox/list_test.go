package inbox_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store/memory"
)

func TestInboxListsPendingQuestionsLiveAndAnAnsweredOneLeavesWithoutAReload(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil) // no tokens: no sign-in
	c := e.client()
	e.start(c, "refund", "r-1", map[string]any{"amount": 150})
	e.start(c, "refund", "r-2", map[string]any{"amount": 75})
	e.start(c, "refund", "r-3", map[string]any{"amount": 20})
	e.start(c, "parallel", "p-1", map[string]any{})

	openInbox(t, ctx, e)
	until(t, ctx, "five questions, live", rows+` === 5 && document.body.dataset.live === 'on'`)
	do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.samePage = true`))
	if got := text(t, ctx, "#count"); got != "5" {
		t.Errorf("count %q, want 5", got)
	}
	// Newest first: the parallel thread's two questions, then r-3, r-2, r-1.
	order := eval[string](t, ctx, `[...document.querySelectorAll('#questions li')].map(li => li.dataset.thread).join(' ')`)
	if order != "p-1 p-1 r-3 r-2 r-1" {
		t.Errorf("order %q, want p-1 p-1 r-3 r-2 r-1", order)
	}

	// Approve r-2 in the page.
	do(t, ctx, "open r-2", chromedp.Click(chromedp.CSS(row("r-2"))))
	until(t, ctx, "the question", `document.querySelector('.question h2')?.innerText === 'Approve a refund of $75?'`)
	do(t, ctx, "approve", chromedp.Click(chromedp.CSS(`.answer button.approve`)))
	until(t, ctx, "the answer's outcome", `document.querySelector('.flash')?.innerText.includes('Approved')`)
	until(t, ctx, "r-2 to leave the list", rows+` === 4 && !document.querySelector('#questions li[data-thread="r-2"]')`)
	th, err := c.Thread(context.Background(), "r-2")
	if err != nil {
		t.Fatal(err)
	}
	if th.Status != "idle" || !strings.Contains(string(th.Values), `"outcome":"refunded"`) {
		t.Errorf("r-2 is %s with %s, want idle and refunded", th.Status, th.Values)
	}

	// A question asked meanwhile appears, first.
	e.start(c, "refund", "r-4", map[string]any{"amount": 9})
	until(t, ctx, "r-4 to appear", rows+` === 5 && document.querySelector('#questions li')?.dataset.thread === 'r-4'`)
	// A question answered elsewhere leaves the list, and its open page says so.
	do(t, ctx, "open r-1", chromedp.Click(chromedp.CSS(row("r-1"))))
	until(t, ctx, "r-1's form", `document.querySelector('.question h2')?.innerText === 'Approve a refund of $150?' && document.querySelector('.answer button.approve')`)
	r1, err := c.Thread(context.Background(), "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resume(context.Background(), "r-1", r1.Interrupts[0].ID, map[string]any{"approved": false}); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, "r-1 to leave the list", rows+` === 4 && !document.querySelector('#questions li[data-thread="r-1"]')`)
	until(t, ctx, "the page to say it was answered", `document.querySelector('.gone')?.offsetParent !== null && document.querySelector('form.answer-form').inert`)
	contains(t, "the notice", text(t, ctx, ".gone"), "answered meanwhile")
	do(t, ctx, "see how", chromedp.Click(chromedp.CSS(`.gone a`)))
	until(t, ctx, "the answer", `document.querySelector('.resolved')?.innerText.includes('Declined')`)
	if got := text(t, ctx, ".resolved"); strings.Contains(got, "anonymous") || strings.Contains(got, " by ") {
		t.Errorf("an answer given without sign-in is said to be by someone: %s", got)
	}

	if !eval[bool](t, ctx, `window.samePage === true`) {
		t.Error("the page was reloaded")
	}
}

func TestWithoutAnEventHubTheInboxReadsTheListOnATimer(t *testing.T) {
	ctx := tab(t)
	g, err := graphs.Refund(graph.WithStore(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.WithGraph(g.Erase()), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	e := &env{t: t, url: hs.URL, srv: srv}
	e.start(e.client(), "refund", "r-1", map[string]any{"amount": 5})
	openInbox(t, ctx, e)
	until(t, ctx, "the list, read on a timer", rows+` === 1 && document.body.dataset.live === 'polling'`)
	contains(t, "the status", text(t, ctx, "#live-status"), "every 15 s")
}

// listeners reads how many live event streams the server has open.
func listeners(t *testing.T, e *env) int {
	t.Helper()
	resp, err := http.Get(e.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, "interlude_event_listeners "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no interlude_event_listeners in /metrics:\n%s", body)
	return 0
}

// untilListeners waits until the server has n live event streams open.
func untilListeners(t *testing.T, e *env, n int) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); listeners(t, e) != n; {
		if time.Now().After(deadline) {
			t.Fatalf("the server has %d live event streams open, want %d", listeners(t, e), n)
		}
		time.Sleep(20 * time.Millisecond) // polling the server's count until the browser's change reaches it
	}
}

func TestAHiddenTabGivesItsLiveStreamUpAndCatchesUpWhenShown(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil)
	c := e.client()
	e.start(c, "refund", "v-1", map[string]any{"amount": 5})
	openInbox(t, ctx, e)
	until(t, ctx, "one question, live", rows+` === 1 && document.body.dataset.live === 'on'`)
	untilListeners(t, e, 1)
	show := func(state string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`Object.defineProperty(document, 'visibilityState', {value: ` + js(state) + `, configurable: true});
			document.dispatchEvent(new Event('visibilitychange'))`)
	}
	do(t, ctx, "hide the tab", show("hidden"))
	untilListeners(t, e, 0)
	e.start(c, "refund", "v-2", map[string]any{"amount": 6}) // asked while nobody listens
	do(t, ctx, "show the tab", show("visible"))
	until(t, ctx, "the question asked meanwhile, live again", rows+` === 2 && document.body.dataset.live === 'on'`)
	untilListeners(t, e, 1)
}
