package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/server/inbox"
	"github.com/interludehq/interlude/server/internal/metrics"
	"github.com/interludehq/interlude/server/langgraph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/wire"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"
)

// Server is the HTTP API over a host: an http.Handler, safe for concurrent use.
type Server struct {
	host      *host.Host
	ownHost   bool   // the server built its host, and closes it
	graphList []byte // the answer of GET /v1/graphs
	keys      *auth.Keys
	bodyLimit int64
	log       *slog.Logger
	metrics   *metrics.Metrics
	hub       *host.Hub
	inbox     http.Handler
	mux       *http.ServeMux
	front     http.Handler // mux, traced
	runCtx    context.Context
	stopRuns  context.CancelFunc
	csrf      *http.CrossOriginProtection
	langgraph *langgraph.Handler // the LangGraph Platform API, or nil
	slack     *notify.Slack      // answers from Slack, or nil
	mailLinks http.Handler       // the mail links' pages (WithMailLinks), or nil
	cors      map[string]bool    // origins browsers may call the API from

	// What a slow client may take, and the requests being served.
	timeouts     Timeouts
	streamBuffer int // bytes of a run stream's events that may wait for a slow client
	active       sync.WaitGroup
}

// Option configures New.
type Option func(*config)

type config struct {
	options.Problems
	host      *host.Host
	graphs    []graph.Erased
	tokens    []auth.Token
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

// WithHost serves h, whose own options then decide its clock and watches;
// the caller starts and closes it, and WithGraph, WithClock and the Watch
// options are not taken. Without it the server builds, starts and closes a
// host of its own.
func WithHost(h *host.Host) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.host, h, h != nil, "server.WithHost", "the host is nil; leave the option out for a host of the server's own")
	}
}

// WithGraph hosts g under its name; repeat it for each graph. All graphs
// share one store (graph.WithStore).
func WithGraph(g graph.Erased) Option {
	return func(c *config) {
		if g == nil {
			c.Refuse("server.WithGraph", "the graph is nil; give a compiled graph's Erase()")
			return
		}
		c.graphs = append(c.graphs, g)
	}
}

// WithTokens requires bearer tokens. Without tokens anyone who reaches the API
// may use it, so Serve then listens on loopback addresses only.
func WithTokens(ts []auth.Token) Option {
	return func(c *config) { c.tokens = append(c.tokens, ts...) }
}

// WithBodyLimit caps request bodies at n bytes (default 1 MiB), refusing
// larger ones with 413. n must be positive.
func WithBodyLimit(n int64) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.bodyLimit, n, n > 0, "server.WithBodyLimit", "%d bytes is not a limit; give a positive number of bytes", n)
	}
}

// WithLogger sets the logger of requests and errors (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.log, l, l != nil, "server.WithLogger", "the logger is nil; leave the option out for slog.Default()")
	}
}

// WithMetrics turns /metrics and the recording of metrics on (the default) or off.
func WithMetrics(on bool) Option { return func(c *config) { c.metrics = on } }

// WithMetricsRegistry registers the metrics (and the Go runtime's and
// process's collectors, unless there) with reg instead of a registry of the
// server's own; /metrics serves reg if it is a prometheus.Gatherer.
func WithMetricsRegistry(reg prometheus.Registerer) Option {
	return func(c *config) { c.registry = reg }
}

// WithEventHub serves the live events of /v1/threads/{id}/events and
// /v1/events from h (made with NewEventHub, to which the graphs publish with
// graph.WithEvents(h.Publish)) and gives it to the host the server builds.
// Without a hub those routes answer 501.
func WithEventHub(h *host.Hub) Option { return func(c *config) { c.hub = h } }

// WithLeaseWatch sets how often the server's host looks for runs that died
// with their process (host.WithLeaseWatch; default 1s, 0 for never).
func WithLeaseWatch(every time.Duration) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.watch, every, every >= 0, "server.WithLeaseWatch", "%v is negative; give a period, or 0 for never", every)
	}
}

