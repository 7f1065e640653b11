package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/server/inbox"
	"github.com/interludehq/interlude/server/langgraph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/wire"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"
)

// Server is the HTTP API over a set of compiled graphs sharing one store. It is an
// http.Handler; mount it at the root of a mux or serve it with Serve. It is safe
// for concurrent use.
type Server struct {
	host       *host.Host
	ownHost    bool                       // the server built its host, and closes it
	inputProps map[string]map[string]bool // graph -> its input fields, nil when unknown
	inputNeeds map[string][]string        // graph -> the input fields a new thread needs
	graphList  []byte                     // the answer of GET /v1/graphs
	tokens     []token
	bodyLimit  int64
	log        *slog.Logger
	metrics    *metrics
	hub        *host.Hub
	inbox      http.Handler
	mux        *http.ServeMux
	front      http.Handler // mux, traced
	runCtx     context.Context
	stopRuns   context.CancelFunc
	csrf       *http.CrossOriginProtection
	langgraph  *langgraph.Handler // the LangGraph Platform API, or nil
	slack      *notify.Slack      // answers from Slack, or nil
	mailLinks  http.Handler       // the mail links' pages (WithMailLinks), or nil
	cors       map[string]bool    // origins browsers may call the API from

	// What a slow client may take, and the requests being served.
	timeouts     Timeouts
	streamBuffer int // bytes of a run stream's events that may wait for a slow client
	active       sync.WaitGroup
}

// Option configures New.
type Option func(*config)

type config struct {
	host      *host.Host
	graphs    []graph.Erased
	tokens    []Token
	bodyLimit int64
	log       *slog.Logger
	metrics   bool
	registry  prometheus.Registerer
	hub       *host.Hub
	inbox     http.Handler
	inboxSet  bool
	watch     time.Duration
	expiry    time.Duration
	recovery  time.Duration
	now       func() time.Time
	timeouts  Timeouts
	streamBuf int
	langgraph []langgraph.Option // set (non-nil) when the LangGraph API is on
	cors      []string

	tracerProvider trace.TracerProvider

	notifier  *notify.Dispatcher
	slack     *notify.Slack
	mailLinks *notify.MailLinks
}

// WithHost serves h: its graphs, store and watches. The server then takes no
// WithGraph, and the host's own options decide its clock and watches, which
// the caller starts (host.Host.Start) and closes; WithClock, WithExpiryWatch,
// WithRecoveryWatch and WithLeaseWatch are then ignored. Without it the server
// builds a host from those options and starts and closes it itself.
func WithHost(h *host.Host) Option { return func(c *config) { c.host = h } }

// WithGraph hosts g under its name (graph.WithName). Repeat it for each graph. All
// graphs must share one store (graph.WithStore), which the thread listing reads.
func WithGraph(g graph.Erased) Option {
	return func(c *config) { c.graphs = append(c.graphs, g) }
}

// WithTokens requires bearer tokens. Without tokens the API is open to anyone who
// can reach it, so Serve then listens on loopback addresses only.
func WithTokens(ts []Token) Option {
	return func(c *config) { c.tokens = append(c.tokens, ts...) }
}

// WithBodyLimit caps request bodies at n bytes (default 1 MiB); larger ones are
// refused with 413.
func WithBodyLimit(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.bodyLimit = n
		}
	}
}

// WithLogger sets the logger of request logs and errors (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.log = l
		}
	}
}

// WithMetrics turns the /metrics route and the recording of metrics on (the
// default) or off.
func WithMetrics(on bool) Option { return func(c *config) { c.metrics = on } }

// WithMetricsRegistry registers the server's metrics, with the Go runtime's and
// the process's collectors (unless reg has them), with reg instead of a
// registry of the server's own, so that a program exposes them with its own.
// /metrics serves reg if it is also a prometheus.Gatherer (a
// *prometheus.Registry is); otherwise the program serves it.
func WithMetricsRegistry(reg prometheus.Registerer) Option {
	return func(c *config) { c.registry = reg }
}

