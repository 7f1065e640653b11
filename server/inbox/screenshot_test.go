package inbox_test

import (
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/interludehq/interlude/server/auth"
)

// TestScreenshot writes the screenshot of the inbox that the README shows, when
// INTERLUDE_INBOX_SCREENSHOT names the file to write:
//
//	INTERLUDE_INBOX_SCREENSHOT=$PWD/docs/inbox.png go test ./server/inbox -run TestScreenshot
func TestScreenshot(t *testing.T) {
	out := os.Getenv("INTERLUDE_INBOX_SCREENSHOT")
	if out == "" {
		t.Skip("set INTERLUDE_INBOX_SCREENSHOT to a file name to write the inbox's screenshot")
	}
	ctx := tab(t)
	e := newEnv(t, []auth.Token{alice, ci})
	c := e.client(ci)
	e.start(c, "refund", "order-1042", map[string]any{"amount": 150})
	e.start(c, "two-step", "deploy-web-7", map[string]any{})
	e.start(c, "refund", "order-1057", map[string]any{"amount": 89.5})
	e.start(c, "parallel", "launch-3", map[string]any{})
	e.ask(c, "ticket-4821", "Hi, my blender from order A-2002 came with a cracked jug. Can I get a refund?")

	do(t, ctx, "size the window", chromedp.EmulateViewport(1280, 1180))
	openInbox(t, ctx, e)
	signIn(t, ctx, alice)
	until(t, ctx, "the questions", rows+` === 6`)
	// The approval, answered with an edit: what ran beside what the model
	// proposed, and the conversation with the tools' results.
	do(t, ctx, "open the approval", chromedp.Click(chromedp.CSS(row("ticket-4821"))))
	until(t, ctx, "the approval", `document.querySelector('.decision')`)
	do(t, ctx, "choose edit", chromedp.Click(chromedp.CSS(`.decision input[value="edit"]`)))
	setField(t, ctx, amountField+" input", "40")
	do(t, ctx, "run with the edit", chromedp.Click(chromedp.CSS(`form.tool-approval button[type=submit]`)))
	until(t, ctx, "the answer", `document.querySelector('.flash') && document.querySelector('.tool table.diff')`)
	do(t, ctx, "show the conversation", chromedp.Click(chromedp.CSS(`details.conversation summary`)))
	do(t, ctx, "unfocus", chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); document.getElementById('detail').scrollTop = 0`))
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", out, len(png))
}
