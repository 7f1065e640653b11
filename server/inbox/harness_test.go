package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/store/sqlite"
)

// The browser tests share one Chromium (Debian's chromium package, or the binary
// INTERLUDE_TEST_CHROMIUM names), started at the first test that needs it; each
// test gets a tab of its own, and a server of its own on a loopback port. They
// wait with chromedp's polls of a condition in the page, never with sleeps.
// Without Chromium they are skipped, except under CI=true, where they fail.

var browser struct {
	once sync.Once
	ctx  context.Context
	err  error
	stop func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.stop != nil {
		browser.stop()
	}
	os.Exit(code)
}

func chromiumPath() string {
	if p := os.Getenv("INTERLUDE_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

func startBrowser(path string) {
	dir, err := os.MkdirTemp("", "interlude-chromium-")
	if err != nil {
		browser.err = err
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1280, 900),
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	browser.ctx = bctx
	browser.stop = func() {
		bcancel()
		acancel()
		os.RemoveAll(dir)
	}
	browser.err = chromedp.Do(bctx) // starts the browser, without a timeout
}

// tab opens a new tab in the shared browser. Uncaught exceptions and console
// errors of the page (other than failed requests, which the tests cause on
// purpose) fail the test. Without Chromium the test is skipped, or fails under CI.
func tab(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatal("Chromium is missing: install Debian's chromium package or set INTERLUDE_TEST_CHROMIUM")
		}
		t.Skip("skipping the browser tests: no Chromium (install the chromium package or set INTERLUDE_TEST_CHROMIUM)")
	}
	browser.once.Do(func() { startBrowser(path) })
	if browser.err != nil {
		t.Fatalf("start Chromium %s: %v", path, browser.err)
	}
	tctx, cancel := chromedp.NewContext(browser.ctx)
	if err := chromedp.Do(tctx); err != nil {
		cancel()
		t.Fatalf("open a tab: %v", err)
	}
	var mu sync.Mutex
	var problems []string
	done := make(chan struct{})
	messages := chromedp.Console(tctx)
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleException || (m.Type == chromedp.ConsoleError && m.Source != "network") {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s (%s:%d)", m.Text, m.URL, m.Line+1))
				mu.Unlock()
			}
		}
	}()
	ctx, stop := context.WithTimeout(tctx, 60*time.Second)
	t.Cleanup(func() {
		stop()
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Errorf("the page logged: %s", p)
		}
	})
	return ctx
}

// env is a server over the built-in graphs, on a temporary SQLite store.
type env struct {
	t   *testing.T
	url string
	srv *server.Server
}

// Test tokens.
var (
	alice  = auth.Token{Name: "alice", Secret: "alice-approves-0001", Roles: []auth.Role{auth.RoleApprove}}
	ci     = auth.Token{Name: "ci", Secret: "ci-runs-threads-0001", Roles: []auth.Role{auth.RoleRun}}
	viewer = auth.Token{Name: "viewer", Secret: "viewer-reads-00001"}
)

// newEnv serves the built-in graphs, and extra ones, on a fresh SQLite file,
// requiring tokens if any are given.
func newEnv(t *testing.T, tokens []auth.Token, extra ...func(...graph.Option) (graph.Erased, error)) *env {
	t.Helper()
	return newEnvWith(t, tokens, nil, extra...)
}

// newEnvWith is newEnv with server options of the test's own.
func newEnvWith(t *testing.T, tokens []auth.Token, serverOpts []server.Option, extra ...func(...graph.Option) (graph.Erased, error)) *env {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "inbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hub, err := server.NewEventHub()
	if err != nil {
		t.Fatal(err)
	}
	gopts := []graph.Option{graph.WithStore(st), graph.WithEvents(hub.Publish)}
	opts := []server.Option{server.WithEventHub(hub), server.WithLogger(slog.New(slog.DiscardHandler))}
	add := func(g graph.Erased, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, server.WithGraph(g))
	}
	refund, err := graphs.Refund(gopts...)
	add(refund.Erase(), err)
	twoStep, err := graphs.TwoStep(gopts...)
	add(twoStep.Erase(), err)
	parallel, err := graphs.Parallel(gopts...)
	add(parallel.Erase(), err)
	gated, err := graphs.Gated(gopts...)
	add(gated.Erase(), err)
	support, err := graphs.SupportAgent(nil, gopts...)
	if err != nil {
		t.Fatal(err)
	}
	add(support.Erase(), nil)
	for _, b := range extra {
		add(b(gopts...))
	}
	if len(tokens) > 0 {
		opts = append(opts, server.WithTokens(tokens))
	}
	srv, err := server.New(append(opts, serverOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close() // ends the pages' event streams
		hs.Close()
	})
	return &env{t: t, url: hs.URL, srv: srv}
}

