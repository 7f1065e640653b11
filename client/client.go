// Package client is a Go client of Interlude's HTTP API (package server).
//
//	c, err := client.New("http://127.0.0.1:8080", client.WithToken(secret))
//	res, err := c.Invoke(ctx, client.InvokeRequest{Graph: "refund", Input: map[string]any{"amount": 150}})
//	// res.Status == "interrupted"; res.Interrupts[0].Message == "Approve a refund of $150?"
//	res, err = c.Resume(ctx, res.ThreadID, res.Interrupts[0].ID, map[string]any{"approved": true})
//
// Errors the server answers are *Error values; they match package interlude's
// error values by code (errors.Is(err, interlude.ErrThreadInterrupted)) as well as
// this package's ErrUnauthenticated, ErrForbidden and ErrTooLarge. A server that
// cannot be reached gives an error matching ErrUnreachable, and a thread id
// that cannot name a thread ("", "." or "..") one matching ErrThreadID.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/wire"
)

// Client calls an Interlude server. It is safe for concurrent use.
type Client struct {
	base  string
	hc    *http.Client
	token string
}

// Option configures New.
type Option func(*config)

type config struct {
	options.Problems
	hc    *http.Client
	token string
}

// WithToken authenticates every request with the bearer token, which must
// not be empty (leave the option out to send none).
func WithToken(token string) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.token, token, token != "", "client.WithToken", "the token is empty; give a token's secret, or leave the option out to send none")
	}
}

// WithHTTPClient sends requests with hc (default http.DefaultClient). Streams last
// as long as the run or the subscription, so hc should have no overall Timeout;
// bound calls with their contexts instead.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.hc, hc, hc != nil, "client.WithHTTPClient", "the HTTP client is nil; leave the option out for http.DefaultClient")
	}
}

// New returns a client of the server at baseURL (such as
// "http://127.0.0.1:8080"). It refuses a baseURL that is not an http or https
// URL, and a bad option value, with an interlude.ErrInvalidRequest error.
func New(baseURL string, opts ...Option) (*Client, error) {
	if u, err := url.Parse(baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest,
			Message: fmt.Sprintf("client: %q is not a server URL; give one such as http://127.0.0.1:8080", baseURL)}
	}
	cfg := config{hc: http.DefaultClient}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Err(); err != nil {
		return nil, err
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), hc: cfg.hc, token: cfg.token}, nil
}

// Error is an error answered by the server.
type Error struct {
	// Status is the HTTP status.
	Status int
	// Code is the error code, such as "thread_interrupted".
	Code string
	// Message explains the error.
	Message string
	// Details are the error's details as JSON: {"path"} for invalid_request,
	// {"interrupts"} for refusals naming interrupts, {"violations", "total",
	// "interrupts"} for invalid_response.
	Details json.RawMessage
}

// Error returns the HTTP status, the code and the message.
func (e *Error) Error() string {
	return fmt.Sprintf("interlude server: %d %s: %s", e.Status, e.Code, e.Message)
}

// Is matches an *interlude.Error or an *Error with the same code.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case *interlude.Error:
		return string(t.Code) == e.Code
	case *Error:
		return t.Code == e.Code
	}
	return false
}

// Violations returns why an answer failed its response schema (code
// invalid_response): the first violations the server describes, ordered by path.
func (e *Error) Violations() []interlude.Violation {
	vs, _ := e.violations()
	return vs
}

// TotalViolations returns how many violations the server found in a refused
// answer (code invalid_response), which is more than len(Violations()) when the
// server described only the first ones.
func (e *Error) TotalViolations() int {
	_, n := e.violations()
	return n
}

// violations reads invalid_response details, also in the bare array form of
// servers that describe every violation.
func (e *Error) violations() ([]interlude.Violation, int) {
	var d struct {
		Violations []interlude.Violation `json:"violations"`
		Total      int                   `json:"total"`
	}
	if err := json.Unmarshal(e.Details, &d); err != nil {
		json.Unmarshal(e.Details, &d.Violations)
	}
	return d.Violations, max(d.Total, len(d.Violations))
}