// WithExpiryWatch sets how often the server's host closes expired questions
// (host.WithExpiryWatch; default 1s, 0 for never).
func WithExpiryWatch(every time.Duration) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.expiry, every, every >= 0, "server.WithExpiryWatch", "%v is negative; give a period, or 0 for never", every)
	}
}

// WithRecoveryWatch sets how often the server's host finishes stopped runs
// (host.WithRecoveryWatch; default 1s, 0 for never).
func WithRecoveryWatch(every time.Duration) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.recovery, every, every >= 0, "server.WithRecoveryWatch", "%v is negative; give a period, or 0 for never", every)
	}
}

// WithClock sets the clock the server's host judges expiries by (default
// time.Now); give the graphs the same (graph.WithClock).
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.now, now, now != nil, "server.WithClock", "the clock is nil; leave the option out for time.Now")
	}
}

// ExpiryActor is the name an expiry is recorded as given by (host.ExpiryActor).
const ExpiryActor = host.ExpiryActor

// WithInbox serves h under /inbox/ instead of the built-in web inbox, without
// requiring a token (an inbox authenticates its own API calls); h sees the
// full path. WithInbox(nil) shows a page pointing at the API instead.
func WithInbox(h http.Handler) Option {
	return func(c *config) { c.inbox, c.inboxSet = h, true }
}

// WithTimeouts bounds how long a client may take and a shutdown waits (see
// Timeouts); zero fields keep their defaults.
func WithTimeouts(t Timeouts) Option { return func(c *config) { c.timeouts = t } }

// WithStreamBuffer sets how many bytes of a run stream's events may wait for
// a slow client (default 4 MiB): one further behind is cut off with an error
// event of code slow_consumer, and the run goes on. n must be positive.
func WithStreamBuffer(n int) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.streamBuf, n, n > 0, "server.WithStreamBuffer", "%d bytes is not a buffer; give a positive number of bytes", n)
	}
}

// WithLangGraphAPI also serves the LangGraph Platform API (package
// server/langgraph) at the root, behind the same tokens; opts configure it.
func WithLangGraphAPI(opts ...langgraph.Option) Option {
	return func(c *config) { c.langgraph = append([]langgraph.Option{}, opts...) }
}

// WithCORSOrigins lets web pages from these origins (such as
// "http://localhost:3000") call the API from a browser. Each must be
// scheme://host[:port] with scheme http or https.
func WithCORSOrigins(origins ...string) Option {
	return func(c *config) {
		for _, o := range origins {
			if !isOrigin(o) {
				c.Refuse("server.WithCORSOrigins", "%q is not an origin; give scheme://host[:port], such as http://localhost:3000", o)
				return
			}
		}
		c.cors = append(c.cors, origins...)
	}
}

// New returns a server over the given graphs.
func New(opts ...Option) (*Server, error) {
	cfg := config{bodyLimit: 1 << 20, log: slog.Default(), metrics: true, watch: time.Second, expiry: time.Second, recovery: time.Second, now: time.Now, streamBuf: 4 << 20}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Err(); err != nil {
		return nil, err
	}
	switch {
	case !cfg.inboxSet:
		cfg.inbox = inbox.Handler()
	case cfg.inbox == nil:
		cfg.inbox = inbox.Off()
	}
	s := &Server{bodyLimit: cfg.bodyLimit,
		log: cfg.log, hub: cfg.hub, inbox: cfg.inbox, csrf: http.NewCrossOriginProtection(),
		timeouts: cfg.timeouts.withDefaults(), streamBuffer: cfg.streamBuf}
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
		infos = append(infos, wire.GraphInfo{Name: name, Nodes: orEmpty(g.Nodes()), InputSchema: g.InputSchema()})
	}
	if s.graphList, err = json.Marshal(wire.GraphList{Graphs: infos}); err != nil {
		return nil, fmt.Errorf("server: encode the graphs' input schemas: %w", err)
	}
	if s.keys, err = auth.NewKeys(cfg.tokens); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.runCtx, s.stopRuns = context.WithCancel(context.Background())
	if err := s.setCORS(cfg.cors); err != nil {
		return nil, err
	}
	if cfg.langgraph != nil {
		opts := []langgraph.Option{langgraph.WithLogger(s.log), langgraph.WithBodyLimit(s.bodyLimit)}
		if s.timeouts.Write > 0 { // else no bound: the handler's own default
			opts = append(opts, langgraph.WithWriteTimeout(s.timeouts.Write))
		}
		if s.langgraph, err = langgraph.New(s.host, append(opts, cfg.langgraph...)...); err != nil {
			return nil, err
		}
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

// newHost returns the host given (WithHost) or one built from the options.
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
				s.metrics.Resolution(graphName, string(interlude.Expired))
			}
		})}
	if cfg.tracerProvider != nil {
		opts = append(opts, host.WithTracerProvider(cfg.tracerProvider))
	}
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

