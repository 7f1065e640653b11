package server_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/testclock"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/store/memory"
	"github.com/slack-go/slack/slacktest"
)

const slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// slackAPI is Slack's Web API as slacktest serves it, with the calls the
// tests look at recorded by method.
type slackAPI struct {
	sts *slacktest.Server
	mu  sync.Mutex
	n   int
	got map[string]chan url.Values
}

func newSlackAPI(t *testing.T) *slackAPI {
	a := &slackAPI{got: map[string]chan url.Values{}}
	methods := []string{"chat.postMessage", "chat.update", "chat.postEphemeral", "views.open"}
	for _, m := range methods {
		a.got[m] = make(chan url.Values, 100)
	}
	a.sts = slacktest.NewTestServer(func(c slacktest.Customize) {
		for _, m := range methods {
			c.Handle("/"+m, func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				form, _ := url.ParseQuery(string(body))
				if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
					form = url.Values{"json": {string(body)}}
				}
				a.mu.Lock()
				a.n++
				ts := fmt.Sprintf("1700000000.%06d", a.n)
				a.mu.Unlock()
				if m == "chat.postMessage" {
					form.Set("_ts", ts) // the new message's, as answered
				} else {
					ts = form.Get("ts")
				}
				a.got[m] <- form
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": form.Get("channel"), "ts": ts, "message_ts": ts, "view": map[string]any{"id": "V1"}})
			})
		}
	})
	a.sts.Start()
	t.Cleanup(a.sts.Stop)
	return a
}

// next returns the next call of method, waiting for it.
func (a *slackAPI) next(t *testing.T, method string) url.Values {
	t.Helper()
	select {
	case f := <-a.got[method]:
		return f
	case <-time.After(10 * time.Second):
		t.Fatalf("waited 10s for a %s call", method)
		return nil
	}
}

// none checks that method was not called.
func (a *slackAPI) none(t *testing.T, method string) {
	t.Helper()
	select {
	case f := <-a.got[method]:
		t.Fatalf("unexpected %s: %v", method, f)
	default:
	}
}

type refund struct {
	Amount  int    `json:"amount"`
	Form    bool   `json:"form,omitempty"`
	Outcome string `json:"outcome,omitempty"`
}

// slackEnv is a server whose questions go to a Slack channel, answered with
// the server's Slack route.
type slackEnv struct {
	api   *slackAPI
	host  *host.Host
	url   string
	clock *testclock.Clock
}

var (
	fiona = auth.Token{Name: "fiona", Secret: "fiona-secret-0001", Roles: []auth.Role{auth.RoleApprove}, Groups: []string{"finance"}}
	bob   = auth.Token{Name: "bob", Secret: "bob-secret-000001", Roles: []auth.Role{auth.RoleApprove}}
	rita  = auth.Token{Name: "rita", Secret: "rita-secret-00001", Roles: []auth.Role{auth.RoleRun}}
)