// WithEventHub serves the live events of GET /v1/threads/{id}/events and
// GET /v1/events from h (make it with NewEventHub, so that its events read as
// the HTTP API streams them) and gives it to the host the server builds. The
// graphs must publish to it: compile them with graph.WithEvents(h.Publish).
// Without a hub (here or on the host given with WithHost) those routes answer
// 501.
func WithEventHub(h *host.Hub) Option { return func(c *config) { c.hub = h } }

// WithLeaseWatch sets how often the server's host, with a store several
// processes share (a store.LeaseWatcher such as Postgres) and an event hub,
// looks for runs that died with their process and tells each such thread's
// listeners on every replica how the thread now reads (host.WithLeaseWatch).
// The default is every second; 0 turns it off.
func WithLeaseWatch(every time.Duration) Option { return func(c *config) { c.watch = every } }

// WithExpiryWatch sets how often the server's host closes the questions whose
// time to live (interlude.Request.TTL) has passed (host.WithExpiryWatch). The
// default is every second; 0 turns it off, for a program that calls
// ExpireQuestions itself.
func WithExpiryWatch(every time.Duration) Option { return func(c *config) { c.expiry = every } }

// WithRecoveryWatch sets how often the server's host finishes the runs that
// stopped before their end (host.WithRecoveryWatch). The default is every
// second; 0 turns it off, for a program that calls RecoverThreads itself.
func WithRecoveryWatch(every time.Duration) Option { return func(c *config) { c.recovery = every } }

// WithClock sets the clock the server's host judges expiries by (default
// time.Now). The graphs judge them by theirs (graph.WithClock), so give both
// the same.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// ExpiryActor is the name an expiry is recorded as given by (host.ExpiryActor).
const ExpiryActor = host.ExpiryActor

// WithInbox serves h under /inbox/ instead of the built-in web inbox (package
// server/inbox), without requiring a token: a browser cannot send one when it
// navigates, so an inbox authenticates its own API calls. h sees the full request
// path (/inbox/...). WithInbox(nil) turns the inbox off: /inbox/ then shows a
// placeholder page pointing at the API.
func WithInbox(h http.Handler) Option {
	return func(c *config) { c.inbox, c.inboxSet = h, true }
}

// WithTimeouts bounds how long a client may take to send a request or read an
// answer, and how long a shutdown waits (see Timeouts). Zero fields keep their
// defaults.
func WithTimeouts(t Timeouts) Option { return func(c *config) { c.timeouts = t } }

// WithStreamBuffer sets how many bytes of a run stream's events (POST
// /v1/graph/stream) may wait for a client that reads slowly (default 4 MiB).
// The run never waits for its client: one that falls further behind is cut
// off, its stream ending with an error event of code slow_consumer, and the run
// goes on. (Listeners of thread events are bounded by the event hub; see
// host.WithHubBytes.)
func WithStreamBuffer(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.streamBuf = n
		}
	}
}

// WithLangGraphAPI also serves the LangGraph Platform API (package
// server/langgraph) at the root, beside /v1/, behind the same tokens, so that
// LangGraph's SDKs and UIs work against the server; opts configure it.
func WithLangGraphAPI(opts ...langgraph.Option) Option {
	return func(c *config) { c.langgraph = append([]langgraph.Option{}, opts...) }
}

// WithCORSOrigins lets web pages served from these origins (such as
// "http://localhost:3000", where agent-chat-ui runs) call the API from a
// browser: preflights are answered and the headers LangGraph's clients read
// are exposed. Without it browsers may not call the API cross-origin.
func WithCORSOrigins(origins ...string) Option {
	return func(c *config) { c.cors = append(c.cors, origins...) }
}