// client returns an API client, with the token if one is given.
func (e *env) client(tok ...auth.Token) *client.Client {
	if len(tok) > 0 {
		return clienttest.New(e.t, e.url, client.WithToken(tok[0].Secret))
	}
	return clienttest.New(e.t, e.url)
}

// start starts a thread of the graph with input and checks that it paused.
func (e *env) start(c *client.Client, graphName, thread string, input any) *graph.Result[json.RawMessage] {
	e.t.Helper()
	res, err := c.Invoke(context.Background(), client.InvokeRequest{Graph: graphName, ThreadID: thread, Input: input})
	if err != nil {
		e.t.Fatalf("start %s: %v", thread, err)
	}
	if res.Status != interlude.RunInterrupted {
		e.t.Fatalf("thread %s is %s, want interrupted: %+v", thread, res.Status, res)
	}
	return res
}

// ask starts a support-agent thread asking for a refund.
func (e *env) ask(c *client.Client, thread, text string) *graph.Result[json.RawMessage] {
	e.t.Helper()
	res, err := c.Invoke(context.Background(), client.InvokeRequest{Graph: "support-agent", ThreadID: thread,
		Messages: []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": text}}}}})
	if err != nil {
		e.t.Fatalf("start %s: %v", thread, err)
	}
	if res.Status != interlude.RunInterrupted {
		e.t.Fatalf("thread %s is %s, want interrupted", thread, res.Status)
	}
	return res
}

// do runs browser actions, failing the test on an error.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// until waits for a JavaScript condition to hold, polling it in the page on every
// animation frame; on a timeout it fails with what describe (an expression)
// shows of the page.
func until(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		body, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string](`document.querySelector('main')?.innerText ?? ''`))
		t.Fatalf("waiting for %s (%s): %v\nthe page shows:\n%s", what, cond, err, body)
	}
}

// js quotes a Go string as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// openInbox loads the inbox and waits until it shows the list or the sign-in.
func openInbox(t *testing.T, ctx context.Context, e *env) {
	t.Helper()
	do(t, ctx, "open the inbox", chromedp.Navigate(e.url+"/inbox/"))
	until(t, ctx, "the inbox to start", `['inbox', 'signin'].includes(document.body.dataset.state)`)
}

// signIn types a token into the sign-in form.
func signIn(t *testing.T, ctx context.Context, tok auth.Token) {
	t.Helper()
	until(t, ctx, "the sign-in form", `document.body.dataset.state === 'signin'`)
	do(t, ctx, "sign in",
		chromedp.SendKeys(chromedp.ID("token"), tok.Secret),
		chromedp.Click(chromedp.CSS(`form.signin button[type=submit]`)))
	until(t, ctx, "the inbox after signing in", `document.body.dataset.state === 'inbox' && document.body.dataset.live === 'on'`)
	if got := eval[string](t, ctx, `document.activeElement?.id ?? ''`); got != "list-title" {
		t.Errorf("after signing in the focus is on %q, want the list's title", got)
	}
}

// rows counts the questions listed.
const rows = `document.querySelectorAll('#questions li').length`

// row selects the list entry of a thread.
func row(thread string) string {
	return fmt.Sprintf(`#questions li[data-thread=%s] a`, js(thread))
}

// setField sets an input's value as typing would, firing input and change.
func setField(t *testing.T, ctx context.Context, selector, value string) {
	t.Helper()
	ok := eval[bool](t, ctx, fmt.Sprintf(`(() => {
		const el = document.querySelector(%s);
		if (!el) return false;
		el.focus();
		el.value = %s;
		el.dispatchEvent(new Event('input', {bubbles: true}));
		el.dispatchEvent(new Event('change', {bubbles: true}));
		return true;
	})()`, js(selector), js(value)))
	if !ok {
		t.Fatalf("no field %s", selector)
	}
}

// skipPageChecks takes the limits off a form's fields (required, bounds,
// patterns and the page's own checks), as if the page could not check them,
// so that an answer the server refuses can be sent.
func skipPageChecks(t *testing.T, ctx context.Context, form string) {
	t.Helper()
	ok := eval[bool](t, ctx, fmt.Sprintf(`(() => {
		const f = document.querySelector(%s);
		if (!f) return false;
		for (const el of f.elements) {
			for (const a of ['required', 'min', 'max', 'pattern', 'minlength', 'maxlength']) el.removeAttribute(a);
			if (el.type === 'number') el.step = 'any';
			el.setCustomValidity?.('');
		}
		return true;
	})()`, js(form)))
	if !ok {
		t.Fatalf("no form %s", form)
	}
}

func text(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	return eval[string](t, ctx, fmt.Sprintf(`document.querySelector(%s)?.innerText ?? ''`, js(selector)))
}

func contains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s lacks %q:\n%s", what, sub, s)
		}
	}
}
