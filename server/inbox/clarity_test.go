package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
)

// openApproval starts a support-agent thread asking for a refund and opens its
// approval in the inbox of a server without sign-in.
func openApproval(t *testing.T, ctx context.Context, e *env, thread, text string) {
	t.Helper()
	e.ask(e.client(), thread, text)
	openInbox(t, ctx, e)
	until(t, ctx, "the approval in the list", `document.querySelector(`+js(row(thread))+`)`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row(thread))))
	until(t, ctx, "the decision", `document.querySelector('.decision')`)
}

func TestAnEditedApprovalShowsTheArgumentsThatRanBesideTheModelsProposal(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil)
	openApproval(t, ctx, e, "s-edit", "Please refund $150 on order A-2002")

	do(t, ctx, "choose edit", chromedp.Click(chromedp.CSS(`.decision input[value="edit"]`)))
	setField(t, ctx, amountField+" input", "40")
	// While editing, the change shows field by field.
	contains(t, "the changes while editing", text(t, ctx, ".live-changes"), "Amount", "150", "40")
	do(t, ctx, "run with the edit", chromedp.Click(chromedp.CSS(`form.tool-approval button[type=submit]`)))
	until(t, ctx, "the confirmation", `document.querySelector('.flash')?.innerText.includes('Approved with edited arguments')`)

	check := func(when string) {
		t.Helper()
		if h := text(t, ctx, ".tool h4"); !strings.Contains(h, "ran with") {
			t.Errorf("%s: the arguments are headed %q, not as the ones that ran", when, h)
		}
		amount := `.tool table.diff tr[data-key="amount"]`
		if got := text(t, ctx, amount+" td.ran"); !strings.HasPrefix(got, "40") {
			t.Errorf("%s: the amount that ran reads %q, want 40", when, got)
		}
		if got := text(t, ctx, amount+" td.proposed"); got != "150" {
			t.Errorf("%s: the amount the model proposed reads %q, want 150", when, got)
		}
		if !eval[bool](t, ctx, `document.querySelector('.tool tr[data-key="amount"]').classList.contains('changed') && !document.querySelector('.tool tr[data-key="order_id"]').classList.contains('changed')`) {
			t.Errorf("%s: the changed field is not marked, or an unchanged one is", when)
		}
		if ran := text(t, ctx, ".tool table.diff td.ran"); strings.Contains(eval[string](t, ctx, `[...document.querySelectorAll('.tool td.ran')].map(td => td.innerText).join('|')`), "150") {
			t.Errorf("%s: the arguments that ran show the model's 150: %s", when, ran)
		}
		if bg := eval[string](t, ctx, `getComputedStyle(document.querySelector('.tool tr.changed td')).backgroundColor`); bg == "rgba(0, 0, 0, 0)" {
			t.Errorf("%s: the changed field is not highlighted", when)
		}
		contains(t, when+": the history", text(t, ctx, ".history .entry.approved"), "Approved with edited arguments", "Amount", "150", "40")
		if strings.Contains(text(t, ctx, ".question"), "the arguments given") {
			t.Errorf("%s: what ran is still folded away", when)
		}
	}
	check("right after answering")
	th, err := e.client().Thread(context.Background(), "s-edit")
	if err != nil || !strings.Contains(string(th.Messages), "Refunded $40 on order A-2002.") {
		t.Fatalf("the tool did not run with the edit: %v %s", err, th.Messages)
	}

	// Opened later by its address, the page says the same, from the history.
	href := eval[string](t, ctx, `location.href`)
	do(t, ctx, "open it again", chromedp.Navigate(e.url+"/inbox/"), chromedp.Navigate(href))
	until(t, ctx, "the answered question", `document.querySelector('.question[data-status="answered"] .tool table.diff')`)
	check("opened later")
}

