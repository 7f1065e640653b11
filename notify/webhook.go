package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/internal/tracing"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"
)

// Webhook posts notifications to an HTTP endpoint as the Standard Webhooks
// specification says: a JSON body {"type", "timestamp", "data"}, and the
// headers webhook-id (the notice's stable id, for de-duplication),
// webhook-timestamp and webhook-signature (v1, HMAC-SHA256 over
// id.timestamp.body with the endpoint's whsec_ secret). Any 2xx answer is a
// delivery; anything else is tried again.
type Webhook struct {
	name   string
	url    string
	signer *standardwebhooks.Webhook
	route  Route
	client *http.Client
	// direct, for the client NewWebhook makes, is its transport, which
	// Deliver calls itself: that client follows no redirects and keeps no
	// cookies or time limit of its own, so http.Client would only copy the
	// headers for redirects it never follows.
	direct http.RoundTripper
	now    func() time.Time
}

// WebhookConfig describes a webhook endpoint.
type WebhookConfig struct {
	// Name names it in the delivery log (default: the URL).
	Name string `json:"name,omitempty"`
	// URL is where notifications are posted.
	URL string `json:"url"`
	// Secret signs them: "whsec_" and the key in base64, as the endpoint's
	// owner issued it.
	Secret string `json:"secret"`
	// Route selects the notifications sent there.
	Route
}

