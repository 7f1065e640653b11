package langgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/server/internal/httpstatus"
	"github.com/interludehq/interlude/server/internal/jsonbody"
	"github.com/interludehq/interlude/store"
)

// Handler serves the LangGraph Platform API over a host. It is an http.Handler
// meant to be mounted at the root of a server, next to Interlude's own /v1/
// routes (Patterns lists its routes); it is safe for concurrent use.
type Handler struct {
	host       *host.Host
	mux        *http.ServeMux
	log        *slog.Logger
	bodyLimit  int64
	formats    map[string]InterruptFormat
	assistants assistantBook
	threads    *threadBook
	runs       *runBook
	runners    runners
	runCtx     context.Context
	stop       context.CancelFunc
	heartbeat  time.Duration
	writeWait  time.Duration
	now        func() time.Time
	wg         sync.WaitGroup
}

// Option configures New.
type Option func(*config)

type config struct {
	options.Problems
	log       *slog.Logger
	bodyLimit int64
	formats   map[string]InterruptFormat
	heartbeat time.Duration
	writeWait time.Duration
}

// InterruptFormat is how an agent's tool approvals are shown to LangGraph
// clients (see the package doc).
type InterruptFormat string

const (
	// FormatHITL shows the approvals of one model turn as one interrupt in
	// LangChain v1's human-in-the-loop format (action_requests and
	// review_configs), answered by {"decisions": [...]}: what agent-chat-ui
	// and useStream understand. It is the default.
	FormatHITL InterruptFormat = "hitl"
	// FormatAgentInbox shows them in agent-inbox's older format: a list of
	// HumanInterrupt (action_request, config.allow_*, description), answered by
	// a list of HumanResponse.
	FormatAgentInbox InterruptFormat = "agent-inbox"
)

// WithInterruptFormat sets how the tool approvals of graph graphName appear
// (default FormatHITL). Both answer formats are accepted whatever the choice.
func WithInterruptFormat(graphName string, f InterruptFormat) Option {
	return func(c *config) {
		switch {
		case graphName == "":
			c.Refuse("langgraph.WithInterruptFormat", "the graph name is empty; give the name of a hosted graph")
		case f != FormatHITL && f != FormatAgentInbox:
			c.Refuse("langgraph.WithInterruptFormat", "%q is not a format; give FormatHITL or FormatAgentInbox", f)
		default:
			c.formats[graphName] = f
		}
	}
}

// WithLogger sets the logger of failed runs (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.log, l, l != nil, "langgraph.WithLogger", "the logger is nil; leave the option out for slog.Default()")
	}
}

// WithBodyLimit caps request bodies at n bytes (default 1 MiB); n must be
// positive.
func WithBodyLimit(n int64) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.bodyLimit, n, n > 0, "langgraph.WithBodyLimit", "%d bytes is not a limit; give a positive number of bytes", n)
	}
}

// WithHeartbeat sets how often an SSE stream with nothing to say sends a
// comment line, and a /runs/wait answer still waiting for its run a blank
// line, so that proxies and clients keep them open (default 10 seconds); d
// must be positive.
func WithHeartbeat(d time.Duration) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.heartbeat, d, d > 0, "langgraph.WithHeartbeat", "%v is not a period; give a positive duration", d)
	}
}

// WithWriteTimeout sets how long one write of an answer may take (default 30
// seconds; d must be positive): streams and waits renew it before each write,
// so that a run may last longer than one write may.
func WithWriteTimeout(d time.Duration) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.writeWait, d, d > 0, "langgraph.WithWriteTimeout", "%v is not a timeout; give a positive duration", d)
	}
}

// New returns the LangGraph API over h: one assistant per hosted graph. It
// refuses a nil host and a bad option value with an interlude.ErrInvalidRequest
// error.
func New(h *host.Host, opts ...Option) (*Handler, error) {
	if h == nil {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "langgraph: the host is nil; give the host whose graphs to serve"}
	}
	cfg := config{log: slog.Default(), bodyLimit: 1 << 20, formats: map[string]InterruptFormat{},
		heartbeat: 10 * time.Second, writeWait: 30 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Err(); err != nil {
		return nil, err
	}
	lg := &Handler{host: h, log: cfg.log, bodyLimit: cfg.bodyLimit, formats: cfg.formats,
		heartbeat: cfg.heartbeat, writeWait: cfg.writeWait, now: time.Now}
	docs, _ := store.As[store.Documents](h.Store())
	lg.assistants = newAssistantBook(h.Graphs())
	_, shared := store.As[store.Leaser](h.Store())
	lg.threads = newThreadBook(docs, !shared)
	lg.runs = newRunBook(docs)
	lg.runCtx, lg.stop = context.WithCancel(context.Background())
	lg.routes()
	return lg, nil
}

