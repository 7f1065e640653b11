package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/testclock"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

type approval struct {
	Amount  int    `json:"amount"`
	Outcome string `json:"outcome,omitempty"`
}

// approvals compiles a graph named name over st, with an outbox, that asks
// one question of the given reason.
func approvals(t *testing.T, name, reason string, st store.Store) graph.Erased {
	t.Helper()
	g := graph.New[approval]()
	g.AddNode("approve", func(ctx context.Context, s approval) (approval, error) { return ask(ctx, s, reason) })
	g.AddEdge(graph.Start, "approve")
	app, err := g.Compile(graph.WithStore(st), graph.WithName(name), graph.WithOutbox())
	if err != nil {
		t.Fatal(err)
	}
	return app.Erase()
}

// ask asks to approve s, for the given reason.
func ask(ctx context.Context, s approval, reason string) (approval, error) {
	ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "Approve a refund?", Reason: reason, Value: map[string]any{"amount": s.Amount}})
	if err != nil {
		return s, err
	}
	return approval{Outcome: string(ans.Data)}, nil
}

// approvalNode asks to approve s as a plain approval.
func approvalNode(ctx context.Context, s approval) (approval, error) { return ask(ctx, s, "approval") }

// receiver is a webhook endpoint that checks each request with the Standard
// Webhooks reference verification and keeps those it accepts.
type receiver struct {
	t      *testing.T
	verify *standardwebhooks.Webhook
	fail   func(id string) bool // answer 503 to these

	mu       sync.Mutex
	got      []notify.Payload
	ids      []string
	arrived  chan struct{}
	rejected int
}

func newReceiver(t *testing.T) (*receiver, *httptest.Server) {
	v, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, verify: v, arrived: make(chan struct{}, 1000)}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if err := r.verify.Verify(body, req.Header); err != nil {
		r.mu.Lock()
		r.rejected++
		r.mu.Unlock()
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	id := req.Header.Get("webhook-id")
	if r.fail != nil && r.fail(id) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	var p notify.Payload
	if err := json.Unmarshal(body, &p); err != nil {
		r.t.Errorf("payload: %v\n%s", err, body)
	}
	r.mu.Lock()
	r.got = append(r.got, p)
	r.ids = append(r.ids, id)
	r.mu.Unlock()
	r.arrived <- struct{}{}
}

func (r *receiver) wait(t *testing.T, n int) []notify.Payload {
	t.Helper()
	for range n {
		select {
		case <-r.arrived:
		case <-time.After(10 * time.Second):
			t.Fatalf("waited 10s for %d webhooks; got %d", n, len(r.payloads()))
		}
	}
	return r.payloads()
}

