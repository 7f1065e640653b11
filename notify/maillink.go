package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/options"
)

// MailLinks makes and serves the one-click answer links of approval mails:
// "Approve" and "Reject". A link carries authority, so it is bound to one
// question (its thread, id and the time it was asked) and one recipient, signed
// with HMAC-SHA256 under a server secret, and expires with the question's
// time to live or after MaxAge, whichever is first. Opening a link (GET)
// changes nothing, since mail scanners open links: it shows a page whose
// button POSTs the decision, under the same cross-origin protection as the
// API. A link works once: the answer it gives is recorded in the thread as
// the recipient's, and a link whose question is no longer open, or whose
// answer was already recorded (a second click, in this process or another
// sharing the store), is refused.
type MailLinks struct {
	secret []byte
	base   string
	maxAge time.Duration
	now    func() time.Time

	mu     sync.RWMutex
	groups map[string][]string // identity -> groups, from the mail destinations
}

// MailLinksConfig configures MailLinks.
type MailLinksConfig struct {
	// URL is where the links' handler is served, such as
	// https://interlude.example.com/mail/ (`interlude serve` serves it there).
	URL string `json:"url"`
	// Secret signs the links: at least 32 bytes, kept secret and the same on
	// every replica.
	Secret string `json:"secret"`
	// MaxAge bounds how long a link works (default 72h), such as "24h".
	MaxAge string `json:"max_age,omitempty"`
}

// NewMailLinks returns the links cfg describes; now is the clock links
// expire by (nil for time.Now).
func NewMailLinks(cfg MailLinksConfig, now func() time.Time) (*MailLinks, error) {
	if _, ok := options.HTTPURL(cfg.URL); !ok {
		return nil, fmt.Errorf("notify: mail links: URL %q is not an http(s) URL", cfg.URL)
	}
	if len(cfg.Secret) < 32 {
		return nil, errors.New("notify: mail links: the secret must be at least 32 bytes; generate one with `openssl rand -hex 32`")
	}
	maxAge := 72 * time.Hour
	if cfg.MaxAge != "" {
		var err error
		if maxAge, err = time.ParseDuration(cfg.MaxAge); err != nil || maxAge <= 0 {
			return nil, fmt.Errorf("notify: mail links: max_age %q is not a positive duration such as \"24h\"", cfg.MaxAge)
		}
	}
	if now == nil {
		now = time.Now
	}
	return &MailLinks{secret: []byte(cfg.Secret), base: strings.TrimSuffix(cfg.URL, "/") + "/", maxAge: maxAge, now: now,
		groups: map[string][]string{}}, nil
}

// people records the groups of a mail destination's people, which an answer
// given through a link is checked with (interlude.Answerer.Groups).
func (l *MailLinks) people(cfg EmailConfig) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for g, members := range cfg.Groups {
		for _, m := range members {
			if !slices.Contains(l.groups[m], g) {
				l.groups[m] = append(l.groups[m], g)
			}
		}
	}
}

// The decisions a link gives.
const (
	linkApprove = "approve"
	linkReject  = "reject"
)

// link is what a link's token says.
type link struct {
	Thread    string `json:"t"`
	Graph     string `json:"g"`
	Interrupt string `json:"q"`
	Asked     int64  `json:"c"` // the question's CreatedAt, in Unix nanoseconds
	To        string `json:"r"` // the recipient's identity
	Action    string `json:"a"`
	Expires   int64  `json:"e"` // Unix seconds
}

// pair returns the approve and reject links of a notification's question for
// the recipient who.
func (l *MailLinks) pair(n *Notification, who string) (approve, reject string, err error) {
	q := n.Data.Interrupt
	exp := l.now().Add(l.maxAge)
	if q.ExpiresAt != nil && q.ExpiresAt.Before(exp) {
		exp = *q.ExpiresAt
	}
	k := link{Thread: n.Notice.ThreadID, Graph: n.Notice.Graph, Interrupt: q.ID, Asked: q.CreatedAt.UnixNano(), To: who, Expires: exp.Unix()}
	k.Action = linkApprove
	if approve, err = l.sign(k); err != nil {
		return "", "", err
	}
	k.Action = linkReject
	reject, err = l.sign(k)
	return approve, reject, err
}

