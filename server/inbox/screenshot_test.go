package inbox_test

import (
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/interludehq/interlude/server"
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
	e := newEnv(t, []server.Token{alice, ci})
	c := e.client(ci)
	e.start(c, "refund", "order-1042", map[string]any{"amount": 150})
	e.start(c, "two-step", "deploy-web-7", map[string]any{})
	e.start(c, "refund", "order-1057", map[string]any{"amount": 89.5})
	e.start(c, "parallel", "launch-3", map[string]any{})
	e.ask(c, "ticket-4821", "Hi, the blender arrived broken. Please refund $40 on order A-2002.")

	do(t, ctx, "size the window", chromedp.EmulateViewport(1280, 1060))
	openInbox(t, ctx, e)
	signIn(t, ctx, alice)
	until(t, ctx, "the questions", rows+` === 6`)
	do(t, ctx, "open the approval", chromedp.Click(chromedp.CSS(row("ticket-4821"))))
	until(t, ctx, "the approval", `document.querySelector('.decision')`)
	do(t, ctx, "unfocus", chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); window.scrollTo(0, 0)`))
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", out, len(png))
}
