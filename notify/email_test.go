package notify_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/testclock"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// mailbox is an SMTP server (go-smtp) that keeps the mail it is given.
type mailbox struct {
	addr string
	mu   sync.Mutex
	got  []sentMail
}

// sentMail is one mail as the SMTP server received it, parsed.
type sentMail struct {
	From      string
	To        []string
	Subject   string
	Text      string
	HTML      string
	MessageID string
}

type smtpBackend struct{ mb *mailbox }

func (b smtpBackend) NewSession(*smtp.Conn) (smtp.Session, error) { return &smtpSession{mb: b.mb}, nil }

type smtpSession struct {
	mb   *mailbox
	from string
	to   []string
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error { s.from = from; return nil }
func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error   { s.to = append(s.to, to); return nil }
func (s *smtpSession) Reset()                                      { s.from, s.to = "", nil }
func (s *smtpSession) Logout() error                               { return nil }
func (s *smtpSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m, err := parseMail(raw)
	if err != nil {
		return err
	}
	m.From, m.To = s.from, slices.Clone(s.to)
	s.mb.mu.Lock()
	s.mb.got = append(s.mb.got, m)
	s.mb.mu.Unlock()
	return nil
}

// parseMail reads a mail's subject and its text and HTML parts.
func parseMail(raw []byte) (sentMail, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return sentMail{}, err
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		return sentMail{}, err
	}
	out := sentMail{Subject: subject, MessageID: msg.Header.Get("Message-Id")}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return sentMail{}, errors.New("the mail is not multipart: " + msg.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return sentMail{}, err
		}
		var body io.Reader = p
		switch p.Header.Get("Content-Transfer-Encoding") {
		case "quoted-printable":
			body = quotedprintable.NewReader(p)
		case "base64":
			body = base64.NewDecoder(base64.StdEncoding, p)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			return sentMail{}, err
		}
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		switch ct {
		case "text/plain":
			out.Text = string(b)
		case "text/html":
			out.HTML = string(b)
		}
	}
}

func newMailbox(t *testing.T) *mailbox {
	t.Helper()
	mb := &mailbox{}
	s := smtp.NewServer(smtpBackend{mb})
	s.Domain = "localhost"
	s.AllowInsecureAuth = true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mb.addr = ln.Addr().String()
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return mb
}

// mails returns the mail received so far.
func (mb *mailbox) mails() []sentMail {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return slices.Clone(mb.got)
}

// to returns the mail received by addr.
func (mb *mailbox) to(addr string) []sentMail {
	var out []sentMail
	for _, m := range mb.mails() {
		if slices.Contains(m.To, addr) {
			out = append(out, m)
		}
	}
	return out
}

// smtpConfig is the mail destination's view of the mailbox.
func (mb *mailbox) smtpConfig(t *testing.T) notify.SMTPConfig {
	host, port, _ := net.SplitHostPort(mb.addr)
	var p int
	if err := json.Unmarshal([]byte(port), &p); err != nil {
		t.Fatal(err)
	}
	return notify.SMTPConfig{Host: host, Port: p, TLS: "none"}
}

const linkSecret = "0123456789abcdef0123456789abcdef-test"

var people = map[string]string{"alice": "alice@example.com", "fiona": "fiona@example.com", "gary": "gary@example.com", "olga": "olga@example.com"}

// payoutGraph asks a yes/no question of the given assignees, open for ttl.
func payoutGraph(t *testing.T, st store.Store, clock func() time.Time, ttl time.Duration, assignees ...string) graph.Erased {
	t.Helper()
	g := graph.New[approval]()
	g.AddNode("approve", func(ctx context.Context, s approval) (approval, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "Pay out 500 EUR?", Reason: "payout", Schema: json.RawMessage(`{"type":"boolean"}`),
			Assignees: assignees, TTL: ttl, Value: map[string]any{"amount": s.Amount}})
		if err != nil {
			return s, err
		}
		return approval{Amount: s.Amount, Outcome: string(ans.Data) + " by " + ans.By}, nil
	})
	g.AddEdge(graph.Start, "approve")
	app, err := g.Compile(graph.WithStore(st), graph.WithName("payout"), graph.WithOutbox(), graph.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	return app.Erase()
}

// mailRig is a host whose questions are mailed through a go-smtp server, with
// the one-click links served over HTTP.
type mailRig struct {
	t     *testing.T
	st    store.Store
	clock *testclock.Clock
	mb    *mailbox
	h     *host.Host
	d     *notify.Dispatcher
	links *notify.MailLinks
	web   *httptest.Server
}

func newMailRig(t *testing.T, ttl time.Duration, assignees []string, escalations ...notify.Escalation) *mailRig {
	t.Helper()
	return newMailRigWith(t, ttl, assignees, nil, escalations...)
}