// Interrupts returns the interrupt ids a refusal names.
func (e *Error) Interrupts() []string {
	var d struct {
		Interrupts []string `json:"interrupts"`
	}
	json.Unmarshal(e.Details, &d)
	return d.Interrupts
}

// Path returns the request field an invalid_request error is about, if any.
func (e *Error) Path() string {
	var d struct {
		Path string `json:"path"`
	}
	json.Unmarshal(e.Details, &d)
	return d.Path
}

// Errors of the server's own to match with errors.Is.
var (
	// ErrUnauthenticated: no token, or not a valid one (401).
	ErrUnauthenticated = &Error{Status: http.StatusUnauthorized, Code: "unauthenticated"}
	// ErrForbidden: the token lacks the role (403).
	ErrForbidden = &Error{Status: http.StatusForbidden, Code: "forbidden"}
	// ErrTooLarge: the request body is over the server's limit (413).
	ErrTooLarge = &Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large"}
)

// ErrUnreachable matches the errors of requests that did not reach the server or
// got no answer from it (refused connection, unknown host, broken connection).
var ErrUnreachable = errors.New("client: the Interlude server is unreachable")

// do sends a request and returns the response of a success; an error answer is
// returned as *Error.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body any, accept string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("client: encode the request: %w", err)
		}
		rd = bytes.NewReader(data)
	}
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("client: %s %s: %w", method, path, ctx.Err())
		}
		return nil, fmt.Errorf("%w: %s %s: %w", ErrUnreachable, method, path, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, readError(resp)
	}
	return resp, nil
}

func readError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var body struct {
		Error struct {
			Code    string          `json:"code"`
			Message string          `json:"message"`
			Details json.RawMessage `json:"details"`
		} `json:"error"`
	}
	e := &Error{Status: resp.StatusCode}
	if json.Unmarshal(data, &body) == nil && body.Error.Code != "" {
		e.Code, e.Message, e.Details = body.Error.Code, body.Error.Message, body.Error.Details
		if string(e.Details) == "null" {
			e.Details = nil
		}
		return e
	}
	e.Code = "http_" + strconv.Itoa(resp.StatusCode)
	e.Message = strings.TrimSpace(string(data))
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// call sends a request and decodes the JSON answer into out.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, body, out any) error {
	resp, err := c.do(ctx, method, path, q, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("client: %s %s: %w", method, path, ctx.Err())
		}
		return fmt.Errorf("%w: %s %s: reading the answer: %w", ErrUnreachable, method, path, err)
	}
	return nil
}

// ErrThreadID matches the error of a call given a thread id that cannot name a
// thread: "", "." or "..", which in a URL path would name another route. The
// call sends nothing.
var ErrThreadID = errors.New("client: the thread id cannot name a thread")

// threadPath is the path of a thread's route, or an error matching ErrThreadID
// for an id no path can carry.
func threadPath(id string, rest string) (string, error) {
	switch id {
	case "":
		return "", fmt.Errorf("%w: it is empty; give a thread's id", ErrThreadID)
	case ".", "..":
		return "", fmt.Errorf("%w: %q is not a thread's id; give a thread's id", ErrThreadID, id)
	}
	return "/v1/threads/" + url.PathEscape(id) + rest, nil
}

