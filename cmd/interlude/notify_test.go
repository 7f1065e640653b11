package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/internal/crashpoint"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/sqlite"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

const hookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// hookReceiver is a webhook endpoint that keeps the deliveries the Standard
// Webhooks verification accepts, and refuses all while down.
type hookReceiver struct {
	mu      sync.Mutex
	down    bool
	got     map[string][]notify.Payload // by webhook-id
	arrived chan string
}

func newHookReceiver(t *testing.T) (*hookReceiver, string) {
	v, err := standardwebhooks.NewWebhook(hookSecret)
	if err != nil {
		t.Fatal(err)
	}
	h := &hookReceiver{got: map[string][]notify.Payload{}, arrived: make(chan string, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := v.Verify(body, r.Header); err != nil {
			t.Errorf("a delivery failed verification: %v", err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		var p notify.Payload
		if err := json.Unmarshal(body, &p); err != nil {
			t.Errorf("payload: %v", err)
		}
		id := r.Header.Get("webhook-id")
		h.got[id] = append(h.got[id], p)
		h.arrived <- p.Type
	}))
	t.Cleanup(srv.Close)
	return h, srv.URL
}

// await waits for a delivery of the given type.
func (h *hookReceiver) await(t *testing.T, typ string) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case got := <-h.arrived:
			if got == typ {
				return
			}
		case <-deadline:
			t.Fatalf("no %s webhook within 15s", typ)
		}
	}
}

// storedNotices reads the outbox of the server's SQLite file.
func storedNotices(t *testing.T, dir string) []store.Notice {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(dir, "serve.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ns, err := st.Notices(context.Background(), store.NoticeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// TestAKilledServersNotificationsAreDeliveredAfterRestart kills `interlude
// serve` right after it commits an answer: the answer's notification is in
// the outbox, undelivered, and a fresh server over the same file delivers it,
// signed, with who answered.
func TestAKilledServersNotificationsAreDeliveredAfterRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	hooks, url := newHookReceiver(t)
	hookFlags := []string{"--webhook", url, "--webhook-secret", hookSecret}
	dying := startServerIn(t, dir, []string{crashpoint.Env + "=resolve"}, hookFlags...)
	alice := clienttest.New(t, dying.url, client.WithToken(aliceToken))
	res, err := alice.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "order-1", Input: map[string]any{"amount": 150}})
	if err != nil || res.Status != "interrupted" {
		t.Fatalf("start: %+v, %v", res, err)
	}
	hooks.await(t, store.NoticeRaised)
	if _, err := alice.Resume(ctx, "order-1", res.Interrupts[0].ID, map[string]any{"approved": true}); err == nil {
		t.Fatal("the answer was acknowledged: the process did not die after committing it")
	}
	crashed(t, dying)
	var answered *store.Notice
	for _, n := range storedNotices(t, dir) {
		if n.Type == store.NoticeAnswered {
			answered = &n
		}
	}
	if answered == nil || answered.State != store.NoticePending {
		t.Fatalf("after the crash the outbox holds %+v; want the answer's notification pending", storedNotices(t, dir))
	}

	startServerIn(t, dir, nil, hookFlags...)
	hooks.await(t, store.NoticeAnswered)
	hooks.mu.Lock()
	got := hooks.got[answered.ID]
	hooks.mu.Unlock()
	if len(got) == 0 || got[0].Data.AnsweredBy != "alice" || got[0].Data.ThreadID != "order-1" || got[0].Data.Interrupt == nil ||
		got[0].Data.Interrupt.ID != res.Interrupts[0].ID || !strings.HasSuffix(got[0].Data.InboxURL, "/inbox/#/q/order-1/"+res.Interrupts[0].ID) {
		t.Fatalf("the answer's webhook: %+v", got)
	}
}

func TestFailedNotificationsAreListedAndRetriedFromTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	hooks, url := newHookReceiver(t)
	hooks.down = true
	cfg := filepath.Join(dir, "notify.json")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `{"retry": {"attempts": 1, "first": "10ms", "max": "10ms"},
		"webhooks": [{"name": "ops", "url": %q, "secret": %q, "types": ["interrupt.raised"]}]}`, url, hookSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "admin-tokens")
	if err := os.WriteFile(tokens, []byte("alice:"+aliceToken+":run,approve\nroot:root-token:admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServerIn(t, dir, nil, "--notify", cfg, "--tokens", tokens)
	alice := clienttest.New(t, s.url, client.WithToken(aliceToken))
	if _, err := alice.Invoke(context.Background(), client.InvokeRequest{Graph: "refund", ThreadID: "order-2", Input: map[string]any{"amount": 10}}); err != nil {
		t.Fatal(err)
	}
	var failed []store.Notice
	if !waitFor(15*time.Second, func() bool {
		page, err := alice.Notifications(context.Background(), client.NotificationOptions{State: store.NoticeDead})
		if err != nil {
			t.Fatal(err)
		}
		failed = page.Notifications
		return len(failed) == 1
	}) {
		t.Fatalf("no failed notification within 15s\n%s", s.stderr.String())
	}
	id := failed[0].ID
	s.expectCLI(t, nil, exitOK, []string{"notifications", "--failed"}, id, "interrupt.raised", "order-2", "failed", "503")
	if out := s.expectCLI(t, nil, exitOK, []string{"notifications"}, id); strings.Contains(out, "off") {
		t.Errorf("a server with a webhook says its notifications are off:\n%s", out)
	}
	s.expectCLI(t, nil, exitRefused, []string{"notifications", "retry", id}, "admin")
	hooks.mu.Lock()
	hooks.down = false
	hooks.mu.Unlock()
	s.expectCLI(t, []string{"INTERLUDE_TOKEN=root-token"}, exitOK, []string{"notifications", "retry", id}, id)
	hooks.await(t, store.NoticeRaised)
	s.expectCLI(t, []string{"INTERLUDE_TOKEN=root-token"}, exitRefused, []string{"notifications", "retry", "evt_missing"},
		"no notification has id evt_missing; interlude notifications lists them")
}
