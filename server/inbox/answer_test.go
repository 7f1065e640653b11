package inbox_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
)

const amountField = `[data-path="/arguments/amount"]`

func TestToolApprovalEditedInTheFormRunsTheToolWithTheEditAndShowsServerErrorsAtTheField(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, []auth.Token{alice, ci})
	e.ask(e.client(ci), "s-1", "Please refund $40 on order A-2002")

	openInbox(t, ctx, e)
	signIn(t, ctx, alice)
	until(t, ctx, "the approval in the list", rows+` === 1`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("s-1"))))
	until(t, ctx, "the tool call", `document.querySelector('.tool .tool-name')?.innerText === 'issue_refund'`)
	contains(t, "the arguments", text(t, ctx, ".tool .arguments"), "Order ID", "A-2002", "Amount", "40")

	// Edit: the form is the tool's input schema, filled with the model's arguments.
	do(t, ctx, "choose edit", chromedp.Click(chromedp.CSS(`.decision input[value="edit"]`)))
	until(t, ctx, "the arguments form", `document.querySelector('`+amountField+` input')?.offsetParent !== null`)
	if v := eval[string](t, ctx, `document.querySelector('`+amountField+` input').value`); v != "40" {
		t.Errorf("amount is filled with %q, want 40", v)
	}
	attrs := eval[string](t, ctx, `(() => { const i = document.querySelector('`+amountField+` input'); return [i.type, i.min, i.max, i.required].join(' ') })()`)
	if attrs != "number 0 10000 true" {
		t.Errorf("the amount input is %q, want type number, min 0, max 10000, required", attrs)
	}

	// Above the maximum: the browser refuses it; past the browser, the server does,
	// and its error shows at the field with nothing lost.
	setField(t, ctx, amountField+" input", "20000")
	if eval[bool](t, ctx, `document.querySelector('form.tool-approval').checkValidity()`) {
		t.Error("the browser's own check accepts an amount above the maximum")
	}
	skipPageChecks(t, ctx, "form.tool-approval")
	do(t, ctx, "send the edit", chromedp.Click(chromedp.CSS(`form.tool-approval button[type=submit]`)))
	until(t, ctx, "the server's error at the amount", `document.querySelector('`+amountField+` .error')?.offsetParent !== null`)
	contains(t, "the amount's error", text(t, ctx, amountField+" .error"), "maximum")
	contains(t, "the error summary", text(t, ctx, "form.tool-approval .error-summary"), "refused", "Amount")
	if v := eval[string](t, ctx, `[...document.querySelectorAll('[data-path^="/arguments/"] input, [data-path^="/arguments/"] textarea')].map(i => i.value).join('|')`); v != "A-2002|20000|customer request" {
		t.Errorf("after the refusal the form holds %q", v)
	}
	if th, err := e.client(ci).Thread(context.Background(), "s-1"); err != nil || th.Status != "interrupted" {
		t.Fatalf("after a refused answer the thread is %v, %v", th, err)
	}

	// A valid edit runs the tool with it.
	setField(t, ctx, amountField+" input", "25")
	until(t, ctx, "the error to clear", `document.querySelector('`+amountField+` .error').hidden`)
	do(t, ctx, "send the edit", chromedp.Click(chromedp.CSS(`form.tool-approval button[type=submit]`)))
	until(t, ctx, "the outcome", `document.querySelector('.flash')?.innerText.includes('Approved with edited arguments')`)
	th, err := e.client(ci).Thread(context.Background(), "s-1")
	if err != nil {
		t.Fatal(err)
	}
	if th.Status != "idle" || !strings.Contains(string(th.Messages), "Refunded $25 on order A-2002.") {
		t.Errorf("the thread is %s with messages %s; want the tool to have refunded $25", th.Status, th.Messages)
	}
	contains(t, "the history", text(t, ctx, ".history"), "Approved with edited arguments by alice")
	until(t, ctx, "the list to empty", rows+` === 0`)
}