func TestEachChoiceSaysWhatItDoesAndRejectingAsksForTheReason(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil)
	e.start(e.client(), "refund", "r-yn", map[string]any{"amount": 150})
	openInbox(t, ctx, e)
	until(t, ctx, "the question", rows+` === 1`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("r-yn"))))
	until(t, ctx, "the yes/no form", `document.querySelector('.answer button.approve')`)

	// Every button is described by a visible line saying what it does.
	described := eval[[]string](t, ctx, `['button.approve', 'button.decline', 'button.cancel-question'].map((s) => {
		const b = document.querySelector('.answer ' + s);
		const d = document.getElementById(b.getAttribute('aria-describedby') ?? '');
		return d && d.offsetParent !== null ? d.innerText : '';
	})`)
	for i, want := range []string{"yes", "no", "Withdraws the question"} {
		if !strings.Contains(described[i], want) {
			t.Errorf("choice %d is described as %q, want a line with %q", i, described[i], want)
		}
	}
	contains(t, "the reject summary", text(t, ctx, "details.more-actions summary"), "Reject with a reason", "says why")

	// Opening the rejection puts the focus in its reason; without one it is not sent.
	do(t, ctx, "open the rejection", chromedp.Click(chromedp.CSS(`details.more-actions summary`)))
	until(t, ctx, "the reason, focused", `document.activeElement === document.querySelector('form.reject-form textarea')`)
	setField(t, ctx, "form.reject-form textarea", "   ")
	do(t, ctx, "reject without a reason", chromedp.Click(chromedp.CSS(`form.reject-form button[type=submit]`)))
	until(t, ctx, "the reason asked for", `document.querySelector('form.reject-form textarea').getAttribute('aria-invalid') === 'true'`)
	contains(t, "the reason's error", text(t, ctx, "form.reject-form .error"), "Write the reason")
	if th, _ := e.client().Thread(context.Background(), "r-yn"); th == nil || th.Status != "interrupted" {
		t.Fatalf("a rejection without a reason was sent: %+v", th)
	}
	setField(t, ctx, "form.reject-form textarea", "Over the limit")
	do(t, ctx, "reject", chromedp.Click(chromedp.CSS(`form.reject-form button[type=submit]`)))
	until(t, ctx, "the rejection", `document.querySelector('.history .entry.rejected')?.innerText.includes('Over the limit')`)

	// A tool approval: each decision says what happens, and reject, chosen,
	// asks for its reason at once.
	openApproval(t, ctx, e, "s-yn", "Please refund $900 on order B-7")
	helps := eval[[]string](t, ctx, `[...document.querySelectorAll('.decision .choice .help')].map((p) => p.innerText)`)
	contains(t, "the decisions", strings.Join(helps, "\n"), "runs with the arguments shown above", "does not run; the agent is told why", "the agent gets your text")
	contains(t, "the cancel choice", text(t, ctx, ".cancel-form .does .help"), "issue_refund does not run")
	do(t, ctx, "choose reject", chromedp.Click(chromedp.CSS(`.decision input[value="reject"]`)))
	until(t, ctx, "the reason, focused", `document.activeElement === document.querySelector('[data-path="/error"] textarea')`)
	do(t, ctx, "reject without a reason", chromedp.Click(chromedp.CSS(`form.tool-approval button[type=submit]`)))
	until(t, ctx, "the reason asked for", `document.querySelector('[data-path="/error"] textarea').getAttribute('aria-invalid') === 'true'`)
	if th, _ := e.client().Thread(context.Background(), "s-yn"); th == nil || th.Status != "interrupted" {
		t.Fatalf("a rejection without a reason was sent: %+v", th)
	}
}

func TestTheAnsweredApprovalSpeaksTheAnswerersLanguage(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil)
	openApproval(t, ctx, e, "s-words", "Please refund $40 on order A-2002")
	page := text(t, ctx, ".question")
	if facts := text(t, ctx, ".question .facts"); strings.Contains(facts, "Node") || strings.Contains(facts, "tools") {
		t.Errorf("the question's facts name the agent's tool node: %q", facts)
	}
	for _, jargon := range []string{"Input schema", "call_0", "Call "} {
		if strings.Contains(page, jargon) {
			t.Errorf("the question shows %q:\n%s", jargon, page)
		}
	}
	do(t, ctx, "approve", chromedp.Click(chromedp.CSS(`form.tool-approval button[type=submit]`)))
	until(t, ctx, "the confirmation", `document.querySelector('.flash')`)

	// One confirmation, saying who answered in words a person reads.
	if n := eval[int](t, ctx, `document.querySelectorAll('.question .resolved, .question .flash').length`); n != 1 {
		t.Errorf("after answering the page shows %d confirmations, want 1", n)
	}
	contains(t, "the confirmation", text(t, ctx, ".flash"), "Approved by you", "The thread finished.")
	if strings.Contains(text(t, ctx, ".question"), "anonymous") {
		t.Error("the page calls the answerer anonymous")
	}

	// Tool results are turns of their own, named after their tool.
	do(t, ctx, "unfold the conversation", chromedp.Click(chromedp.CSS(`details.conversation summary`)))
	labels := eval[[]string](t, ctx, `[...document.querySelectorAll('li.message .role')].map((p) => p.textContent)`)
	want := []string{"User", "Agent", "Tool result: lookup_order", "Tool result: issue_refund", "Agent"}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("the conversation's turns are %q, want %q", labels, want)
	}
	contains(t, "the refund's result", text(t, ctx, "li.message.role-tool:nth-of-type(4)"), "Refunded $40 on order A-2002.")
}