// Events returns the server's event hub (WithEventHub, or its host's), or nil.
func (s *Server) Events() *host.Hub { return s.hub }

// Drain ends the live event streams and refuses new ones, so that a graceful
// shutdown need not wait for them (Serve calls it; pass it to
// http.Server.RegisterOnShutdown when serving the handler yourself).
func (s *Server) Drain() {
	if s.hub != nil {
		s.hub.Close()
	}
}

// Close drains the server and cancels the runs still going: each thread stays
// at its last checkpoint, and the recovery watch of the next server (or of a
// replica) finishes it. A client that disconnects does not stop its run.
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

// ServeHTTP serves the API. Every answer tells browsers not to guess its type
// (nosniff), so that text from a thread is never taken for HTML or script.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header()["X-Content-Type-Options"] = noSniff
	if s.corsHeaders(w, r) {
		return
	}
	s.front.ServeHTTP(w, r)
}

// reqCtx is what the router knows about a request.
type reqCtx struct {
	route string
	who   auth.Caller
}

type handler func(w http.ResponseWriter, r *http.Request, rc *reqCtx) error

// plain is h as a route's handler, for routes that answer every request themselves.
func plain(h http.Handler) handler {
	return func(w http.ResponseWriter, r *http.Request, _ *reqCtx) error { h.ServeHTTP(w, r); return nil }
}

// anyMethod keys the endpoint of a route that takes every method, and
// answers those it does not serve itself.
const anyMethod = "*"

// endpoint is one method of a route.
type endpoint struct {
	need  auth.Role // beyond reading
	doing string    // what the role allows, for a 403
	fn    handler
}