func newSlackEnv(t *testing.T, assignees []string) *slackEnv {
	t.Helper()
	e := &slackEnv{api: newSlackAPI(t), clock: testclock.New(time.Now().Truncate(time.Second))}
	st := memory.New()
	g := graph.New[refund]()
	g.AddNode("approve", func(ctx context.Context, s refund) (refund, error) {
		req := interlude.Request{Message: fmt.Sprintf("Refund %d EUR?", s.Amount), Reason: "approval",
			Value: map[string]any{"amount": s.Amount}, Assignees: assignees, TTL: time.Hour}
		if s.Form {
			req.Reason, req.Schema = interlude.ReasonInputRequired, `{"type":"object","properties":{"note":{"type":"string"}}}`
		}
		ans, err := interlude.Interrupt(ctx, req)
		if err != nil {
			return s, err
		}
		return refund{Outcome: string(ans.Data) + " by " + ans.By}, nil
	})
	g.AddEdge(graph.Start, "approve")
	app, err := g.Compile(graph.WithStore(st), graph.WithName("refund"), graph.WithOutbox(), graph.WithClock(e.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	sl, err := notify.NewSlack(notify.SlackConfig{BotToken: "xoxb-test", SigningSecret: slackSecret, Channel: "C0REFUNDS",
		Users: map[string]string{"U0FIONA": "fiona", "U0BOB": "bob", "U0RITA": "rita"}, APIURL: e.api.sts.GetAPIURL()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := notify.New(st, []notify.Destination{sl}, notify.WithInboxURL("https://interlude.example.com/inbox/"),
		notify.WithPoll(time.Hour), notify.WithClock(e.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	if e.host, err = host.New(host.WithGraph(app.Erase()), host.WithNotifier(d), host.WithClock(e.clock.Now),
		host.WithExpiryWatch(0), host.WithRecoveryWatch(0)); err != nil {
		t.Fatal(err)
	}
	e.host.Start(context.Background())
	t.Cleanup(func() { e.host.Close() })
	srv, err := server.New(server.WithHost(e.host), server.WithSlack(sl), server.WithTokens([]auth.Token{fiona, bob, rita}))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	e.url = hs.URL
	return e
}

// ask starts thread id and returns its question and the message posted for it.
func (e *slackEnv) ask(t *testing.T, id string, form bool) (interlude.Interruption, url.Values) {
	t.Helper()
	res, err := e.host.Invoke(context.Background(), id, "refund", graph.Input(refund{Amount: 150, Form: form}))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("start %s: %v %+v", id, err, res)
	}
	return res.Interrupts[0], e.api.next(t, "chat.postMessage")
}

// buttons returns the buttons of a message's blocks by action id: their value,
// or their URL for a link.
func buttons(t *testing.T, msg url.Values) map[string]string {
	t.Helper()
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			URL      string `json:"url"`
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(msg.Get("blocks")), &blocks); err != nil {
		t.Fatalf("blocks: %v\n%s", err, msg.Get("blocks"))
	}
	out := map[string]string{}
	for _, b := range blocks {
		for _, el := range b.Elements {
			if el.ActionID != "" {
				out[el.ActionID] = el.Value + el.URL
			}
		}
	}
	return out
}

// post sends an interactivity request signed with secret, as Slack does.
func (e *slackEnv) post(t *testing.T, secret string, payload map[string]any) (int, string) {
	t.Helper()
	p, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	body := url.Values{"payload": {string(p)}}.Encode()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":" + body))
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/slack/interactions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// click presses a button of a posted message as a Slack user.
func (e *slackEnv) click(t *testing.T, secret, user string, msg url.Values, action string) (int, string) {
	t.Helper()
	value, ok := buttons(t, msg)[action]
	if !ok {
		t.Fatalf("the message has no %s button: %s", action, msg.Get("blocks"))
	}
	return e.post(t, secret, map[string]any{
		"type": "block_actions", "user": map[string]any{"id": user}, "trigger_id": "trigger-1",
		"channel":   map[string]any{"id": "C0REFUNDS"},
		"container": map[string]any{"type": "message", "channel_id": "C0REFUNDS", "message_ts": msg.Get("_ts")},
		"actions":   []map[string]any{{"type": "button", "block_id": "interlude_actions", "action_id": action, "value": value}},
	})
}

// outcome returns the thread's state once its run ended, and its version.
func (e *slackEnv) outcome(t *testing.T, id string) (refund, int64) {
	t.Helper()
	snap, err := e.host.State(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var r refund
	if err := json.Unmarshal(snap.Values, &r); err != nil {
		t.Fatal(err)
	}
	return r, snap.Checkpoint
}

func TestANewQuestionIsPostedToSlackWithItsContextAndTheButtonsItAllows(t *testing.T) {
	e := newSlackEnv(t, []string{"finance"})
	cases := []struct {
		thread string
		form   bool
		want   []string
	}{
		{"approval-1", false, []string{"interlude_approve", "interlude_reject", "interlude_open"}},
		{"form-1", true, []string{"interlude_open"}},
	}
	for _, c := range cases {
		q, msg := e.ask(t, c.thread, c.form)
		if msg.Get("channel") != "C0REFUNDS" {
			t.Errorf("%s: posted to %q", c.thread, msg.Get("channel"))
		}
		blocks := msg.Get("blocks")
		for _, s := range []string{"Refund 150 EUR?", "refund", c.thread, "approve", "finance", `\"amount\": 150`} {
			if !strings.Contains(blocks, s) {
				t.Errorf("%s: the message does not show %q: %s", c.thread, s, blocks)
			}
		}
		bs := buttons(t, msg)
		if len(bs) != len(c.want) {
			t.Errorf("%s: buttons %v, want %v", c.thread, bs, c.want)
		}
		for _, b := range c.want {
			if _, ok := bs[b]; !ok {
				t.Errorf("%s: no %s button in %v", c.thread, b, bs)
			}
		}
		if want := "https://interlude.example.com/inbox/#/q/" + c.thread + "/" + q.ID; bs["interlude_open"] != want {
			t.Errorf("%s: the inbox link is %q, want %q", c.thread, bs["interlude_open"], want)
		}
	}
}

func TestASlackApproveClickAnswersAsTheMappedUserAndTheMessageSaysWho(t *testing.T) {
	e := newSlackEnv(t, []string{"finance"})
	_, msg := e.ask(t, "order-1", false)
	if status, body := e.click(t, slackSecret, "U0FIONA", msg, "interlude_approve"); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	if r, _ := e.outcome(t, "order-1"); r.Outcome != "true by fiona" {
		t.Fatalf("the thread ended with %q, want the approval by fiona", r.Outcome)
	}
	up := e.api.next(t, "chat.update")
	if up.Get("channel") != "C0REFUNDS" || up.Get("ts") != msg.Get("_ts") || !strings.Contains(up.Get("blocks"), "Approved by fiona") ||
		strings.Contains(up.Get("blocks"), "interlude_approve") {
		t.Fatalf("the message was updated to %v", up)
	}
	e.api.none(t, "chat.postEphemeral")
}

func TestASlackRejectAsksForAReasonInAFormAndRecordsIt(t *testing.T) {
	e := newSlackEnv(t, nil)
	_, msg := e.ask(t, "order-1", false)
	if status, _ := e.click(t, slackSecret, "U0BOB", msg, "interlude_reject"); status != http.StatusOK {
		t.Fatalf("click: %d", status)
	}
	var open struct {
		TriggerID string `json:"trigger_id"`
		View      struct {
			CallbackID      string `json:"callback_id"`
			PrivateMetadata string `json:"private_metadata"`
		} `json:"view"`
	}
	if err := json.Unmarshal([]byte(e.api.next(t, "views.open").Get("json")), &open); err != nil || open.TriggerID != "trigger-1" {
		t.Fatalf("views.open: %+v %v", open, err)
	}
	if _, v := e.outcome(t, "order-1"); v == 0 {
		t.Fatal("no thread")
	}
	submit := func(reason string) (int, string) {
		return e.post(t, slackSecret, map[string]any{"type": "view_submission", "user": map[string]any{"id": "U0BOB"},
			"view": map[string]any{"callback_id": open.View.CallbackID, "private_metadata": open.View.PrivateMetadata,
				"state": map[string]any{"values": map[string]any{"interlude_reason": map[string]any{"interlude_reason": map[string]any{"type": "plain_text_input", "value": reason}}}}}})
	}
	if status, body := submit("  "); status != http.StatusOK || !strings.Contains(body, `"response_action":"errors"`) {
		t.Fatalf("an empty reason was answered %d %s, want the form kept open with an error", status, body)
	}
	if status, body := submit("the customer already got a voucher"); status != http.StatusOK || body != "" {
		t.Fatalf("submit: %d %s", status, body)
	}
	up := e.api.next(t, "chat.update")
	if !strings.Contains(up.Get("blocks"), "Rejected by bob: the customer already got a voucher") {
		t.Fatalf("the message was updated to %s", up.Get("blocks"))
	}
	hist, err := e.host.History(context.Background(), "order-1", graph.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cp := range hist {
		for _, x := range cp.Resolved {
			if r := x.Resolution; r != nil && r.Status == interlude.Rejected && r.By == "bob" && r.Error != nil && r.Error.Message == "the customer already got a voucher" {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("the history records no rejection by bob: %+v", hist)
	}
}

func TestASlackClickIsRefusedPolitelyAndChangesNothingUnlessItsUserMayAnswer(t *testing.T) {
	cases := []struct {
		name, user, want string
	}{
		{"unmapped", "U0STRANGER", "not linked to an Interlude user"},
		{"not an assignee", "U0BOB", "may be answered only by finance"},
		{"no approve role", "U0RITA", "needs the approve role"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newSlackEnv(t, []string{"finance"})
			_, msg := e.ask(t, "order-1", false)
			_, before := e.outcome(t, "order-1")
			if status, _ := e.click(t, slackSecret, c.user, msg, "interlude_approve"); status != http.StatusOK {
				t.Fatalf("click: %d", status)
			}
			eph := e.api.next(t, "chat.postEphemeral")
			if eph.Get("user") != c.user || eph.Get("channel") != "C0REFUNDS" || !strings.Contains(eph.Get("text"), c.want) {
				t.Fatalf("the user was told %v, want %q", eph, c.want)
			}
			if _, after := e.outcome(t, "order-1"); after != before {
				t.Fatalf("the thread moved from version %d to %d", before, after)
			}
			e.api.none(t, "chat.update")
		})
	}
}

func TestASlackRequestWithABadSignatureIsRefusedWith401(t *testing.T) {
	e := newSlackEnv(t, nil)
	_, msg := e.ask(t, "order-1", false)
	_, before := e.outcome(t, "order-1")
	if status, _ := e.click(t, "another-apps-signing-secret", "U0FIONA", msg, "interlude_approve"); status != http.StatusUnauthorized {
		t.Fatalf("a request signed with another secret was answered %d, want 401", status)
	}
	if _, after := e.outcome(t, "order-1"); after != before {
		t.Fatalf("the thread moved from version %d to %d", before, after)
	}
}

func TestAReplayedSlackClickIsAnsweredAsAReplayWithTheOutcomeAlreadyGiven(t *testing.T) {
	e := newSlackEnv(t, nil)
	_, msg := e.ask(t, "order-1", false)
	e.click(t, slackSecret, "U0FIONA", msg, "interlude_approve")
	e.api.next(t, "chat.update")
	_, before := e.outcome(t, "order-1")
	if status, _ := e.click(t, slackSecret, "U0BOB", msg, "interlude_approve"); status != http.StatusOK {
		t.Fatalf("replayed click: %d", status)
	}
	if eph := e.api.next(t, "chat.postEphemeral"); eph.Get("user") != "U0BOB" || !strings.Contains(eph.Get("text"), "already answered: Approved by fiona") {
		t.Fatalf("the second clicker was told %v", eph)
	}
	if r, after := e.outcome(t, "order-1"); after != before || r.Outcome != "true by fiona" {
		t.Fatalf("the replay changed the thread: version %d to %d, outcome %q", before, after, r.Outcome)
	}
	// A click of the other button once answered is refused with the answer given.
	e.click(t, slackSecret, "U0BOB", msg, "interlude_reject")
	e.post(t, slackSecret, map[string]any{"type": "view_submission", "user": map[string]any{"id": "U0BOB"},
		"view": map[string]any{"callback_id": "interlude_reject", "private_metadata": e.viewMetadata(t),
			"state": map[string]any{"values": map[string]any{"interlude_reason": map[string]any{"interlude_reason": map[string]any{"value": "no"}}}}}})
	if _, after := e.outcome(t, "order-1"); after != before {
		t.Fatalf("a rejection after the approval changed the thread")
	}
}

// viewMetadata returns the private metadata of the next form opened.
func (e *slackEnv) viewMetadata(t *testing.T) string {
	t.Helper()
	var open struct {
		View struct {
			PrivateMetadata string `json:"private_metadata"`
		} `json:"view"`
	}
	json.Unmarshal([]byte(e.api.next(t, "views.open").Get("json")), &open)
	return open.View.PrivateMetadata
}

func TestTheSlackMessageShowsAnAnswerGivenElsewhereOrAnExpiry(t *testing.T) {
	cases := []struct {
		name  string
		close func(t *testing.T, e *slackEnv)
		want  string
	}{
		{"answered in the inbox", func(t *testing.T, e *slackEnv) {
			req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/threads/order-1/resume", strings.NewReader(`{"response":false}`))
			req.Header.Set("Authorization", "Bearer "+bob.Secret)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("resume: %v %v", resp.Status, err)
			}
			resp.Body.Close()
		}, "Declined by bob"},
		{"expired", func(t *testing.T, e *slackEnv) {
			e.clock.Set(e.clock.Now().Add(2 * time.Hour))
			if n, err := e.host.ExpireQuestions(context.Background()); err != nil || n != 1 {
				t.Fatalf("ExpireQuestions = %d, %v", n, err)
			}
		}, "Expired unanswered"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newSlackEnv(t, nil)
			_, msg := e.ask(t, "order-1", false)
			c.close(t, e)
			up := e.api.next(t, "chat.update")
			if up.Get("ts") != msg.Get("_ts") || up.Get("channel") != "C0REFUNDS" || !strings.Contains(up.Get("blocks"), c.want) {
				t.Fatalf("the message was updated to %v, want %q", up, c.want)
			}
			if _, ok := buttons(t, up)["interlude_approve"]; ok {
				t.Fatalf("the closed question's message still offers Approve")
			}
		})
	}
}