func TestANumberOutsideItsLimitsGetsOneMessageThePagesOwn(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil, tripGraph)
	e.start(e.client(), "trip", "trip-n", map[string]any{})
	openInbox(t, ctx, e)
	until(t, ctx, "the question", rows+` === 1`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("trip-n"))))
	until(t, ctx, "the form", `document.querySelector('form.answer-form')`)
	if !eval[bool](t, ctx, `document.querySelector('form.answer-form').noValidate`) {
		t.Error("the form lets the browser show its own messages beside the page's")
	}
	setField(t, ctx, field("/destination")+" input", "Lisbon")
	setField(t, ctx, field("/budget/limit")+" input", "100")
	nights := field("/nights")
	for value, want := range map[string]string{"0": "Enter 1 or more.", "15": "Enter 14 or less.", "2.5": "Enter a whole number."} {
		setField(t, ctx, nights+" input", value)
		do(t, ctx, "send", chromedp.Click(chromedp.CSS(`form.answer-form button[type=submit]`)))
		until(t, ctx, "the message at nights", `!document.querySelector('`+nights+` .error').hidden`)
		if got := text(t, ctx, nights+" .error"); !strings.HasSuffix(got, want) {
			t.Errorf("nights %s: the message is %q, want %q", value, got, want)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('form.answer-form .error:not([hidden])').length`); n != 1 {
			t.Errorf("nights %s: %d messages are shown, want 1", value, n)
		}
		state := eval[string](t, ctx, `(() => {
			const i = document.querySelector('`+nights+` input');
			const err = document.querySelector('`+nights+` .error');
			return [i.getAttribute('aria-invalid'), (i.getAttribute('aria-describedby') ?? '').split(' ').includes(err.id), document.activeElement === i].join(' ');
		})()`)
		if state != "true true true" {
			t.Errorf("nights %s: aria-invalid, described by the message, focused = %s; want all true", value, state)
		}
	}
	if th, _ := e.client().Thread(context.Background(), "trip-n"); th == nil || th.Status != "interrupted" {
		t.Fatalf("an answer outside the limits was sent: %+v", th)
	}
	setField(t, ctx, nights+" input", "3")
	until(t, ctx, "the message to clear", `document.querySelector('`+nights+` .error').hidden`)
}

func TestTheListStaysAtTheTopBesideALongQuestion(t *testing.T) {
	value := map[string]any{}
	for i := 0; i < 14; i++ {
		value[fmt.Sprintf("section_%02d", i)] = strings.Repeat("A sentence of the report that takes room. ", 12)
	}
	long := askingGraph("long", interlude.Request{Message: "Sign off the quarterly report?", Value: value,
		Schema: `{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}`})
	for _, size := range []struct {
		name          string
		width, height int64
		wide          bool
	}{{"wide", 1280, 800, true}, {"narrow", 390, 844, false}} {
		t.Run(size.name, func(t *testing.T) {
			ctx := tab(t)
			e := newEnv(t, nil, long)
			for i := 0; i < 12; i++ {
				e.start(e.client(), "refund", fmt.Sprintf("r-%02d", i), map[string]any{"amount": 10 + i})
			}
			e.start(e.client(), "long", "long-1", map[string]any{})
			do(t, ctx, "size the window", chromedp.EmulateViewport(size.width, size.height))
			openInbox(t, ctx, e)
			until(t, ctx, "the questions", rows+` === 13`)
			listTop := `document.querySelector('.list-pane').getBoundingClientRect().top`
			before := eval[float64](t, ctx, listTop)
			do(t, ctx, "open the long question", chromedp.Click(chromedp.CSS(row("long-1"))))
			until(t, ctx, "its page", `document.querySelector('.question .history')`)
			if top := eval[float64](t, ctx, `document.querySelector('.question h2').getBoundingClientRect().top`); top < 0 || top > 250 {
				t.Errorf("the question's title is %v px down the window, want it at the top", top)
			}
			if tall := eval[float64](t, ctx, `document.querySelector('.question').getBoundingClientRect().height / innerHeight`); tall < 2 {
				t.Fatalf("the question is %.1f windows tall, want a long one", tall)
			}
			// Read to the end of the question.
			do(t, ctx, "scroll to its end", chromedp.Evaluate[chromedp.Void](`document.querySelector('.question .history').scrollIntoView({block: 'end'})`))
			if size.wide {
				if top := eval[float64](t, ctx, listTop); top != before || top > 100 {
					t.Errorf("beside the question read to its end the list is %v px down the window (%v before), want it where it was, at the top", top, before)
				}
				if !eval[bool](t, ctx, `(() => { const p = document.querySelector('.list-pane'); return p.scrollHeight > p.clientHeight && getComputedStyle(p).overflowY === 'auto' })()`) {
					t.Error("the long list does not scroll on its own")
				}
				return
			}
			// At phone width the question replaces the list; back, the list is at the top.
			do(t, ctx, "go back", chromedp.Evaluate[chromedp.Void](`history.back()`))
			until(t, ctx, "the list again", `document.querySelector('.list-pane').offsetParent !== null`)
			if top := eval[float64](t, ctx, `document.getElementById('list-title').getBoundingClientRect().top`); top < 0 || top > 150 {
				t.Errorf("back from the question's end the list's title is %v px down the window, want it at the top", top)
			}
		})
	}
}

func TestAmountsKeepTheirCentsAndAreSentUnchanged(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil)
	e.start(e.client(), "refund", "r-cents", map[string]any{"amount": 89.5})
	openInbox(t, ctx, e)
	until(t, ctx, "the question", rows+` === 1`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("r-cents"))))
	until(t, ctx, "its details", `document.querySelector('.value')`)
	contains(t, "the details", text(t, ctx, ".value"), "89.50")

	openApproval(t, ctx, e, "s-cents", "Please refund $89.50 on order A-2002")
	contains(t, "the arguments", text(t, ctx, `.tool tr[data-key="amount"] td`), "89.50")
	do(t, ctx, "choose edit", chromedp.Click(chromedp.CSS(`.decision input[value="edit"]`)))
	if v := eval[string](t, ctx, `document.querySelector('`+amountField+` input').value`); v != "89.50" {
		t.Errorf("the amount field shows %q, want 89.50", v)
	}
	setField(t, ctx, `[data-path="/arguments/reason"] textarea, [data-path="/arguments/reason"] input`, "broken on arrival")
	do(t, ctx, "run with the edit", chromedp.Click(chromedp.CSS(`form.tool-approval button[type=submit]`)))
	until(t, ctx, "the confirmation", `document.querySelector('.flash')`)
	h, err := e.client().History(context.Background(), "s-cents", client.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Arguments struct {
			Amount json.Number `json:"amount"`
		} `json:"arguments"`
	}
	found := false
	for _, cp := range h.Checkpoints {
		for _, r := range cp.Resolved {
			if json.Unmarshal(r.Response, &sent) == nil && sent.Arguments.Amount != "" {
				found = true
			}
		}
	}
	if !found || sent.Arguments.Amount != "89.5" {
		t.Errorf("the amount sent is %q (found %v), want the same number, 89.5", sent.Arguments.Amount, found)
	}
}

func TestAWaitingApprovalShowsTheToolResultsThatAlreadyFinished(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil)
	openApproval(t, ctx, e, "s-finished", "Please refund $40 on order A-2002")
	contains(t, "the conversation's summary", text(t, ctx, "details.conversation summary"), "1 finished tool result")
	do(t, ctx, "unfold the conversation", chromedp.Click(chromedp.CSS(`details.conversation summary`)))
	finished := text(t, ctx, "li.message.finished")
	contains(t, "the finished lookup", finished, "Tool result: lookup_order", "finished while this question waits", `"customer":"Sam Lee"`)
	if n := eval[int](t, ctx, `document.querySelectorAll('li.message.role-tool').length`); n != 1 {
		t.Errorf("the waiting turn shows %d tool results, want only the finished lookup", n)
	}
}

func TestAQuestionFromAnInnerAgentShowsItsBreadcrumb(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil, func(opts ...graph.Option) (graph.Erased, error) {
		a, err := graphs.TeamAgent(nil, nil, opts...)
		if err != nil {
			return nil, err
		}
		return a.Erase(), nil
	})
	res, err := e.client().Invoke(context.Background(), client.InvokeRequest{Graph: "team-agent", ThreadID: "team-1",
		Messages: []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "Please refund order A-1001"}}}}})
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	openInbox(t, ctx, e)
	until(t, ctx, "the approval in the list", `document.querySelector(`+js(row("team-1"))+`)`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("team-1"))))
	until(t, ctx, "the decision", `document.querySelector('.decision')`)
	contains(t, "the question's facts", text(t, ctx, ".question .facts"), "team-agent › billing › issue_refund")
}