func (s *Server) routes(withMetrics bool, reg prometheus.Registerer) error {
	s.mux = http.NewServeMux()
	type route struct {
		pattern string
		public  bool
		eps     map[string]endpoint
	}
	// A read answers HEAD too; a live stream, which has no end, does not.
	read := func(fn handler) map[string]endpoint {
		return map[string]endpoint{http.MethodGet: {fn: fn}, http.MethodHead: {fn: fn}}
	}
	stream := func(fn handler) map[string]endpoint { return map[string]endpoint{http.MethodGet: {fn: fn}} }
	answer := func(action string) map[string]endpoint {
		return map[string]endpoint{http.MethodPost: {need: auth.RoleApprove, doing: action + " interrupts", fn: s.handleAnswer(action)}}
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
			http.MethodDelete: {need: auth.RoleAdmin, doing: "delete threads", fn: s.handleDelete},
		}},
		{"/v1/threads/{id}/history", false, read(s.handleHistory)},
		{"/v1/threads/{id}/fork", false, map[string]endpoint{http.MethodPost: {need: auth.RoleRun, doing: "fork threads", fn: s.handleFork}}},
		{"/v1/threads/{id}/resume", false, answer("resume")},
		{"/v1/threads/{id}/reject", false, answer("reject")},
		{"/v1/threads/{id}/cancel", false, answer("cancel")},
		{"/v1/threads/{id}/events", false, stream(s.handleEvents)},
		{"/v1/events", false, stream(s.handleAllEvents)},
		{"/v1/me", false, read(s.handleMe)},
		{"/v1/notifications", false, read(s.handleNotifications)},
		{"/v1/notifications/{id}/retry", false, map[string]endpoint{http.MethodPost: {need: auth.RoleAdmin, doing: "retry notifications", fn: s.handleRetryNotification}}},
		{"/healthz", true, read(s.handleHealth)},
		{"/inbox/", true, read(s.handleInbox)},
		{"/", true, nil},
	}
	if s.slack != nil { // Slack signs its requests: no bearer token
		rs = append(rs, route{"/v1/slack/interactions", true, map[string]endpoint{http.MethodPost: {fn: plain(s.slack.Handler(s.slackAnswer))}}})
	}
	if s.mailLinks != nil {
		rs = append(rs, route{"/mail/", true, map[string]endpoint{http.MethodGet: {fn: plain(s.mailLinks)}, http.MethodPost: {fn: plain(s.mailLinks)}}})
	}
	lgRoutes := map[string]bool{} // whose refusals take LangGraph's shape
	if s.langgraph != nil {
		// The LangGraph API checks each route's role itself, from the caller.
		lg := func(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
			s.langgraph.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), rc.who)))
			return nil
		}
		// It answers every method, and a method a route does not take with
		// the route's own Allow.
		eps := map[string]endpoint{anyMethod: {fn: lg}}
		for _, p := range langgraph.Patterns() {
			rs = append(rs, route{p, p == "/ok" || p == "/info", eps}) // health and version need no token
			lgRoutes[p] = true
		}
	}
	if withMetrics {
		if reg == nil {
			reg = prometheus.NewRegistry()
		}
		if g, ok := reg.(prometheus.Gatherer); ok {
			serve := promhttp.HandlerFor(g, promhttp.HandlerOpts{})
			rs = append(rs, route{"/metrics", false, read(func(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
				w.Header().Set("Cache-Control", "no-store")
				serve.ServeHTTP(w, r)
				return nil
			})})
		}
		var patterns []string
		for _, r := range rs {
			patterns = append(patterns, r.pattern)
		}
		st, _ := store.As[prometheus.Collector](s.host.Store())
		var err error
		if s.metrics, err = metrics.New(reg, s.host.Graphs(), patterns, st, s.hub, s.host.Notifier()); err != nil {
			return err
		}
	}
	for _, r := range rs {
		refuse := s.writeError
		if lgRoutes[r.pattern] {
			refuse = s.writeLangGraphError
		}
		s.mux.Handle(r.pattern, s.wrap(r.pattern, r.public, r.eps, refuse))
	}
	return nil
}

// wrap adds to a route what every request gets: authentication, method and role
// checks, a request log and metrics. refuse answers the errors.
func (s *Server) wrap(pattern string, public bool, eps map[string]endpoint, refuse func(http.ResponseWriter, *http.Request, error)) http.Handler {
	var allow []string
	for m := range eps {
		if m != anyMethod {
			allow = append(allow, m)
		}
	}
	slices.Sort(allow)
	allowed := strings.Join(allow, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.active.Add(1)
		defer s.active.Done()
		start := time.Now()
		s.deadlines(w, r)
		// The writer and the request's context share one allocation.
		ex := &exchange{statusWriter: statusWriter{ResponseWriter: w}, reqCtx: reqCtx{route: pattern}}
		sw, rc := &ex.statusWriter, &ex.reqCtx
		defer s.done(sw, r, rc, start)
		if s.keys.Open() {
			if err := s.localOnly(r); err != nil {
				refuse(sw, r, err)
				return
			}
		}
		if !public {
			who, err := s.keys.Authenticate(r)
			if err != nil {
				refuse(sw, r, &apiError{status: http.StatusUnauthorized, code: codeUnauthenticated, message: err.Error()})
				return
			}
			rc.who = who
		}
		if eps == nil {
			refuse(sw, r, notFound("no route %s %s; the API is under /v1/", r.Method, r.URL.Path))
			return
		}
		ep, ok := eps[r.Method]
		if !ok {
			ep, ok = eps[anyMethod]
		}
		if !ok {
			sw.Header().Set("Allow", allowed)
			refuse(sw, r, &apiError{status: http.StatusMethodNotAllowed, code: codeMethodNotAllowed,
				message: fmt.Sprintf("%s does not take %s; use %s", r.URL.Path, r.Method, allowed)})
			return
		}
		if err := rc.who.Need(ep.need, ep.doing); err != nil {
			refuse(sw, r, err)
			return
		}
		if err := ep.fn(sw, r, rc); err != nil {
			refuse(sw, r, err)
		}
	})
}