// NewWebhook returns the webhook destination cfg describes. client may be
// nil for a client that follows no redirects and carries the trace context of
// the delivery (OpenTelemetry's global tracer provider and propagator).
func NewWebhook(cfg WebhookConfig, client *http.Client) (*Webhook, error) {
	u, ok := options.HTTPURL(cfg.URL)
	if !ok {
		return nil, fmt.Errorf("notify: webhook URL %q is not an http(s) URL", cfg.URL)
	}
	if !strings.HasPrefix(cfg.Secret, "whsec_") {
		return nil, fmt.Errorf("notify: the secret of webhook %s must start with whsec_ followed by the key in base64", cfg.URL)
	}
	signer, err := standardwebhooks.NewWebhook(cfg.Secret)
	if err != nil {
		return nil, fmt.Errorf("notify: the secret of webhook %s is not whsec_ and base64: %w", cfg.URL, err)
	}
	if err := cfg.Route.check(); err != nil {
		return nil, fmt.Errorf("notify: webhook %s: %w", cfg.URL, err)
	}
	var direct http.RoundTripper
	if client == nil {
		// A dispatcher delivers up to 16 notices at once: keep as many
		// connections to the endpoint open rather than dialling anew.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 16
		client = &http.Client{Transport: traced{base: tr, otel: otelhttp.NewTransport(tr)},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if u.User == nil { // http.Client turns a URL's user and password into basic authentication
			direct = client.Transport
		}
	}
	name := cfg.Name
	if name == "" {
		name = "webhook " + cfg.URL
	}
	return &Webhook{name: name, url: cfg.URL, signer: signer, route: cfg.Route, client: client, direct: direct, now: time.Now}, nil
}

// traced sends a request through OpenTelemetry's instrumentation only when
// there is a trace to carry: a global tracer provider, or a span on its context.
type traced struct{ base, otel http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t traced) RoundTrip(r *http.Request) (*http.Response, error) {
	if tracing.GlobalSet() || trace.SpanContextFromContext(r.Context()).IsValid() {
		return t.otel.RoundTrip(r)
	}
	return t.base.RoundTrip(r)
}

// Name implements Destination.
func (w *Webhook) Name() string { return w.name }

// Wants implements Destination.
func (w *Webhook) Wants(n *Notification) bool { return w.route.Wants(n) }

// Payload is the body of a webhook: the notice's type and time, and its data.
type Payload struct {
	// Type is the notice type (store.NoticeRaised, ...).
	Type string `json:"type"`
	// Timestamp is when the change was committed.
	Timestamp time.Time `json:"timestamp"`
	// Data says what happened.
	Data PayloadData `json:"data"`
}

// PayloadData is a webhook's data: the notice's payload, its id, who answered
// and the question's link in the inbox.
type PayloadData struct {
	// ID is the notice's stable id (also the webhook-id header).
	ID string `json:"id"`
	graph.NoticeData
	// AnsweredBy names who closed the question, for a closed one.
	AnsweredBy string `json:"answered_by,omitempty"`
	// InboxURL links to the question in the web inbox, if known.
	InboxURL string `json:"inbox_url,omitempty"`
}

// PayloadOf returns the webhook payload of a notification.
func PayloadOf(n *Notification) Payload {
	p := Payload{Type: n.Notice.Type, Timestamp: n.Notice.CreatedAt,
		Data: PayloadData{ID: n.Notice.ID, NoticeData: n.Data, InboxURL: n.InboxURL}}
	if r := n.Data.Resolution; r != nil && r.Status != interlude.Expired {
		p.Data.AnsweredBy = r.By
	}
	return p
}

// storedPrefix starts a notice's payload as the runtime stores it
// (json.Marshal of graph.NoticeData, whose first field is the thread).
const storedPrefix = `{"thread_id":`

// payloadBody returns the JSON body of n's webhook: what json.Marshal writes
// for PayloadOf(n), built around the notice's stored payload rather than by
// encoding the payload read from it again. A payload stored in another form
// is encoded from n.Data.
func payloadBody(n *Notification) ([]byte, error) {
	data := n.Notice.Data
	// encoding/json writes a replaced invalid byte as \ufffd, which it writes
	// as the character itself once decoded: such a payload is encoded again.
	if !bytes.HasPrefix(data, []byte(storedPrefix)) || data[len(data)-1] != '}' || bytes.Contains(data, []byte(`\ufffd`)) {
		return json.Marshal(PayloadOf(n))
	}
	fields := data[1 : len(data)-1]
	p := PayloadOf(n)
	b := make([]byte, 0, len(fields)+len(p.Data.ID)+len(p.Data.AnsweredBy)+len(p.Data.InboxURL)+len(p.Type)+128)
	at, err := json.Marshal(p.Timestamp)
	if err != nil {
		return nil, err
	}
	b = append(b, `{"type":`...)
	b = jsonappend.String(b, p.Type)
	b = append(append(b, `,"timestamp":`...), at...)
	b = append(b, `,"data":{"id":`...)
	b = jsonappend.String(b, p.Data.ID)
	b = append(append(b, ','), fields...)
	if p.Data.AnsweredBy != "" {
		b = append(b, `,"answered_by":`...)
		b = jsonappend.String(b, p.Data.AnsweredBy)
	}
	if p.Data.InboxURL != "" {
		b = append(b, `,"inbox_url":`...)
		b = jsonappend.String(b, p.Data.InboxURL)
	}
	return append(b, "}}"...), nil
}

// Deliver implements Destination.
func (w *Webhook) Deliver(ctx context.Context, n *Notification) error {
	body, err := payloadBody(n)
	if err != nil {
		return err
	}
	at := w.now()
	sig, err := w.signer.Sign(n.Notice.ID, at, body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	// The keys are in canonical form already, which spares Header.Set a copy of each.
	vals := []string{"application/json", n.Notice.ID, strconv.FormatInt(at.Unix(), 10), sig}
	req.Header = http.Header{"Content-Type": vals[0:1:1], webhookIDKey: vals[1:2:2],
		webhookTimestampKey: vals[2:3:3], webhookSignatureKey: vals[3:4:4]}
	resp, err := w.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// The start of the answer, read into a reused buffer, for a refusal's
	// error.
	buf := snippets.Get().(*[256]byte)
	defer snippets.Put(buf)
	k, _ := io.ReadFull(resp.Body, buf[:])
	if resp.StatusCode/100 != 2 {
		err = &StatusError{Code: resp.StatusCode, Body: strings.TrimSpace(string(buf[:k]))}
	}
	if k == len(buf) {
		drain(resp.Body, buf[:])
	}
	return err
}

// drainLimit is how much of an answer a delivery reads past its start: an
// answer that ends by then keeps its connection for the next delivery; the
// connection of a longer one is closed instead.
const drainLimit = 64 << 10

// drain reads and drops the rest of an answer, up to drainLimit bytes, with
// buf as scratch space: the transport reuses a connection only once its
// answer was read to the end.
func drain(body io.Reader, buf []byte) {
	for n := 0; n < drainLimit; {
		k, err := body.Read(buf)
		if err != nil {
			return
		}
		n += k
	}
}

// send sends req through the webhook's client, or straight to its transport
// when it may (direct), failing as http.Client does.
func (w *Webhook) send(req *http.Request) (*http.Response, error) {
	if w.direct == nil {
		return w.client.Do(req)
	}
	resp, err := w.direct.RoundTrip(req)
	if err != nil {
		return nil, &url.Error{Op: "Post", URL: w.url, Err: err}
	}
	return resp, nil
}

// snippets are the buffers deliveries read the start of an answer into.
var snippets = sync.Pool{New: func() any { return new([256]byte) }}

// The Standard Webhooks headers in canonical form.
var (
	webhookIDKey        = http.CanonicalHeaderKey(standardwebhooks.HeaderWebhookID)
	webhookTimestampKey = http.CanonicalHeaderKey(standardwebhooks.HeaderWebhookTimestamp)
	webhookSignatureKey = http.CanonicalHeaderKey(standardwebhooks.HeaderWebhookSignature)
)

// StatusError is a webhook endpoint's refusal.
type StatusError struct {
	// Code is the HTTP status; Body the start of the answer.
	Code int
	Body string
}

func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("the endpoint answered %d", e.Code)
	}
	return fmt.Sprintf("the endpoint answered %d: %s", e.Code, e.Body)
}