// New returns a server over the given graphs.
func New(opts ...Option) (*Server, error) {
	cfg := config{bodyLimit: 1 << 20, metrics: true, watch: time.Second, expiry: time.Second, recovery: time.Second, now: time.Now, streamBuf: 4 << 20}
	for _, o := range opts {
		o(&cfg)
	}
	if !cfg.inboxSet {
		cfg.inbox = inbox.Handler()
	}
	s := &Server{inputProps: map[string]map[string]bool{}, inputNeeds: map[string][]string{}, bodyLimit: cfg.bodyLimit,
		log: cfg.log, hub: cfg.hub, inbox: cfg.inbox, csrf: http.NewCrossOriginProtection(),
		timeouts: cfg.timeouts.withDefaults(), streamBuffer: cfg.streamBuf}
	if s.log == nil {
		s.log = slog.Default()
	}
	var err error
	if s.host, err = newHost(cfg, s); err != nil {
		return nil, err
	}
	if s.hub == nil {
		s.hub = s.host.Events()
	}
	var infos []wire.GraphInfo
	for _, name := range s.host.Graphs() {
		g := s.host.Graph(name)
		schema := g.InputSchema()
		infos = append(infos, wire.GraphInfo{Name: name, Nodes: orEmpty(g.Nodes()), InputSchema: schema})
		s.inputProps[name], s.inputNeeds[name] = inputFields(schema)
	}
	if s.graphList, err = json.Marshal(wire.GraphList{Graphs: infos}); err != nil {
		return nil, fmt.Errorf("server: encode the graphs' input schemas: %w", err)
	}
	if s.tokens, err = checkTokens(cfg.tokens); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.runCtx, s.stopRuns = context.WithCancel(context.Background())
	if err := s.setCORS(cfg.cors); err != nil {
		return nil, err
	}
	if cfg.langgraph != nil {
		opts := append([]langgraph.Option{langgraph.WithLogger(s.log), langgraph.WithBodyLimit(s.bodyLimit),
			langgraph.WithWriteTimeout(s.timeouts.Write)}, cfg.langgraph...)
		s.langgraph = langgraph.New(s.host, opts...)
	}
	s.slack = cfg.slack
	if cfg.mailLinks != nil {
		s.mailLinks = cfg.mailLinks.Handler(s.host)
	}
	if err := s.routes(cfg.metrics, cfg.registry); err != nil {
		return nil, err
	}
	s.front = traced(s.mux, cfg.tracerProvider)
	if s.ownHost {
		s.host.Start(context.Background())
	}
	return s, nil
}

// newHost returns the host the server serves: the one given (WithHost), or one
// built from the server's options, whose expiries the server's metrics count.
func newHost(cfg config, s *Server) (*host.Host, error) {
	if cfg.host != nil {
		if len(cfg.graphs) > 0 {
			return nil, errors.New("server: WithHost and WithGraph both given; host the graphs with host.WithGraph")
		}
		return cfg.host, nil
	}
	if len(cfg.graphs) == 0 {
		return nil, errors.New("server: no graphs; pass WithGraph(g.Erase()) for each graph to host")
	}
	opts := []host.Option{host.WithLogger(s.log), host.WithClock(cfg.now),
		host.WithExpiryWatch(cfg.expiry), host.WithRecoveryWatch(cfg.recovery), host.WithLeaseWatch(cfg.watch),
		host.WithExpiredHook(func(graphName string, questions int) {
			for range questions {
				s.metrics.resolution(graphName, string(interlude.Expired))
			}
		})}
	opts = append(opts, hostTracing(cfg)...)
	if s.hub != nil {
		opts = append(opts, host.WithHub(s.hub))
	}
	if cfg.notifier != nil {
		opts = append(opts, host.WithNotifier(cfg.notifier))
	}
	for _, g := range cfg.graphs {
		opts = append(opts, host.WithGraph(g))
	}
	h, err := host.New(opts...)
	if err != nil {
		return nil, err // already says it comes from the host the server builds
	}
	s.ownHost = true
	return h, nil
}

// Host returns the host the server serves.
func (s *Server) Host() *host.Host { return s.host }

// ExpireQuestions closes the pending questions whose time to live has passed
// and runs their threads on (host.Host.ExpireQuestions).
func (s *Server) ExpireQuestions(ctx context.Context) (int, error) {
	return s.host.ExpireQuestions(ctx)
}

// RecoverThreads finishes the runs that stopped before their end
// (host.Host.RecoverThreads).
func (s *Server) RecoverThreads(ctx context.Context) (int, error) { return s.host.RecoverThreads(ctx) }