// Invoke runs, answers or continues a thread (POST /v1/graph/invoke) and waits for
// the run to end. A pause is not an error: Status is "interrupted".
func (c *Client) Invoke(ctx context.Context, req InvokeRequest) (*graph.Result[json.RawMessage], error) {
	if err := usable(req.Responses); err != nil {
		return nil, err
	}
	var r graph.Result[json.RawMessage]
	if err := c.call(ctx, http.MethodPost, "/v1/graph/invoke", nil, req.wire(), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Stream runs the request like Invoke (POST /v1/graph/stream) and yields its
// events, read as NDJSON, as they arrive: metadata first, end last (Event.Result
// decodes it). A refused request yields its *Error and no events. Stopping the
// iteration closes the connection; the run itself goes on in the server.
func (c *Client) Stream(ctx context.Context, req InvokeRequest) iter.Seq2[Event, error] {
	return c.stream(ctx, req, false)
}

// StreamSSE is Stream reading the server-sent events form of the stream.
func (c *Client) StreamSSE(ctx context.Context, req InvokeRequest) iter.Seq2[Event, error] {
	return c.stream(ctx, req, true)
}

func (c *Client) stream(ctx context.Context, req InvokeRequest, sse bool) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		accept := "application/x-ndjson"
		if sse {
			accept = "text/event-stream"
		}
		if err := usable(req.Responses); err != nil {
			yield(Event{}, err)
			return
		}
		resp, err := c.do(ctx, http.MethodPost, "/v1/graph/stream", nil, req.wire(), accept)
		if err != nil {
			yield(Event{}, err)
			return
		}
		defer resp.Body.Close()
		if sse {
			readSSE(ctx, resp.Body, yield)
		} else {
			readNDJSON(ctx, resp.Body, yield)
		}
	}
}

func newScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	return sc
}

// streamErr words an error reading a stream.
func streamErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("client: stream: %w", ctx.Err())
	}
	return fmt.Errorf("%w: the stream broke: %w", ErrUnreachable, err)
}

func readNDJSON(ctx context.Context, r io.Reader, yield func(Event, error) bool) {
	sc := newScanner(r)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var w struct {
			Event string          `json:"event"`
			Data  json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(line, &w); err != nil {
			yield(Event{}, fmt.Errorf("client: a stream line is not an event: %w", err))
			return
		}
		if !yield(Event{Event: w.Event, Data: w.Data}, nil) {
			return
		}
	}
	if err := sc.Err(); err != nil {
		yield(Event{}, streamErr(ctx, err))
	}
}

// readSSE parses server-sent events: event, data (lines joined by newlines) and id
// fields, blank lines ending each event, comments ignored.
func readSSE(ctx context.Context, r io.Reader, yield func(Event, error) bool) {
	readSSEFrom(ctx, r, new(string), yield)
}

// readSSEFrom is readSSE keeping the last id the stream gave in *lastID, from
// an event or from a block that only moves it.
func readSSEFrom(ctx context.Context, r io.Reader, lastID *string, yield func(Event, error) bool) {
	sc := newScanner(r)
	var ev Event
	var data []byte
	hasData := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if hasData {
				ev.ID = *lastID
				if ev.Event == "" {
					ev.Event = "message"
				}
				ev.Data = json.RawMessage(bytes.TrimSuffix(data, []byte("\n")))
				if !yield(ev, nil) {
					return
				}
			}
			ev, data, hasData = Event{}, nil, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Event = value
		case "data":
			data = append(append(data, value...), '\n')
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				*lastID = value
			}
		}
	}
	if err := sc.Err(); err != nil {
		yield(Event{}, streamErr(ctx, err))
	}
}