func TestRejectingWithAReasonShowsInTheHistoryWithTheApproversName(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, []auth.Token{alice, ci})
	e.ask(e.client(ci), "s-2", "Please refund $900 on order B-7")
	e.start(e.client(ci), "two-step", "t-1", map[string]any{})

	openInbox(t, ctx, e)
	signIn(t, ctx, alice)
	until(t, ctx, "two questions", rows+` === 2`)

	// A tool approval, rejected with a reason (POST /reject).
	do(t, ctx, "open the approval", chromedp.Click(chromedp.CSS(row("s-2"))))
	until(t, ctx, "the decision", `document.querySelector('.decision')`)
	do(t, ctx, "choose reject", chromedp.Click(chromedp.CSS(`.decision input[value="reject"]`)))
	setField(t, ctx, `[data-path="/error"] textarea`, "Refunds above $500 need a manager")
	do(t, ctx, "reject", chromedp.Click(chromedp.CSS(`form.tool-approval button[type=submit]`)))
	until(t, ctx, "the rejection in the history", `document.querySelector('.history .entry.rejected')`)
	contains(t, "the history", text(t, ctx, ".history .entry.rejected"), "Rejected", "Refunds above $500 need a manager", "alice")
	h, err := e.client(ci).History(context.Background(), "s-2", client.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, xs := range h.ToolCalls {
		for _, x := range xs {
			if r := x.Resolution; r != nil && r.Status == "rejected" && r.By == "alice" && r.Error != nil && r.Error.Message == "Refunds above $500 need a manager" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("the tool call's history has no rejection by alice with the reason: %+v", h.ToolCalls)
	}
	th, _ := e.client(ci).Thread(context.Background(), "s-2")
	if !strings.Contains(string(th.Messages), "Refunds above $500 need a manager") {
		t.Errorf("the model did not see the reason: %s", th.Messages)
	}

	// A plain question: approve step 1, then reject step 2 with a reason; the
	// history shows both, with who answered.
	do(t, ctx, "open step 1", chromedp.Click(chromedp.CSS(row("t-1"))))
	until(t, ctx, "step 1", `document.querySelector('.question h2')?.innerText === 'Approve step 1?'`)
	do(t, ctx, "approve", chromedp.Click(chromedp.CSS(`.answer button.approve`)))
	until(t, ctx, "the link to step 2", `[...document.querySelectorAll('.flash a')].some(a => a.innerText === 'Approve step 2?')`)
	do(t, ctx, "open step 2", chromedp.Click(chromedp.CSS(`.flash a[href*="int_"]`)))
	until(t, ctx, "step 2", `document.querySelector('.question h2')?.innerText === 'Approve step 2?' && document.querySelector('.answer')`)
	contains(t, "step 2's history", text(t, ctx, ".history"), "Approve step 1?", "Approved by alice", "Waiting for an answer")
	do(t, ctx, "open the rejection", chromedp.Click(chromedp.CSS(`details.more-actions summary`)))
	setField(t, ctx, `form.reject-form textarea`, "Not today")
	do(t, ctx, "reject", chromedp.Click(chromedp.CSS(`form.reject-form button[type=submit]`)))
	until(t, ctx, "the rejection", `document.querySelector('.history .entry.rejected')`)
	contains(t, "the history", text(t, ctx, ".history"), "Approve step 1?", "Approved by alice", "Approve step 2?", "Rejected", "Not today")
	th, _ = e.client(ci).Thread(context.Background(), "t-1")
	if !strings.Contains(string(th.Values), `"outcome":"stopped"`) {
		t.Errorf("t-1: %s", th.Values)
	}
}

func TestCancellingAQuestionIsAlwaysOffered(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil)
	e.start(e.client(), "refund", "r-9", map[string]any{"amount": 12})
	openInbox(t, ctx, e)
	until(t, ctx, "the question", rows+` === 1`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("r-9"))))
	do(t, ctx, "ask to cancel", chromedp.Click(chromedp.CSS(`button.cancel-question`)))
	do(t, ctx, "confirm", chromedp.Click(chromedp.CSS(`form.cancel-form .confirm button[type=submit]`)))
	until(t, ctx, "the cancellation", `document.querySelector('.history .entry.cancelled')?.innerText.includes('Cancelled')`)
	if h := text(t, ctx, ".history"); strings.Contains(h, "anonymous") || strings.Contains(h, " by ") {
		t.Errorf("without sign-in the history names someone: %s", h)
	}
	th, _ := e.client().Thread(context.Background(), "r-9")
	if !strings.Contains(string(th.Values), `"outcome":"cancelled"`) {
		t.Errorf("r-9: %s", th.Values)
	}
	until(t, ctx, "the list to empty", rows+` === 0 && document.querySelector('#empty')?.innerText.includes('Nothing is waiting')`)
}

func TestATokenWithoutTheApproveRoleSeesTheQuestionsButNoAnswerButtons(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, []auth.Token{alice, ci, viewer})
	res := e.start(e.client(ci), "refund", "r-1", map[string]any{"amount": 150})

	openInbox(t, ctx, e)
	// A wrong token is refused at the sign-in.
	until(t, ctx, "the sign-in", `document.body.dataset.state === 'signin'`)
	do(t, ctx, "try a wrong token", chromedp.SendKeys(chromedp.ID("token"), "not-a-token"), chromedp.Click(chromedp.CSS(`form.signin button[type=submit]`)))
	until(t, ctx, "the refusal", `!document.getElementById('signin-error').hidden`)
	contains(t, "the refusal", text(t, ctx, "#signin-error"), "not valid")
	setField(t, ctx, "#token", "")
	signIn(t, ctx, viewer)
	contains(t, "the header", text(t, ctx, "#who"), "viewer", "read only")
	if eval[string](t, ctx, `sessionStorage.getItem('interlude.token')`) != viewer.Secret {
		t.Error("the token is not in sessionStorage")
	}
	if eval[int](t, ctx, `localStorage.length`) != 0 || eval[string](t, ctx, `document.cookie`) != "" {
		t.Error("the token went beyond sessionStorage")
	}

	until(t, ctx, "the question", rows+` === 1`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("r-1"))))
	until(t, ctx, "the read-only note", `document.querySelector('.note.readonly')`)
	if n := eval[int](t, ctx, `document.querySelectorAll('.answer button, .answer form, .answer input').length`); n != 0 {
		t.Errorf("a read-only token sees %d answer controls", n)
	}
	contains(t, "the note", text(t, ctx, ".note.readonly"), "approve role")

	// The API refuses the token anyway.
	_, err := e.client(viewer).Resume(context.Background(), "r-1", res.Interrupts[0].ID, map[string]any{"approved": true})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusForbidden {
		t.Errorf("resuming with the read-only token: %v, want 403", err)
	}

	// Signing out forgets the token.
	do(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`#who button`)))
	until(t, ctx, "the sign-in", `document.body.dataset.state === 'signin'`)
	if eval[bool](t, ctx, `sessionStorage.getItem('interlude.token') !== null`) {
		t.Error("the token outlived signing out")
	}
}