// inputFields returns the top-level properties of a graph's input schema (nil
// when it does not list them or allows others) and the ones it requires.
func inputFields(schema json.RawMessage) (props map[string]bool, required []string) {
	var s struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
		Required             []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil, nil
	}
	if s.Properties == nil || s.AdditionalProperties == nil || *s.AdditionalProperties {
		return nil, s.Required
	}
	props = make(map[string]bool, len(s.Properties))
	for k := range s.Properties {
		props[k] = true
	}
	return props, s.Required
}

// Events returns the server's event hub (WithEventHub, or its host's), or nil.
func (s *Server) Events() *host.Hub { return s.hub }

// Drain ends the open live event streams and refuses new ones, so that a graceful
// shutdown (http.Server.Shutdown) does not wait for them; runs keep going. Serve
// calls it when shutting down; a program serving the handler itself should pass
// it to http.Server.RegisterOnShutdown.
func (s *Server) Drain() {
	if s.hub != nil {
		s.hub.Close()
	}
}

// Close drains the server and cancels the runs still going: their unfinished steps
// are not committed, so each thread stays at its last checkpoint, and one whose
// run had more to do reads as running and is finished by the next server to
// start over the store, or by another replica (WithRecoveryWatch). Runs are
// otherwise independent of their requests: a client that disconnects does not stop
// a run it started, so an answer once accepted is always acted on.
func (s *Server) Close() error {
	s.Drain()
	s.stopRuns()
	if s.langgraph != nil {
		s.langgraph.Close()
	}
	if s.ownHost {
		return s.host.Close()
	}
	return nil
}

// ServeHTTP serves the API. Every answer (JSON, NDJSON and SSE streams, errors,
// the inbox's files) tells browsers not to guess its type from its content, so
// that text from a thread is never taken for HTML or script.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if s.corsHeaders(w, r) {
		return
	}
	s.front.ServeHTTP(w, r)
}

// reqCtx is what the router knows about a request.
type reqCtx struct {
	route string
	who   principal
}

type handler func(w http.ResponseWriter, r *http.Request, rc *reqCtx)

// endpoint is one method of a route.
type endpoint struct {
	need  roleSet // beyond reading
	doing string  // what the role allows, for a 403
	fn    handler
}

