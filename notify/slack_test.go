package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/sqlite"
	"github.com/slack-go/slack/slacktest"
)

func TestANotifyFileMayNameOnlyASlackChannelAndItsFieldsAreChecked(t *testing.T) {
	cases := []struct {
		name, file, wantErr string
	}{
		{"slack only", `{"slack": {"bot_token": "xoxb-1", "signing_secret": "s", "channel": "C1", "users": {"U1": "alice"}, "reasons": ["approval"]}}`, ""},
		{"no signing secret", `{"slack": {"bot_token": "xoxb-1", "channel": "C1"}}`, "signing_secret"},
		{"no channel", `{"slack": {"bot_token": "xoxb-1", "signing_secret": "s"}}`, "channel id"},
		{"a misspelt field", `{"slack": {"bot_token": "xoxb-1", "signing_secret": "s", "channel": "C1", "user": {}}}`, "unknown field"},
		{"nothing", `{}`, "names no destination"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notify.json")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := notify.LoadConfig(path)
			var dests []notify.Destination
			if err == nil {
				dests, err = cfg.Destinations()
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil || len(dests) != 1 || dests[0].Name() != "slack C1" {
				t.Fatalf("destinations %v, %v", dests, err)
			}
		})
	}
}

// slackCalls is Slack's Web API as slacktest serves it, recording the
// messages posted and updated.
type slackCalls struct {
	mu      sync.Mutex
	n       int
	posted  []url.Values
	updated []url.Values
}

func newSlackCalls(t *testing.T) (*slackCalls, string) {
	c := &slackCalls{}
	sts := slacktest.NewTestServer(func(cz slacktest.Customize) {
		for _, m := range []string{"chat.postMessage", "chat.update"} {
			cz.Handle("/"+m, func(w http.ResponseWriter, r *http.Request) {
				r.ParseForm()
				c.mu.Lock()
				ts := r.Form.Get("ts")
				if m == "chat.postMessage" {
					c.n++
					ts = fmt.Sprintf("1700000000.%06d", c.n)
					c.posted = append(c.posted, r.Form)
				} else {
					c.updated = append(c.updated, r.Form)
				}
				c.mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": r.Form.Get("channel"), "ts": ts})
			})
		}
	})
	sts.Start()
	t.Cleanup(sts.Stop)
	return c, sts.GetAPIURL()
}

// slackDispatcher opens the SQLite store at path and a dispatcher delivering
// its notices to a Slack channel at apiURL, as a server starting would.
func slackDispatcher(t *testing.T, path, apiURL string, opts ...notify.Option) (*sqlite.Store, graph.Erased, *notify.Dispatcher) {
	t.Helper()
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := notify.NewSlack(notify.SlackConfig{BotToken: "xoxb-1", SigningSecret: "s", Channel: "C0REFUNDS", APIURL: apiURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := notify.New(st, []notify.Destination{sl}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return st, approvals(t, "refund", "approval", st), d
}

func TestASlackMessagePostedBeforeARestartIsUpdatedWithTheOutcomeAfterIt(t *testing.T) {
	ctx := context.Background()
	calls, apiURL := newSlackCalls(t)
	path := filepath.Join(t.TempDir(), "slack.db")

	st, g, d := slackDispatcher(t, path, apiURL)
	if _, err := g.Invoke(ctx, "order-1", graph.Input(approval{Amount: 30})); err != nil {
		t.Fatal(err)
	}
	if n, err := d.DeliverDue(ctx); err != nil || n != 1 {
		t.Fatalf("DeliverDue = %d, %v; want the question posted", n, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// The restart: a new store handle, graph, Slack destination and dispatcher.
	st, g, d = slackDispatcher(t, path, apiURL)
	defer st.Close()
	if _, err := g.Invoke(ctx, "order-1", graph.Resume(interlude.Resolve(true))); err != nil {
		t.Fatal(err)
	}
	if n, err := d.DeliverDue(ctx); err != nil || n != 1 {
		t.Fatalf("DeliverDue = %d, %v; want the answer delivered", n, err)
	}
	calls.mu.Lock()
	defer calls.mu.Unlock()
	if len(calls.posted) != 1 || len(calls.updated) != 1 {
		t.Fatalf("%d messages posted and %d updated, want 1 and 1", len(calls.posted), len(calls.updated))
	}
	up := calls.updated[0]
	if up.Get("channel") != "C0REFUNDS" || up.Get("ts") != "1700000000.000001" {
		t.Fatalf("updated channel %q message %q, want the message posted before the restart", up.Get("channel"), up.Get("ts"))
	}
	if !strings.Contains(up.Get("blocks"), "Approved") {
		t.Fatalf("the message was updated to %s, want the approval shown", up.Get("blocks"))
	}
}

func TestARaisedNoticeDeliveredAgainAfterARestartIsNotPostedTwice(t *testing.T) {
	ctx := context.Background()
	calls, apiURL := newSlackCalls(t)
	path := filepath.Join(t.TempDir(), "slack.db")
	st, g, _ := slackDispatcher(t, path, apiURL)
	if _, err := g.Invoke(ctx, "order-1", graph.Input(approval{Amount: 30})); err != nil {
		t.Fatal(err)
	}
	// A dispatcher posts the question, then dies before settling it.
	sl, err := notify.NewSlack(notify.SlackConfig{BotToken: "xoxb-1", SigningSecret: "s", Channel: "C0REFUNDS", APIURL: apiURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := notify.New(st, []notify.Destination{sl}); err != nil {
		t.Fatal(err)
	}
	ns, err := st.ClaimNotices(ctx, store.NoticeClaim{Owner: "dead", Now: time.Now(), TTL: time.Minute, Limit: 10})
	if err != nil || len(ns) != 1 {
		t.Fatalf("claimed %d notices, %v", len(ns), err)
	}
	n := &notify.Notification{Notice: ns[0]}
	if err := json.Unmarshal(ns[0].Data, &n.Data); err != nil {
		t.Fatal(err)
	}
	if err := sl.Deliver(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// After the restart, once the claim has expired, the notice is delivered again.
	later := func() time.Time { return time.Now().Add(time.Hour) }
	st, _, d := slackDispatcher(t, path, apiURL, notify.WithClock(later))
	defer st.Close()
	if k, err := d.DeliverDue(ctx); err != nil || k != 1 {
		t.Fatalf("DeliverDue = %d, %v; want the notice delivered again", k, err)
	}
	calls.mu.Lock()
	defer calls.mu.Unlock()
	if len(calls.posted) != 1 {
		t.Fatalf("the question was posted %d times, want once", len(calls.posted))
	}
}