// localOnly guards a server without tokens against web pages a local browser
// visits: it refuses requests addressed to other hosts than loopback ones (DNS
// rebinding) and state-changing cross-origin requests (CSRF).
func (s *Server) localOnly(r *http.Request) error {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if !(host == "localhost" || strings.HasSuffix(host, ".localhost") || isLoopbackIP(host)) {
		return &apiError{status: http.StatusForbidden, code: codeForbidden,
			message: fmt.Sprintf("without API tokens this server answers only requests addressed to localhost or a loopback address, not %q; configure tokens to serve other hosts", r.Host)}
	}
	if err := s.csrf.Check(r); err != nil {
		return &apiError{status: http.StatusForbidden, code: codeForbidden,
			message: "cross-origin browser requests are refused by a server without API tokens: " + err.Error()}
	}
	return nil
}

// isLoopbackIP reports whether host is a loopback IP address, as
// net.ParseIP(host).IsLoopback() does, without allocating for the common
// forms; a form netip does not read (such as an IPv4 address with leading
// zeros) goes to net.ParseIP.
func isLoopbackIP(host string) bool {
	if ip, err := netip.ParseAddr(host); err == nil && ip.Zone() == "" {
		return ip.Unmap().IsLoopback()
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// done logs the request and records its metrics.
func (s *Server) done(sw *statusWriter, r *http.Request, rc *reqCtx, start time.Time) {
	d := time.Since(start)
	status := sw.status
	if status == 0 {
		status = http.StatusOK
	}
	s.metrics.Request(rc.route, r.Method, status, d)
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
	if rc.who.Name != "" {
		attrs = append(attrs, slog.String("token", rc.who.Name))
	}
	s.log.LogAttrs(r.Context(), level, "request", attrs...)
}

// exchange is what wrap keeps of one request: its writer and what the router
// knows of it.
type exchange struct {
	statusWriter
	reqCtx
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

// pathID returns the thread id of a /v1/threads/{id} route.
func pathID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !host.ValidID(id) {
		return "", badRequest("id", "thread id %q is not valid: use 1 to 256 letters, digits or -_.:@~+= (not . or ..)", id)
	}
	return id, nil
}

// hold holds the thread for the request's run (host.Host.Hold).
func (s *Server) hold(ctx context.Context, threadID, named string, create bool) (*host.Held, error) {
	h, err := s.host.Hold(ctx, threadID, named, create)
	return h, graphField(err)
}

// graphField turns the host's refusal of a graph name into a 400 about the
// request's graph field.
func graphField(err error) error {
	if err == nil {
		return nil
	}
	var ie *interlude.Error
	if errors.As(err, &ie) && ie.Code == interlude.CodeInvalidRequest {
		return badRequest("graph", "%s", ie.Message)
	}
	return err
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	return answer(w, map[string]string{"status": "ok"})
}

func (s *Server) handleGraphs(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(s.graphList)
	return nil
}

func (s *Server) handleInbox(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	s.inbox.ServeHTTP(w, r)
	return nil
}

// meAnswer answers GET /v1/me.
type meAnswer struct {
	Name   string      `json:"name"`
	Roles  []auth.Role `json:"roles"`
	Groups []string    `json:"groups"`
}

// handleMe serves GET /v1/me: the caller's token name, roles and groups.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if _, err := query(r); err != nil {
		return err
	}
	return answer(w, meAnswer{Name: rc.who.Name, Roles: orEmpty(rc.who.Roles), Groups: orEmpty(rc.who.Groups)})
}