func (r *receiver) payloads() []notify.Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func webhook(t *testing.T, url string, route notify.Route) *notify.Webhook {
	t.Helper()
	w, err := notify.NewWebhook(notify.WebhookConfig{URL: url, Secret: secret, Route: route}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestAQuestionAndItsAnswerReachTheWebhookSignedAsTheStandardWebhooksVerificationAccepts(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rcv, srv := newReceiver(t)
	settled := make(chan notify.Delivery, 10)
	d, err := notify.New(st, []notify.Destination{webhook(t, srv.URL, notify.Route{})},
		notify.WithInboxURL("https://interlude.example.com/inbox/"), notify.WithPoll(time.Hour),
		notify.WithObserver(func(d notify.Delivery) { settled <- d }))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(host.WithGraph(approvals(t, "refund", "approval", st)), host.WithNotifier(d),
		host.WithExpiryWatch(0), host.WithRecoveryWatch(0))
	if err != nil {
		t.Fatal(err)
	}
	h.Start(ctx)
	defer h.Close()
	res, err := h.Invoke(ctx, "order-1", "refund", graph.Input(approval{Amount: 150}))
	if err != nil {
		t.Fatal(err)
	}
	q := res.Interrupts[0]
	got := rcv.wait(t, 1)[0]
	if got.Type != store.NoticeRaised || got.Data.ThreadID != "order-1" || got.Data.Graph != "refund" || got.Data.Interrupt == nil ||
		got.Data.Interrupt.ID != q.ID || got.Data.Interrupt.Message != "Approve a refund?" || !strings.Contains(string(got.Data.Interrupt.Value), "150") {
		t.Fatalf("raised payload = %+v", got)
	}
	if want := "https://interlude.example.com/inbox/#/q/order-1/" + q.ID; got.Data.InboxURL != want {
		t.Fatalf("inbox link %q, want %q", got.Data.InboxURL, want)
	}
	if _, err := h.Invoke(interlude.WithActor(ctx, "alice"), "order-1", "", graph.Resume(interlude.Resolve("yes"))); err != nil {
		t.Fatal(err)
	}
	got = rcv.wait(t, 1)[1]
	if got.Type != store.NoticeAnswered || got.Data.AnsweredBy != "alice" || got.Data.Resolution == nil || string(got.Data.Resolution.Response) != `"yes"` {
		t.Fatalf("answered payload = %+v", got)
	}
	for range 2 {
		if d := <-settled; d.State != store.NoticeDelivered {
			t.Fatalf("settled %+v", d)
		}
	}
	rcv.mu.Lock()
	if rcv.rejected != 0 || rcv.ids[0] == rcv.ids[1] || !strings.HasPrefix(rcv.ids[0], "evt_") {
		t.Errorf("rejected %d, ids %v", rcv.rejected, rcv.ids)
	}
	rcv.mu.Unlock()
	log, err := h.Notices(ctx, store.NoticeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range log {
		if n.State != store.NoticeDelivered || n.Attempts != 1 || !slices.Equal(n.DeliveredTo, []string{"webhook " + srv.URL}) {
			t.Errorf("delivery log: %+v", n)
		}
	}
}

func TestASignatureMadeWithAnotherSecretIsRefusedByTheVerification(t *testing.T) {
	rcv, srv := newReceiver(t)
	w, err := notify.NewWebhook(notify.WebhookConfig{URL: srv.URL, Secret: "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = w.Deliver(context.Background(), &notify.Notification{Notice: store.Notice{ID: "evt_1", Type: store.NoticeRaised}})
	var se *notify.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusUnauthorized || rcv.rejected != 1 {
		t.Fatalf("delivery signed with the wrong secret = %v", err)
	}
}

func TestAWebhookRefusesASecretNotInTheWhsecForm(t *testing.T) {
	for _, s := range []string{"", "plain", "whsec_not base64!"} {
		if _, err := notify.NewWebhook(notify.WebhookConfig{URL: "https://example.com/hook", Secret: s}, nil); err == nil {
			t.Errorf("secret %q accepted", s)
		}
	}
	if _, err := notify.NewWebhook(notify.WebhookConfig{URL: "ftp://example.com", Secret: secret}, nil); err == nil {
		t.Error("an ftp URL was accepted")
	}
}

func TestAFailedDeliveryIsRetriedWithBackoffThenDeadLetteredAndRetriedByHand(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	clock := testclock.New(time.Now().Add(time.Second))
	down := true
	var mu sync.Mutex
	rcv, srv := newReceiver(t)
	rcv.fail = func(string) bool { mu.Lock(); defer mu.Unlock(); return down }
	other, otherSrv := newReceiver(t)
	d, err := notify.New(st, []notify.Destination{webhook(t, srv.URL, notify.Route{}), webhook(t, otherSrv.URL, notify.Route{})},
		notify.WithClock(clock.Now), notify.WithRetry(notify.Retry{Attempts: 3, First: time.Minute, Max: 90 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	g := approvals(t, "refund", "approval", st)
	if _, err := g.Invoke(ctx, "order-1", graph.Input(approval{Amount: 1})); err != nil {
		t.Fatal(err)
	}
	deliver := func(want int) {
		t.Helper()
		if n, err := d.DeliverDue(ctx); err != nil || n != want {
			t.Fatalf("DeliverDue at %s = %d, %v; want %d attempted", clock.Now().Format(time.TimeOnly), n, err, want)
		}
	}
	logged := func() store.Notice {
		ns, err := st.Notices(ctx, store.NoticeQuery{})
		if err != nil || len(ns) != 1 {
			t.Fatalf("log: %v %v", ns, err)
		}
		return ns[0]
	}
	deliver(1)
	if n := logged(); n.State != store.NoticePending || n.Attempts != 1 || !strings.Contains(n.LastError, "503") || len(n.DeliveredTo) != 1 {
		t.Fatalf("after one failed attempt: %+v", n)
	}
	deliver(0) // not due for a minute
	clock.Set(clock.Now().Add(time.Minute))
	deliver(1)
	clock.Set(clock.Now().Add(89 * time.Second))
	deliver(0) // the second wait doubles, capped at 90s
	clock.Set(clock.Now().Add(time.Second))
	deliver(1)
	if n := logged(); n.State != store.NoticeDead || n.Attempts != 3 {
		t.Fatalf("after the last attempt: %+v", n)
	}
	clock.Set(clock.Now().Add(time.Hour))
	deliver(0)
	if len(other.payloads()) != 1 {
		t.Fatalf("the working endpoint got %d deliveries, want 1 (retries go only where delivery failed)", len(other.payloads()))
	}
	mu.Lock()
	down = false
	mu.Unlock()
	if err := st.RetryNotice(ctx, logged().ID, clock.Now()); err != nil {
		t.Fatal(err)
	}
	deliver(1)
	if n := logged(); n.State != store.NoticeDelivered || len(n.DeliveredTo) != 2 {
		t.Fatalf("after the retry by hand: %+v", n)
	}
	if len(rcv.payloads()) != 1 || len(other.payloads()) != 1 {
		t.Fatalf("deliveries: %d and %d, want 1 each", len(rcv.payloads()), len(other.payloads()))
	}
	if st := d.Stats(); st != (notify.Stats{Delivered: 1, Retrying: 2, Failed: 1}) {
		t.Fatalf("stats = %+v, want 1 delivered, 2 retrying, 1 failed", st)
	}
}

func TestRoutesSelectNotificationsByGraphReasonAndType(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	d0 := notify.Route{}
	cases := []struct {
		name  string
		route notify.Route
		want  []string // graph:type received
	}{
		{"everything", d0, []string{"refund:interrupt.raised", "refund:interrupt.answered", "ship:interrupt.raised", "ship:interrupt.answered"}},
		{"one graph", notify.Route{Graphs: []string{"ship"}}, []string{"ship:interrupt.raised", "ship:interrupt.answered"}},
		{"one reason", notify.Route{Reasons: []string{"approval"}}, []string{"refund:interrupt.raised", "refund:interrupt.answered"}},
		{"one type", notify.Route{Types: []string{store.NoticeRaised}}, []string{"refund:interrupt.raised", "ship:interrupt.raised"}},
	}
	var dests []notify.Destination
	rcvs := make([]*receiver, len(cases))
	for i, c := range cases {
		rcv, srv := newReceiver(t)
		rcvs[i] = rcv
		w, err := notify.NewWebhook(notify.WebhookConfig{Name: c.name, URL: srv.URL, Secret: secret, Route: c.route}, nil)
		if err != nil {
			t.Fatal(err)
		}
		dests = append(dests, w)
	}
	d, err := notify.New(st, dests)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []graph.Erased{approvals(t, "refund", "approval", st), approvals(t, "ship", "question", st)} {
		if _, err := g.Invoke(ctx, g.Name()+"-1", graph.Input(approval{})); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Invoke(ctx, g.Name()+"-1", graph.Resume(interlude.Resolve(true))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		var got []string
		for _, p := range rcvs[i].payloads() {
			got = append(got, p.Data.Graph+":"+p.Type)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", c.name, got, want)
		}
	}
	if _, err := notify.NewWebhook(notify.WebhookConfig{URL: "http://x", Secret: secret, Route: notify.Route{Types: []string{"raised"}}}, nil); err == nil {
		t.Error("a route with an unknown type was accepted")
	}
}

func TestARefusalSaysTheStartOfTheEndpointsAnswer(t *testing.T) {
	answer := " busy: " + strings.Repeat("x", 400)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, answer)
	}))
	defer srv.Close()
	w, err := notify.NewWebhook(notify.WebhookConfig{URL: srv.URL, Secret: secret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second reads into a buffer the first used
		err = w.Deliver(context.Background(), &notify.Notification{Notice: store.Notice{ID: "evt_1", Type: store.NoticeRaised}})
		var se *notify.StatusError
		if !errors.As(err, &se) || se.Code != http.StatusServiceUnavailable || se.Body != strings.TrimSpace(answer[:256]) {
			t.Fatalf("a refusal reads %v, want 503 and the answer's first 256 bytes", err)
		}
	}
}

// TestDeliveriesKeepTheirConnectionWhenTheEndpointAnswersAtLength: an answer
// longer than the part a refusal quotes is read to its end, so that the
// transport keeps the connection for the next delivery instead of dialling
// again; an answer far longer than any acknowledgement has its connection
// closed rather than read.
func TestDeliveriesKeepTheirConnectionWhenTheEndpointAnswersAtLength(t *testing.T) {
	for _, c := range []struct {
		size  int
		conns int
	}{{4 << 10, 1}, {1 << 20, 3}} {
		var mu sync.Mutex
		conns := 0
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, strings.Repeat("x", c.size))
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				mu.Lock()
				conns++
				mu.Unlock()
			}
		}
		srv.Start()
		w, err := notify.NewWebhook(notify.WebhookConfig{URL: srv.URL, Secret: secret}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := w.Deliver(context.Background(), &notify.Notification{Notice: store.Notice{ID: "evt_1", Type: store.NoticeRaised}}); err != nil {
				t.Fatal(err)
			}
		}
		srv.Close()
		if conns != c.conns {
			t.Errorf("three deliveries answered with %d bytes each took %d connections, want %d", c.size, conns, c.conns)
		}
	}
}

func TestAWebhookFollowsNoRedirectSendsTheURLsUserAndSaysWhichRequestFailed(t *testing.T) {
	var user, pass string
	var redirected bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			redirected = true
			return
		}
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
			return
		}
		user, pass, _ = r.BasicAuth()
	}))
	defer srv.Close()
	deliver := func(u string) error {
		w, err := notify.NewWebhook(notify.WebhookConfig{URL: u, Secret: secret}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return w.Deliver(context.Background(), &notify.Notification{Notice: store.Notice{ID: "evt_1", Type: store.NoticeRaised}})
	}
	if err := deliver(strings.Replace(srv.URL, "http://", "http://hook:s3cret@", 1) + "/in"); err != nil || user != "hook" || pass != "s3cret" {
		t.Errorf("a URL with a user and password: %v, the endpoint saw %q and %q", err, user, pass)
	}
	var se *notify.StatusError
	if err := deliver(srv.URL + "/moved"); !errors.As(err, &se) || se.Code != http.StatusTemporaryRedirect || redirected {
		t.Errorf("a redirect: %v (followed: %v), want it refused as a 307", err, redirected)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	var ue *url.Error
	if err := deliver(dead.URL + "/in"); !errors.As(err, &ue) || ue.Op != "Post" || ue.URL != dead.URL+"/in" || !strings.Contains(err.Error(), "Post \""+dead.URL+"/in\"") {
		t.Errorf("an endpoint that is gone: %v, want the request named as http.Client names it", err)
	}
}