func (s *Server) routes(withMetrics bool, reg prometheus.Registerer) error {
	s.mux = http.NewServeMux()
	type route struct {
		pattern string
		public  bool
		eps     map[string]endpoint
	}
	// A read answers HEAD as GET without the body (net/http drops it), for
	// load balancers' health checks and curl -I. A live stream has no end for
	// HEAD to wait for, so it takes GET only.
	read := func(fn handler) map[string]endpoint {
		return map[string]endpoint{http.MethodGet: {fn: fn}, http.MethodHead: {fn: fn}}
	}
	stream := func(fn handler) map[string]endpoint { return map[string]endpoint{http.MethodGet: {fn: fn}} }
	answer := func(action string) map[string]endpoint {
		return map[string]endpoint{http.MethodPost: {need: canApprove, doing: action + " interrupts", fn: s.handleAnswer(action)}}
	}
	rs := []route{
		// invoke and stream check their role once they know what the body asks.
		{"/v1/graph/invoke", false, map[string]endpoint{http.MethodPost: {fn: s.handleInvoke(false)}}},
		{"/v1/graph/stream", false, map[string]endpoint{http.MethodPost: {fn: s.handleInvoke(true)}}},
		{"/v1/graphs", false, read(s.handleGraphs)},
		{"/v1/threads", false, read(s.handleList)},
		{"/v1/threads/{id}", false, map[string]endpoint{
			http.MethodGet:    {fn: s.handleThread},
			http.MethodHead:   {fn: s.handleThread},
			http.MethodDelete: {need: canAdmin, doing: "delete threads", fn: s.handleDelete},
		}},
		{"/v1/threads/{id}/history", false, read(s.handleHistory)},
		{"/v1/threads/{id}/resume", false, answer("resume")},
		{"/v1/threads/{id}/reject", false, answer("reject")},
		{"/v1/threads/{id}/cancel", false, answer("cancel")},
		{"/v1/threads/{id}/events", false, stream(s.handleEvents)},
		{"/v1/events", false, stream(s.handleAllEvents)},
		{"/v1/me", false, read(s.handleMe)},
		{"/v1/notifications", false, read(s.handleNotifications)},
		{"/v1/notifications/{id}/retry", false, map[string]endpoint{http.MethodPost: {need: canAdmin, doing: "retry notifications", fn: s.handleRetryNotification}}},
		{"/healthz", true, read(s.handleHealth)},
		{"/inbox/", true, read(s.handleInbox)},
		{"/", true, nil},
	}
	if s.slack != nil { // Slack signs its requests: no bearer token
		rs = append(rs, route{"/v1/slack/interactions", true, map[string]endpoint{http.MethodPost: {fn: s.handleSlack}}})
	}
	if s.mailLinks != nil {
		rs = append(rs, route{"/mail/", true, map[string]endpoint{http.MethodGet: {fn: s.handleMailLink}, http.MethodPost: {fn: s.handleMailLink}}})
	}
	if s.langgraph != nil {
		// The LangGraph API checks each route's role itself, from the caller.
		lg := func(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
			c := langgraph.Caller{Name: rc.who.name, Run: rc.who.roles&canRun != 0, Approve: rc.who.roles&canApprove != 0, Admin: rc.who.roles&canAdmin != 0}
			s.langgraph.ServeHTTP(w, r.WithContext(langgraph.WithCaller(r.Context(), c)))
		}
		eps := map[string]endpoint{}
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete} {
			eps[m] = endpoint{fn: lg}
		}
		for _, p := range langgraph.Patterns() {
			rs = append(rs, route{p, p == "/ok" || p == "/info", eps}) // health and version need no token
		}
	}
	if withMetrics {
		if reg == nil {
			reg = prometheus.NewRegistry()
		}
		if g, ok := reg.(prometheus.Gatherer); ok {
			serve := promhttp.HandlerFor(g, promhttp.HandlerOpts{})
			rs = append(rs, route{"/metrics", false, read(func(w http.ResponseWriter, r *http.Request, _ *reqCtx) {
				w.Header().Set("Cache-Control", "no-store")
				serve.ServeHTTP(w, r)
			})})
		}
		var patterns []string
		for _, r := range rs {
			patterns = append(patterns, r.pattern)
		}
		st, _ := store.As[*instrumentedStore](s.host.Store())
		var err error
		if s.metrics, err = newMetrics(reg, s.host.Graphs(), patterns, st, s.hub, s.host.Notifier()); err != nil {
			return err
		}
	}
	for _, r := range rs {
		s.mux.Handle(r.pattern, s.wrap(r.pattern, r.public, r.eps))
	}
	return nil
}

// wrap adds to a route what every request gets: authentication, method and role
// checks, a request log and metrics.
func (s *Server) wrap(pattern string, public bool, eps map[string]endpoint) http.Handler {
	var allow []string
	for m := range eps {
		allow = append(allow, m)
	}
	slices.Sort(allow)
	allowed := strings.Join(allow, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.active.Add(1)
		defer s.active.Done()
		start := time.Now()
		s.deadlines(w, r)
		sw := &statusWriter{ResponseWriter: w}
		rc := &reqCtx{route: pattern}
		defer s.done(sw, r, rc, start)
		if len(s.tokens) == 0 {
			if err := s.localOnly(r); err != nil {
				s.writeError(sw, r, err)
				return
			}
		}
		if !public {
			p, err := s.authenticate(r)
			if err != nil {
				s.writeError(sw, r, err)
				return
			}
			rc.who = p
		}
		if eps == nil {
			s.writeError(sw, r, notFound("no route %s %s; the API is under /v1/", r.Method, r.URL.Path))
			return
		}
		ep, ok := eps[r.Method]
		if !ok {
			sw.Header().Set("Allow", allowed)
			s.writeError(sw, r, &apiError{status: http.StatusMethodNotAllowed, code: codeMethodNotAllowed,
				message: fmt.Sprintf("%s does not take %s; use %s", r.URL.Path, r.Method, allowed)})
			return
		}
		if err := authorize(rc.who, ep.need, ep.doing); err != nil {
			s.writeError(sw, r, err)
			return
		}
		ep.fn(sw, r, rc)
	})
}