// newMailRigWith is newMailRig with more destinations beside the mail.
func newMailRigWith(t *testing.T, ttl time.Duration, assignees []string, more []notify.Destination, escalations ...notify.Escalation) *mailRig {
	t.Helper()
	r := &mailRig{t: t, st: memory.New(), clock: testclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)), mb: newMailbox(t)}
	var handler http.Handler
	r.web = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { handler.ServeHTTP(w, req) }))
	t.Cleanup(r.web.Close)
	var err error
	if r.links, err = notify.NewMailLinks(notify.MailLinksConfig{URL: r.web.URL + "/mail/", Secret: linkSecret, MaxAge: "48h"}, r.clock.Now); err != nil {
		t.Fatal(err)
	}
	email, err := notify.NewEmail(notify.EmailConfig{SMTP: r.mb.smtpConfig(t), From: "Interlude <interlude@example.com>", People: people,
		Groups: map[string][]string{"finance": {"fiona", "gary"}, "ops": {"olga"}}, To: []string{"alice"}}, r.links)
	if err != nil {
		t.Fatal(err)
	}
	r.d, err = notify.New(r.st, append([]notify.Destination{email}, more...), notify.WithPoll(time.Hour), notify.WithClock(r.clock.Now),
		notify.WithInboxURL("https://interlude.example.com/inbox/"), notify.WithEscalations(escalations...))
	if err != nil {
		t.Fatal(err)
	}
	r.h = r.newHost(payoutGraph(t, r.st, r.clock.Now, ttl, assignees...))
	handler = r.links.Handler(r.h)
	return r
}