// sign returns the URL of a link.
func (l *MailLinks) sign(k link) (string, error) {
	body, err := json.Marshal(k)
	if err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(body)
	return l.base + payload + "." + base64.RawURLEncoding.EncodeToString(l.mac(payload)), nil
}

func (l *MailLinks) mac(payload string) []byte {
	m := hmac.New(sha256.New, l.secret)
	m.Write([]byte("interlude mail link\x00"))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// Why a link is refused.
var (
	errLinkInvalid = errors.New("this link is not valid: it was changed, or was not made by this server")
	errLinkExpired = errors.New("this link has expired; answer the question in the inbox")
	errLinkUsed    = errors.New("this link was already used, or its question was answered another way")
)

// verify reads a token, checking its signature and expiry.
func (l *MailLinks) verify(token string) (link, error) {
	var k link
	payload, sig, ok := strings.Cut(token, ".")
	if !ok {
		return k, errLinkInvalid
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, l.mac(payload)) {
		return k, errLinkInvalid
	}
	body, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || json.Unmarshal(body, &k) != nil || (k.Action != linkApprove && k.Action != linkReject) {
		return k, errLinkInvalid
	}
	if !l.now().Before(time.Unix(k.Expires, 0)) {
		return k, errLinkExpired
	}
	return k, nil
}

// Answerer reads and answers threads' questions; *host.Host is one.
type Answerer interface {
	// State returns the thread as it is now.
	State(ctx context.Context, threadID string) (*graph.Snapshot[json.RawMessage], error)
	// Invoke runs cmd on the thread of the named graph.
	Invoke(ctx context.Context, threadID, graphName string, cmd graph.Command) (*graph.Result[json.RawMessage], error)
}

// Handler serves the links (under the path of MailLinksConfig.URL) over a:
// GET shows the question and a button to confirm, POST gives the answer.
// It needs no API token: the link is the authority.
func (l *MailLinks) Handler(a Answerer) http.Handler {
	mux := http.NewServeMux()
	csrf := http.NewCrossOriginProtection()
	mux.HandleFunc("GET /{token}", func(w http.ResponseWriter, r *http.Request) { l.serve(w, r, a, false) })
	mux.Handle("POST /{token}", csrf.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { l.serve(w, r, a, true) })))
	prefix := "/"
	if u, err := url.Parse(l.base); err == nil {
		prefix = u.Path
	}
	return http.StripPrefix(strings.TrimSuffix(prefix, "/"), mux)
}

// page is what the confirmation page shows.
type page struct {
	Title, Message, Detail, Button string
	Done                           bool
}