// Graphs lists the hosted graphs (GET /v1/graphs).
func (c *Client) Graphs(ctx context.Context) ([]wire.GraphInfo, error) {
	var out wire.GraphList
	if err := c.call(ctx, http.MethodGet, "/v1/graphs", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Graphs, nil
}

// Threads lists threads, newest updated first (GET /v1/threads); with Status
// "interrupted" it is the inbox.
func (c *Client) Threads(ctx context.Context, opt ListOptions) (*wire.ThreadPage, error) {
	q := url.Values{}
	if opt.Status != "" {
		q.Set("status", string(opt.Status))
	}
	if opt.Graph != "" {
		q.Set("graph", opt.Graph)
	}
	if opt.Limit != 0 {
		q.Set("limit", strconv.Itoa(opt.Limit))
	}
	if opt.Cursor != "" {
		q.Set("cursor", opt.Cursor)
	}
	var p wire.ThreadPage
	if err := c.call(ctx, http.MethodGet, "/v1/threads", q, nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Thread returns a thread's current state (GET /v1/threads/{id}).
func (c *Client) Thread(ctx context.Context, threadID string) (*wire.Thread, error) {
	path, err := threadPath(threadID, "")
	if err != nil {
		return nil, err
	}
	var t wire.Thread
	if err := c.call(ctx, http.MethodGet, path, nil, nil, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// ThreadWithSubgraphs returns a thread's current state with the state of each
// subgraph waiting in its step, by namespace (GET
// /v1/threads/{id}?subgraphs=true).
func (c *Client) ThreadWithSubgraphs(ctx context.Context, threadID string) (*wire.Thread, error) {
	path, err := threadPath(threadID, "")
	if err != nil {
		return nil, err
	}
	var t wire.Thread
	if err := c.call(ctx, http.MethodGet, path, url.Values{"subgraphs": {"true"}}, nil, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// History returns a page of a thread's checkpoints, newest first, and the
// interrupt histories of the tool calls on it (GET /v1/threads/{id}/history).
// Pass the page's NextBefore as the next call's Before to read older ones.
func (c *Client) History(ctx context.Context, threadID string, opt HistoryOptions) (*wire.History, error) {
	path, err := threadPath(threadID, "/history")
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if opt.Limit != 0 {
		q.Set("limit", strconv.Itoa(opt.Limit))
	}
	if opt.Before != 0 {
		q.Set("before", strconv.FormatInt(opt.Before, 10))
	}
	if opt.Subgraphs {
		q.Set("subgraphs", "true")
	}
	var h wire.History
	if err := c.call(ctx, http.MethodGet, path, q, nil, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// usable reports a response that cannot be sent, such as an answer that could
// not be encoded as JSON, before anything is sent.
func usable(rs []interlude.Resolution) error {
	for _, r := range rs {
		if err := r.Err(); err != nil {
			return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "the answer to " + r.InterruptID + " cannot be sent: " + err.Error(), Err: err}
		}
	}
	return nil
}

func (c *Client) answer(ctx context.Context, threadID, action string, body any) (*graph.Result[json.RawMessage], error) {
	path, err := threadPath(threadID, "/"+action)
	if err != nil {
		return nil, err
	}
	var r graph.Result[json.RawMessage]
	if err := c.call(ctx, http.MethodPost, path, nil, body, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Resume answers an interrupt with response (POST /v1/threads/{id}/resume) and
// waits for the run it starts. interruptID may be "" when exactly one interrupt is
// pending. A nil response (or Null) cancels the interrupt.
func (c *Client) Resume(ctx context.Context, threadID, interruptID string, response any) (*graph.Result[json.RawMessage], error) {
	if response == nil {
		response = Null
	}
	return c.answer(ctx, threadID, "resume", struct {
		InterruptID string `json:"interrupt_id,omitempty"`
		Response    any    `json:"response"`
	}{interruptID, response})
}

// Respond answers several interrupts at once (POST /v1/threads/{id}/resume with
// responses).
func (c *Client) Respond(ctx context.Context, threadID string, responses []interlude.Resolution) (*graph.Result[json.RawMessage], error) {
	if err := usable(responses); err != nil {
		return nil, err
	}
	return c.answer(ctx, threadID, "resume", struct {
		Responses []interlude.Resolution `json:"responses"`
	}{responses})
}

// Reject declines an interrupt (POST /v1/threads/{id}/reject); rej may be nil for
// no reason given. interruptID may be "" when exactly one interrupt is pending.
func (c *Client) Reject(ctx context.Context, threadID, interruptID string, rej *interlude.Rejection) (*graph.Result[json.RawMessage], error) {
	return c.answer(ctx, threadID, "reject", struct {
		InterruptID string               `json:"interrupt_id,omitempty"`
		Error       *interlude.Rejection `json:"error,omitempty"`
	}{interruptID, rej})
}

// Cancel withdraws an interrupt (POST /v1/threads/{id}/cancel). interruptID may be
// "" when exactly one interrupt is pending.
func (c *Client) Cancel(ctx context.Context, threadID, interruptID string) (*graph.Result[json.RawMessage], error) {
	return c.answer(ctx, threadID, "cancel", struct {
		InterruptID string `json:"interrupt_id,omitempty"`
	}{interruptID})
}

// Fork continues a thread from its checkpoint (an id of History) and waits for
// the run it starts (POST /v1/threads/{id}/fork). With a namespace (as
// History's subgraphs list them) the thread goes on from the checkpoint the
// subgraph waiting there had at that checkpoint, without running the work
// finished around and inside it again (graph.Graph.ForkSubgraph); without one
// it is graph.Graph.Fork. A checkpoint or namespace the thread lacks is an
// error matching interlude.ErrInvalidRequest, and the thread is unchanged.
func (c *Client) Fork(ctx context.Context, threadID string, checkpoint int64, namespace ...string) (*graph.Result[json.RawMessage], error) {
	return c.answer(ctx, threadID, "fork", struct {
		Checkpoint int64    `json:"checkpoint"`
		Namespace  []string `json:"namespace,omitempty"`
	}{checkpoint, namespace})
}

// Delete forgets a thread (DELETE /v1/threads/{id}); it needs the admin role.
func (c *Client) Delete(ctx context.Context, threadID string) error {
	path, err := threadPath(threadID, "")
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodDelete, path, nil, nil, nil)
}

// Health checks that the server is up (GET /healthz).
func (c *Client) Health(ctx context.Context) error {
	return c.call(ctx, http.MethodGet, "/healthz", nil, nil, nil)
}

// Metrics returns the server's metrics in the Prometheus text format
// (GET /metrics).
func (c *Client) Metrics(ctx context.Context) (string, error) {
	resp, err := c.do(ctx, http.MethodGet, "/metrics", nil, nil, "text/plain")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", streamErr(ctx, err)
	}
	return string(data), nil
}

// Subscription is an open stream of a thread's live events.
type Subscription struct {
	ctx    context.Context
	resp   *http.Response
	used   bool
	lastID string
}

// Subscribe opens the thread's live events (GET /v1/threads/{id}/events) and
// returns once the server has registered the subscription, so every event
// published afterwards will be received. With lastEventID (an Event.ID) the server
// first replays the events it kept after that one. Close the subscription when
// done.
func (c *Client) Subscribe(ctx context.Context, threadID, lastEventID string) (*Subscription, error) {
	path, err := threadPath(threadID, "/events")
	if err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("client: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		cancel()
		if parent.Err() != nil {
			return nil, fmt.Errorf("client: subscribe: %w", parent.Err())
		}
		return nil, fmt.Errorf("%w: subscribe: %w", ErrUnreachable, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		return nil, readError(resp)
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return &Subscription{ctx: ctx, resp: resp, lastID: lastEventID}, nil
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	b.cancel()
	return b.ReadCloser.Close()
}

// Events yields the subscription's events as they arrive, until the server ends
// the stream (it shuts down, the listener fell too far behind, or the server may
// have missed events: subscribe again with LastEventID), the context ends, or the
// iteration stops. It can be ranged over once.
func (s *Subscription) Events() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if s.used {
			yield(Event{}, errors.New("client: a subscription's events can be ranged over once"))
			return
		}
		s.used = true
		readSSEFrom(s.ctx, s.resp.Body, &s.lastID, yield)
	}
}

// LastEventID is the id to subscribe again with once the stream ends, so that
// nothing published meanwhile is missed: the last event's, or, before any
// event, the position the server gave when the stream opened. Read it after
// ranging over Events, not during.
func (s *Subscription) LastEventID() string { return s.lastID }

// Close ends the subscription.
func (s *Subscription) Close() error { return s.resp.Body.Close() }

// Events subscribes to the thread's live events and yields them until the stream
// ends or the iteration stops; see Subscribe.
func (c *Client) Events(ctx context.Context, threadID, lastEventID string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		sub, err := c.Subscribe(ctx, threadID, lastEventID)
		if err != nil {
			yield(Event{}, err)
			return
		}
		defer sub.Close()
		for e, err := range sub.Events() {
			if !yield(e, err) {
				return
			}
		}
	}
}