// Close cancels the runs still going (their threads stay at their last
// checkpoint, as after any cancelled run) and waits for them to stop.
func (h *Handler) Close() error {
	h.stop()
	h.wg.Wait()
	h.runners.close()
	return nil
}

// Patterns are the route prefixes the handler serves, in net/http pattern
// syntax, for a server that mounts it beside other routes.
func Patterns() []string {
	return []string{"/ok", "/info", "/assistants/", "/threads", "/threads/", "/runs", "/runs/"}
}

// ServeHTTP serves the API.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) routes() {
	m := http.NewServeMux()
	routes := []struct {
		method, path string
		fn           http.HandlerFunc
	}{
		{"GET", "/ok", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, map[string]bool{"ok": true}) }},
		{"GET", "/info", h.handleInfo},
		{"POST", "/assistants/search", h.handleAssistantSearch},
		{"POST", "/assistants/count", h.handleAssistantCount},
		{"GET", "/assistants/{id}", h.handleAssistant},
		{"GET", "/assistants/{id}/graph", h.handleAssistantGraph},
		{"GET", "/assistants/{id}/schemas", h.handleAssistantSchemas},
		{"POST", "/threads", h.handleThreadCreate},
		{"POST", "/threads/search", h.handleThreadSearch},
		{"POST", "/threads/count", h.handleThreadCount},
		{"GET", "/threads/{tid}", h.handleThreadGet},
		{"PATCH", "/threads/{tid}", h.handleThreadPatch},
		{"DELETE", "/threads/{tid}", h.handleThreadDelete},
		{"POST", "/threads/{tid}/copy", h.handleThreadCopy},
		{"GET", "/threads/{tid}/state", h.handleStateGet},
		{"GET", "/threads/{tid}/state/{cid}", h.handleStateGet},
		{"POST", "/threads/{tid}/state", h.handleStatePost},
		{"POST", "/threads/{tid}/state/checkpoint", h.handleStateCheckpoint},
		{"GET", "/threads/{tid}/history", h.handleHistory},
		{"POST", "/threads/{tid}/history", h.handleHistory},
		{"POST", "/threads/{tid}/runs", h.handleRunCreate(modeBackground)},
		{"POST", "/threads/{tid}/runs/stream", h.handleRunCreate(modeStream)},
		{"POST", "/threads/{tid}/runs/wait", h.handleRunCreate(modeWait)},
		{"GET", "/threads/{tid}/runs", h.handleRunList},
		{"GET", "/threads/{tid}/runs/{rid}", h.handleRunGet},
		{"DELETE", "/threads/{tid}/runs/{rid}", h.handleRunDelete},
		{"GET", "/threads/{tid}/runs/{rid}/join", h.handleRunJoin},
		{"GET", "/threads/{tid}/runs/{rid}/stream", h.handleRunJoinStream},
		{"POST", "/threads/{tid}/runs/{rid}/cancel", h.handleRunCancel},
		{"POST", "/runs", h.handleRunCreate(modeBackground)},
		{"POST", "/runs/stream", h.handleRunCreate(modeStream)},
		{"POST", "/runs/wait", h.handleRunCreate(modeWait)},
	}
	// A GET route answers HEAD too (net/http's patterns), except a run's
	// live stream, which has no end to answer it with.
	const liveStream = "/threads/{tid}/runs/{rid}/stream"
	allow := map[string][]string{}
	var paths []string
	for _, rt := range routes {
		m.HandleFunc(rt.method+" "+rt.path, rt.fn)
		if _, ok := allow[rt.path]; !ok {
			paths = append(paths, rt.path)
		}
		allow[rt.path] = append(allow[rt.path], rt.method)
		if rt.method == http.MethodGet && rt.path != liveStream {
			allow[rt.path] = append(allow[rt.path], http.MethodHead)
		}
	}
	// A request of another method is matched against the paths alone, the
	// most specific first (net/http's precedence), so that /threads/search
	// is not taken for a thread id: OPTIONS answers the path's methods, any
	// other method 405 with them.
	byPath := http.NewServeMux()
	for _, p := range paths {
		methods := append(allow[p], http.MethodOptions)
		slices.Sort(methods)
		byPath.HandleFunc(p, methodsOf(strings.Join(methods, ", ")))
	}
	m.HandleFunc("HEAD "+liveStream, methodsOf(strings.Join(allow[liveStream], ", ")+", OPTIONS"))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, p := byPath.Handler(r); p != "" {
			byPath.ServeHTTP(w, r)
			return
		}
		writeError(w, notFound("no LangGraph route %s %s", r.Method, r.URL.Path))
	})
	h.mux = m
}