// localOnly guards a server without tokens, which anyone who reaches it may use,
// against web pages that a local browser visits: it refuses requests addressed to
// a host name other than localhost or a loopback address (DNS rebinding) and
// state-changing cross-origin browser requests (CSRF).
func (s *Server) localOnly(r *http.Request) error {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	ip := net.ParseIP(host)
	if !(host == "localhost" || strings.HasSuffix(host, ".localhost") || (ip != nil && ip.IsLoopback())) {
		return &apiError{status: http.StatusForbidden, code: codeForbidden,
			message: fmt.Sprintf("without API tokens this server answers only requests addressed to localhost or a loopback address, not %q; configure tokens to serve other hosts", r.Host)}
	}
	if err := s.csrf.Check(r); err != nil {
		return &apiError{status: http.StatusForbidden, code: codeForbidden,
			message: "cross-origin browser requests are refused by a server without API tokens: " + err.Error()}
	}
	return nil
}

// done logs the request and records its metrics.
func (s *Server) done(sw *statusWriter, r *http.Request, rc *reqCtx, start time.Time) {
	d := time.Since(start)
	status := sw.status
	if status == 0 {
		status = http.StatusOK
	}
	s.metrics.request(rc.route, r.Method, status, d)
	level := slog.LevelDebug
	switch {
	case status >= 500:
		level = slog.LevelError
	case status >= 400:
		level = slog.LevelWarn
	}
	if !s.log.Enabled(r.Context(), level) {
		return
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", status), slog.Duration("duration", d)}
	if rc.who.name != "" {
		attrs = append(attrs, slog.String("token", rc.who.name))
	}
	s.log.LogAttrs(r.Context(), level, "request", attrs...)
}

// statusWriter records the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (to flush).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// pathID returns the thread id of a /v1/threads/{id} route.
func pathID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !validID(id) {
		return "", badRequest("id", "thread id %q is not valid: use 1 to 256 letters, digits or -_.:@~+= (not . or ..)", id)
	}
	return id, nil
}

// graphFor returns the graph that runs an existing thread.
func (s *Server) graphFor(ctx context.Context, threadID string) (graph.Erased, error) {
	g, err := s.host.GraphFor(ctx, threadID)
	return g, graphField(err)
}

// route returns the graph that runs the thread and holds the thread for the
// request's run (host.Host.Hold).
func (s *Server) route(ctx context.Context, threadID, named string, create bool) (graph.Erased, *host.Held, error) {
	h, err := s.host.Hold(ctx, threadID, named, create)
	if err != nil {
		return nil, nil, graphField(err)
	}
	return h.Graph, h, nil
}

// graphField turns the host's refusal of a graph name into a 400 about the
// request's graph field.
func graphField(err error) error {
	var ie *interlude.Error
	if errors.As(err, &ie) && ie.Code == interlude.CodeInvalidRequest {
		return badRequest("graph", "%s", ie.Message)
	}
	return err
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request, _ *reqCtx) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleGraphs(w http.ResponseWriter, r *http.Request, _ *reqCtx) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(s.graphList)
}

const inboxPlaceholder = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Interlude inbox</title></head>
<body><h1>Interlude inbox</h1>
<p>The web inbox is turned off on this server. The threads waiting for answers are listed by
<code>GET /v1/threads?status=interrupted</code>, and answered with
<code>POST /v1/threads/{id}/resume</code>, <code>/reject</code> or <code>/cancel</code>.</p>
</body></html>
`

func (s *Server) handleInbox(w http.ResponseWriter, r *http.Request, _ *reqCtx) {
	if s.inbox != nil {
		s.inbox.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(inboxPlaceholder))
}