func (r *mailRig) newHost(g graph.Erased) *host.Host {
	h, err := host.New(host.WithGraph(g), host.WithNotifier(r.d), host.WithClock(r.clock.Now), host.WithExpiryWatch(0), host.WithRecoveryWatch(0))
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

// ask starts a thread that asks the question, and delivers its notices.
func (r *mailRig) ask(thread string) interlude.Interruption {
	r.t.Helper()
	res, err := r.h.Invoke(context.Background(), thread, "payout", graph.Input(approval{Amount: 500}))
	if err != nil {
		r.t.Fatal(err)
	}
	r.deliver()
	return res.Interrupts[0]
}

// deliver delivers the notices due and fails the test if any delivery failed.
func (r *mailRig) deliver() {
	r.t.Helper()
	if _, err := r.d.DeliverDue(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	failed, err := r.h.Notices(context.Background(), store.NoticeQuery{State: store.NoticePending})
	if err != nil || len(failed) > 0 {
		r.t.Fatalf("notices not delivered: %v %+v", err, failed)
	}
}

var linkRE = regexp.MustCompile(`(Approve|Reject): (http://\S+)`)

// links returns the approve and reject links of a mail's text.
func links(t *testing.T, m sentMail) (approve, reject string) {
	t.Helper()
	for _, l := range linkRE.FindAllStringSubmatch(m.Text, -1) {
		if l[1] == "Approve" {
			approve = l[2]
		} else {
			reject = l[2]
		}
	}
	if approve == "" || reject == "" {
		t.Fatalf("the mail has no one-click links:\n%s", m.Text)
	}
	if !strings.Contains(m.HTML, `href="`+approve+`"`) {
		t.Fatalf("the HTML part lacks the approve link:\n%s", m.HTML)
	}
	return approve, reject
}

type page struct {
	code int
	body string
}

func open(t *testing.T, method, url string) page {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, string(b)}
}

// pending returns the thread's pending questions.
func (r *mailRig) pending(thread string) []interlude.Interruption {
	r.t.Helper()
	s, err := r.h.State(context.Background(), thread)
	if err != nil {
		r.t.Fatal(err)
	}
	return s.Interrupts
}

func TestANewQuestionIsMailedWithItsInboxLinkAndOneClickLinks(t *testing.T) {
	r := newMailRig(t, 0, []string{"fiona"})
	q := r.ask("t1")
	got := r.mb.mails()
	if len(got) != 1 || !slices.Equal(got[0].To, []string{"fiona@example.com"}) {
		t.Fatalf("mail sent: %+v", got)
	}
	m := got[0]
	if !strings.Contains(m.Subject, "Pay out 500 EUR?") || !strings.Contains(m.Text, "Pay out 500 EUR?") || !strings.Contains(m.HTML, "Pay out 500 EUR?") {
		t.Fatalf("the mail does not ask the question: %+v", m)
	}
	inbox := "https://interlude.example.com/inbox/#/q/t1/" + q.ID
	if !strings.Contains(m.Text, inbox) || !strings.Contains(m.HTML, inbox) {
		t.Fatalf("the mail does not link to the question in the inbox (%s):\n%s", inbox, m.Text)
	}
	links(t, m)
}

func TestAMailLinkOpenedTwiceAnswersOnce(t *testing.T) {
	r := newMailRig(t, 0, []string{"finance"})
	q := r.ask("t1")
	approve, _ := links(t, r.mb.to("gary@example.com")[0])
	if p := open(t, http.MethodPost, approve); p.code != http.StatusOK || !strings.Contains(p.body, "Approved") {
		t.Fatalf("first use: %d %s", p.code, p.body)
	}
	if p := open(t, http.MethodPost, approve); p.code != http.StatusConflict || !strings.Contains(p.body, "already used") {
		t.Fatalf("second use: %d %s", p.code, p.body)
	}
	if p := open(t, http.MethodGet, approve); p.code != http.StatusConflict {
		t.Fatalf("opening a used link: %d %s", p.code, p.body)
	}
	hist, err := r.h.History(context.Background(), "t1", graph.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var answers []interlude.Exchange
	for _, c := range hist {
		answers = append(answers, c.Resolved...)
	}
	if len(answers) != 1 || answers[0].Interrupt.ID != q.ID || answers[0].Resolution.By != "gary" || string(answers[0].Resolution.Response) != "true" {
		t.Fatalf("answers recorded: %+v", answers)
	}
}

func TestOpeningAMailLinkChangesNothingUntilItsButtonIsPressed(t *testing.T) {
	r := newMailRig(t, 0, []string{"fiona"})
	r.ask("t1")
	approve, reject := links(t, r.mb.mails()[0])
	for range 3 { // a mail scanner, a preview, the person
		for _, l := range []string{approve, reject} {
			p := open(t, http.MethodGet, l)
			if p.code != http.StatusOK || !strings.Contains(p.body, `<form method="post"`) {
				t.Fatalf("GET %s: %d %s", l, p.code, p.body)
			}
		}
	}
	if q := r.pending("t1"); len(q) != 1 {
		t.Fatalf("opening the links changed the thread: pending %v", q)
	}
	if p := open(t, http.MethodPost, reject); p.code != http.StatusOK || !strings.Contains(p.body, "Rejected") {
		t.Fatalf("reject: %d %s", p.code, p.body)
	}
	s, err := r.h.State(context.Background(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	var v approval
	if err := json.Unmarshal(s.Values, &v); err != nil || v.Outcome != "false by fiona" {
		t.Fatalf("the answer given: %s", s.Values)
	}
}

func TestAMailLinkIsRefusedOnceExpiredCrossOriginTamperedOrMovedToAnotherQuestion(t *testing.T) {
	r := newMailRig(t, time.Hour, []string{"fiona"})
	r.ask("t1")
	r.ask("t2")
	approve1, _ := links(t, r.mb.mails()[0])
	approve2, _ := links(t, r.mb.mails()[1])
	payload1, sig1, _ := strings.Cut(approve1[strings.LastIndex(approve1, "/")+1:], ".")
	payload2, _, _ := strings.Cut(approve2[strings.LastIndex(approve2, "/")+1:], ".")
	base := approve1[:strings.LastIndex(approve1, "/")+1]
	flip := []byte(sig1)
	flip[3] ^= 1
	if flip[3] == sig1[3] || !regexp.MustCompile(`^[A-Za-z0-9_-]+$`).Match(flip) {
		flip[3] = 'A'
	}
	cases := []struct {
		name    string
		url     string
		header  [2]string
		advance time.Duration
		code    int
	}{
		{"tampered signature", base + payload1 + "." + string(flip), [2]string{}, 0, http.StatusForbidden},
		{"another question's payload under this signature", base + payload2 + "." + sig1, [2]string{}, 0, http.StatusForbidden},
		{"no signature", base + payload1, [2]string{}, 0, http.StatusForbidden},
		{"posted from another site", approve1, [2]string{"Sec-Fetch-Site", "cross-site"}, 0, http.StatusForbidden},
		{"expired with its question", approve1, [2]string{}, time.Hour, http.StatusGone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r.clock.Set(r.clock.Now().Add(c.advance))
			req, _ := http.NewRequest(http.MethodPost, c.url, nil)
			if c.header[0] != "" {
				req.Header.Set(c.header[0], c.header[1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.code {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.code)
			}
			if len(r.pending("t1")) != 1 || len(r.pending("t2")) != 1 {
				t.Fatal("a refused link answered a question")
			}
		})
	}
}

func TestAMailLinkExpiresAfterItsMaximumAgeEvenIfTheQuestionDoesNot(t *testing.T) {
	r := newMailRig(t, 0, []string{"fiona"})
	r.ask("t1")
	approve, _ := links(t, r.mb.mails()[0])
	r.clock.Set(r.clock.Now().Add(48 * time.Hour))
	if p := open(t, http.MethodGet, approve); p.code != http.StatusGone || !strings.Contains(p.body, "expired") {
		t.Fatalf("GET: %d %s", p.code, p.body)
	}
	if p := open(t, http.MethodPost, approve); p.code != http.StatusGone {
		t.Fatalf("POST: %d %s", p.code, p.body)
	}
	if len(r.pending("t1")) != 1 {
		t.Fatal("an expired link answered the question")
	}
}

func TestAQuestionIsMailedOnlyToItsAssignees(t *testing.T) {
	cases := []struct {
		name      string
		assignees []string
		want      []string
	}{
		{"a group", []string{"finance"}, []string{"fiona@example.com", "gary@example.com"}},
		{"a person", []string{"gary"}, []string{"gary@example.com"}},
		{"nobody: the default recipients", nil, []string{"alice@example.com"}},
		{"someone without an address", []string{"zed"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newMailRig(t, 0, c.assignees)
			r.ask("t1")
			var got []string
			for _, m := range r.mb.mails() {
				got = append(got, m.To...)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("mailed %v, want %v", got, c.want)
			}
		})
	}
}