// serve shows a link's question (GET) or gives its answer (POST).
func (l *MailLinks) serve(w http.ResponseWriter, r *http.Request, a Answerer, post bool) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	k, err := l.verify(r.PathValue("token"))
	if err != nil {
		l.refuse(w, err)
		return
	}
	q, err := l.pending(r.Context(), a, k)
	if err != nil {
		l.refuse(w, err)
		return
	}
	verb := "Approve"
	if k.Action == linkReject {
		verb = "Reject"
	}
	if !post {
		l.render(w, http.StatusOK, page{Title: verb + "?", Message: q.Message, Detail: fmt.Sprintf("As %s, on %s (thread %s).", k.To, k.Graph, k.Thread),
			Button: verb})
		return
	}
	ctx := interlude.WithAnswerer(r.Context(), interlude.Answerer{Name: k.To, Groups: l.groupsOf(k.To)})
	res, err := a.Invoke(ctx, k.Thread, k.Graph, graph.Respond(map[string]interlude.Resolution{k.Interrupt: decision(q, k.Action)}))
	switch {
	case errors.Is(err, interlude.ErrConflict), errors.Is(err, interlude.ErrNotFound), errors.Is(err, interlude.ErrNotInterrupted), errors.Is(err, interlude.ErrUnknownInterrupt):
		l.refuse(w, errLinkUsed)
		return
	case errors.Is(err, interlude.ErrForbidden):
		l.refuse(w, fmt.Errorf("%s may no longer answer this question: %w", k.To, err))
		return
	case err != nil && (res == nil || res.Status != interlude.RunFailed):
		l.render(w, http.StatusInternalServerError, page{Title: "Not answered", Message: "The answer was not recorded: " + err.Error() + ". Try again, or answer in the inbox."})
		return
	}
	if res != nil && slices.ContainsFunc(res.Replays, func(x interlude.Resolution) bool { return x.InterruptID == k.Interrupt }) {
		l.refuse(w, errLinkUsed)
		return
	}
	done := "Approved"
	if k.Action == linkReject {
		done = "Rejected"
	}
	l.render(w, http.StatusOK, page{Title: done, Message: q.Message, Detail: "Recorded as " + k.To + "'s answer.", Done: true})
}

// pending returns the link's question if it is still open.
func (l *MailLinks) pending(ctx context.Context, a Answerer, k link) (*interlude.Interruption, error) {
	snap, err := a.State(ctx, k.Thread)
	if errors.Is(err, interlude.ErrNotFound) {
		return nil, errLinkUsed
	}
	if err != nil {
		return nil, err
	}
	if snap.Graph != k.Graph {
		return nil, errLinkUsed
	}
	for _, q := range snap.Interrupts {
		if q.ID == k.Interrupt && q.CreatedAt.UnixNano() == k.Asked {
			return &q, nil
		}
	}
	return nil, errLinkUsed
}

// decision is the answer a link gives to q: for a tool approval the
// agent's decision, otherwise true or false.
func decision(q *interlude.Interruption, action string) interlude.Resolution {
	if q.Reason == interlude.ReasonToolApproval {
		return interlude.Resolve(map[string]string{"action": action})
	}
	return interlude.Resolve(action == linkApprove)
}

// simpleApproval reports whether a question is answered by approving or
// rejecting alone: a tool approval, or a question whose answer is a boolean.
func simpleApproval(q *interlude.Interruption) bool {
	if q.Reason == interlude.ReasonToolApproval {
		return true
	}
	var s struct {
		Type string `json:"type"`
	}
	return len(q.Schema) > 0 && json.Unmarshal(q.Schema, &s) == nil && s.Type == "boolean"
}

func (l *MailLinks) groupsOf(who string) []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return slices.Clone(l.groups[who])
}

// refuse shows why a link did not work.
func (l *MailLinks) refuse(w http.ResponseWriter, err error) {
	code := http.StatusForbidden
	switch {
	case errors.Is(err, errLinkExpired):
		code = http.StatusGone
	case errors.Is(err, errLinkUsed):
		code = http.StatusConflict
	case errors.Is(err, errLinkInvalid):
		code = http.StatusForbidden
	case !errors.Is(err, interlude.ErrForbidden):
		code = http.StatusInternalServerError
	}
	l.render(w, code, page{Title: "This link does not work", Message: err.Error()})
}

func (l *MailLinks) render(w http.ResponseWriter, code int, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	linkPage.Execute(w, p)
}

var linkPage = htmltemplate.Must(htmltemplate.New("link").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="robots" content="noindex"><title>{{.Title}}</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>{{.Title}}</h1>
<p>{{.Message}}</p>
{{if .Detail}}<p><small>{{.Detail}}</small></p>{{end}}
{{if .Button}}<form method="post"><button type="submit" style="font-size: 1.2em">{{.Button}}</button></form>{{end}}
</body></html>
`))