func TestAQuestionThatExpiresWhileOpenSaysItExpired(t *testing.T) {
	ctx := tab(t)
	// The question's time is up as soon as it is asked; the server closes it
	// when the test says, not on its own.
	brief := askingGraph("brief", interlude.Request{Message: "Still wanted?", TTL: time.Nanosecond})
	e := newEnvWith(t, nil, []server.Option{server.WithExpiryWatch(0)}, brief)
	e.start(e.client(), "brief", "b-1", map[string]any{})
	openInbox(t, ctx, e)
	until(t, ctx, "the question", rows+` === 1`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("b-1"))))
	until(t, ctx, "its page", `document.querySelector('.question h2')?.innerText === 'Still wanted?'`)
	if n, err := e.srv.Host().ExpireQuestions(context.Background()); err != nil || n != 1 {
		t.Fatalf("closed %d questions (%v), want 1", n, err)
	}
	until(t, ctx, "the page to say it expired", `document.querySelector('.gone')?.offsetParent !== null`)
	contains(t, "the notice", text(t, ctx, ".gone"), "expired before anyone answered it")
	until(t, ctx, "the list to empty", rows+` === 0`)
}

// importingSupportAgent is the support agent of the examples, allowed to take
// a conversation carried over from elsewhere.
func importingSupportAgent(opts ...graph.Option) (graph.Erased, error) {
	a, err := agent.New(graphs.SupportScript(), graphs.SupportTools(),
		agent.RequireApproval("issue_refund"), agent.WithImportedHistory(),
		agent.WithGraphOptions(append([]graph.Option{graph.WithName("support-import")}, opts...)...))
	if err != nil {
		return nil, err
	}
	return a.Erase(), nil
}

func TestTheConversationFoldsTheModelsThinkingAndHidesRedactedThinking(t *testing.T) {
	ctx := tab(t)
	e := newEnv(t, nil, importingSupportAgent)
	res, err := e.client().Invoke(context.Background(), client.InvokeRequest{Graph: "support-import", ThreadID: "s-t",
		Messages: []map[string]any{
			{"role": "user", "content": []map[string]any{{"type": "text", "text": "Hello"}}},
			{"role": "assistant", "content": []map[string]any{
				{"type": "thinking", "thinking": "The customer greets me; nothing to look up yet.", "signature": "sig-1"},
				{"type": "redacted_thinking", "data": "ENCRYPTED-REASONING"},
				{"type": "text", "text": "Hello! How can I help?"}}},
			{"role": "user", "content": []map[string]any{{"type": "text", "text": "Please refund $40 on order A-2002"}}},
		}})
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("start: %v %+v", err, res)
	}
	openInbox(t, ctx, e)
	until(t, ctx, "the approval in the list", rows+` === 1`)
	do(t, ctx, "open it", chromedp.Click(chromedp.CSS(row("s-t"))))
	until(t, ctx, "the conversation", `document.querySelector('details.conversation summary') !== null`)
	do(t, ctx, "unfold the conversation", chromedp.Click(chromedp.CSS(`details.conversation summary`)))
	until(t, ctx, "the folded thinking", `document.querySelector('details.thinking summary')?.innerText === 'Thinking'`)
	if open := eval[bool](t, ctx, `document.querySelector('details.thinking').open`); open {
		t.Error("the thinking is unfolded; it should start folded")
	}
	contains(t, "the thinking", eval[string](t, ctx, `document.querySelector('details.thinking').textContent`), "nothing to look up yet")
	if page := eval[string](t, ctx, `document.body.textContent`); strings.Contains(page, "ENCRYPTED-REASONING") {
		t.Error("the page shows the redacted thinking's data")
	}
	// The assistant turn came with the input: it says so, and the agent's own
	// turns do not.
	labels := eval[[]string](t, ctx, `[...document.querySelectorAll('li.message')].map((li) => li.querySelector('.role').innerText.toLowerCase())`)
	if len(labels) < 4 || !strings.Contains(labels[1], "imported") || strings.Contains(labels[0], "imported") || strings.Contains(labels[3], "imported") {
		t.Errorf("the conversation's labels are %q; want the second (the imported assistant turn) marked imported, the user's and the agent's own not", labels)
	}
	if visible := eval[bool](t, ctx, `document.querySelector('li.message.imported .imported-label').offsetParent !== null`); !visible {
		t.Error("the imported label is not visible")
	}
}