// methodsOf answers a request of a method its route does not take: OPTIONS
// with the methods it does (allowed), any other with a 405 naming them.
func methodsOf(allowed string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowed)
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
			message: fmt.Sprintf("%s does not take %s; use %s", r.URL.Path, r.Method, allowed)})
	}
}

// callerOf returns who sends the request, as the mounting server put it in
// the context (auth.NewContext); without one, an anonymous admin, as a server
// without tokens has.
func callerOf(r *http.Request) auth.Caller {
	if c, ok := auth.FromContext(r.Context()); ok {
		return c
	}
	return auth.Anonymous
}

// apiError is an error answered to a client, shaped as LangGraph's Python
// server answers errors ({"detail": ...}), with Interlude's code and details.
type apiError struct {
	status     int
	code       string
	message    string
	interrupts []string
	violations []interlude.Violation
}

func (e *apiError) Error() string { return e.message }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: string(interlude.CodeInvalidRequest), message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{status: http.StatusNotFound, code: string(interlude.CodeNotFound), message: fmt.Sprintf(format, args...)}
}

func unsupported(format string, args ...any) *apiError {
	return &apiError{status: http.StatusUnprocessableEntity, code: "not_supported", message: fmt.Sprintf(format, args...)}
}

func conflict(code, format string, args ...any) *apiError {
	return &apiError{status: http.StatusConflict, code: code, message: fmt.Sprintf(format, args...)}
}

// toAPIError turns an error into what the client is told: Interlude's
// refusals keep their code, with their status (package httpstatus).
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var ie *interlude.Error
	if errors.As(err, &ie) {
		return &apiError{status: httpstatus.Of(ie.Code), code: string(ie.Code), message: ie.Message, interrupts: ie.Interrupts, violations: ie.Violations}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &apiError{status: http.StatusServiceUnavailable, code: "unavailable", message: "the request was cancelled: " + err.Error()}
	}
	return &apiError{status: http.StatusInternalServerError, code: "internal", message: err.Error()}
}

type errorBody struct {
	Detail     string                `json:"detail"`
	Code       string                `json:"code"`
	Interrupts []string              `json:"interrupts,omitempty"`
	Violations []interlude.Violation `json:"violations,omitempty"`
}

func (e *apiError) body() errorBody {
	return errorBody{Detail: e.message, Code: e.code, Interrupts: e.interrupts, Violations: e.violations}
}

func writeError(w http.ResponseWriter, err error) {
	e := toAPIError(err)
	writeJSON(w, e.status, e.body())
}

// WriteError answers a refusal in this API's shape, {"detail", "code"}, for a
// server mounting the routes that refuses a request before they see it.
func WriteError(w http.ResponseWriter, status int, code, detail string) {
	writeJSON(w, status, errorBody{Detail: detail, Code: code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data, _ = json.Marshal(errorBody{Detail: "the answer could not be encoded as JSON: " + err.Error(), Code: "internal"})
	}
	writeRaw(w, status, data)
}

// writeRaw answers with data, a JSON value already encoded.
func writeRaw(w http.ResponseWriter, status int, data []byte) {
	setJSONHeaders(w.Header())
	w.WriteHeader(status)
	w.Write(data)
}

// The values of the headers every JSON answer carries, shared by the answers
// (net/http only reads them).
var (
	jsonContentType = []string{"application/json"}
	noStore         = []string{"no-store"}
)

// setJSONHeaders sets the headers of a JSON answer. It assigns them under
// their canonical names, where Header.Set would check each name and allocate
// each value.
func setJSONHeaders(hd http.Header) {
	hd["Content-Type"] = jsonContentType
	hd["Cache-Control"] = noStore
}

// readJSON decodes the request body into v; an empty body leaves v as it is.
func (h *Handler) readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := jsonbody.ReadAll(w, r, h.bodyLimit)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return &apiError{status: http.StatusRequestEntityTooLarge, code: "too_large", message: fmt.Sprintf("the request body is larger than %d bytes", h.bodyLimit)}
		}
		return badRequest("read the request body: %v", err)
	}
	http.NewResponseController(w).SetReadDeadline(time.Time{}) // a run may outlast the body's deadline
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest("the request body is not valid JSON for this route: %v", err)
	}
	return nil
}

// Version is the LangGraph API version this handler speaks, as GET /info says.
const Version = "0.5.26"

func (h *Handler) handleInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"version":              Version,
		"langgraph_py_version": nil,
		"langgraph_js_version": nil,
		"context":              "interlude",
		"flags":                map[string]bool{"assistants": true, "crons": false, "langsmith": false, "langsmith_tracing_replicas": false},
		"host":                 map[string]any{"kind": "self-hosted", "project_id": nil, "revision_id": nil, "tenant_id": nil},
		"metadata":             map[string]any{"server": "interlude"},
	})
}
