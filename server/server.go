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
	"github.com/interludehq/interlude/internal/keylock"
	"github.com/interludehq/interlude/server/inbox"
	"github.com/interludehq/interlude/store"
)

// Server is the HTTP API over a set of compiled graphs sharing one store. It is an
// http.Handler; mount it at the root of a mux or serve it with Serve. It is safe
// for concurrent use.
type Server struct {
	graphs     map[string]graph.Erased
	hosted     []string                   // the names of graphs, sorted
	inputProps map[string]map[string]bool // graph -> its input fields, nil when unknown
	inputNeeds map[string][]string        // graph -> the input fields a new thread needs
	graphList  []byte                     // the answer of GET /v1/graphs
	store      store.Store
	tokens     []token
	bodyLimit  int64
	log        *slog.Logger
	metrics    *metrics
	hub        *EventHub
	inbox      http.Handler
	mux        *http.ServeMux
	runCtx     context.Context
	stopRuns   context.CancelFunc
	csrf       *http.CrossOriginProtection
	threads    *keylock.Locks // one request's run per thread at a time in this process
	claimer    graph.Erased   // with a store shared by several processes: takes the claims (graph.Claim)
	now        func() time.Time

	// What a slow client may take, and the requests being served.
	timeouts     Timeouts
	streamBuffer int // bytes of a run stream's events that may wait for a slow client
	active       sync.WaitGroup
}

// Option configures New.
type Option func(*config)

type config struct {
	graphs    []graph.Erased
	tokens    []Token
	bodyLimit int64
	log       *slog.Logger
	metrics   bool
	hub       *EventHub
	inbox     http.Handler
	inboxSet  bool
	watch     time.Duration
	expiry    time.Duration
	recovery  time.Duration
	now       func() time.Time
	timeouts  Timeouts
	streamBuf int
}

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

// WithEventHub serves the live events of GET /v1/threads/{id}/events from h. The
// graphs must publish to it: compile them with graph.WithEvents(h.Publish).
// Without a hub that route answers 501.
func WithEventHub(h *EventHub) Option { return func(c *config) { c.hub = h } }

// WithLeaseWatch sets how often, with a store several processes share (a
// store.LeaseWatcher such as Postgres) and an event hub, the server looks for
// runs that died with their process: their lease expired. It tells each such
// thread's listeners on every replica how the thread now reads, with an end
// event that one replica sends: failed for a run that died before committing
// anything, interrupted for one that died after committing its pause (the
// thread's questions are pending, in the inbox). A run that died after
// committing answers or a step with more left to do sends none: the recovery
// watch (WithRecoveryWatch) finishes it, and that run ends it. The default is
// every second; 0 turns it off.
func WithLeaseWatch(every time.Duration) Option { return func(c *config) { c.watch = every } }

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
// WithHubBytes.)
func WithStreamBuffer(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.streamBuf = n
		}
	}
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
	if len(cfg.graphs) == 0 {
		return nil, errors.New("server: no graphs; pass WithGraph(g.Erase()) for each graph to host")
	}
	s := &Server{graphs: map[string]graph.Erased{}, inputProps: map[string]map[string]bool{}, inputNeeds: map[string][]string{}, bodyLimit: cfg.bodyLimit,
		log: cfg.log, hub: cfg.hub, inbox: cfg.inbox, csrf: http.NewCrossOriginProtection(), threads: keylock.New(), now: cfg.now,
		timeouts: cfg.timeouts.withDefaults(), streamBuffer: cfg.streamBuf}
	if s.log == nil {
		s.log = slog.Default()
	}
	var infos []graphInfo
	for _, g := range cfg.graphs {
		if g == nil {
			return nil, errors.New("server: WithGraph got a nil graph")
		}
		name := g.Name()
		switch {
		case name == "":
			return nil, errors.New("server: a graph has no name; compile it with graph.WithName")
		case s.graphs[name] != nil:
			return nil, fmt.Errorf("server: two graphs are named %q", name)
		case s.store == nil:
			s.store = g.Store()
		case !sameStore(s.store, g.Store()):
			return nil, fmt.Errorf("server: graph %q keeps its threads in another store than graph %q; compile every graph with the same graph.WithStore", name, infos[0].Name)
		}
		s.graphs[name] = g
		if _, shared := store.As[store.Leaser](g.Store()); shared && s.claimer == nil {
			s.claimer = g // any graph claims for all: they share the store
		}
		schema := g.InputSchema()
		infos = append(infos, graphInfo{Name: name, Nodes: orEmpty(g.Nodes()), InputSchema: schema})
		s.inputProps[name], s.inputNeeds[name] = inputFields(schema)
	}
	slices.SortFunc(infos, func(a, b graphInfo) int { return strings.Compare(a.Name, b.Name) })
	for _, g := range infos {
		s.hosted = append(s.hosted, g.Name)
	}
	var err error
	if s.graphList, err = json.Marshal(graphList{Graphs: infos}); err != nil {
		return nil, fmt.Errorf("server: encode the graphs' input schemas: %w", err)
	}
	if s.tokens, err = checkTokens(cfg.tokens); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.runCtx, s.stopRuns = context.WithCancel(context.Background())
	s.routes(cfg.metrics)
	if w, ok := store.As[store.LeaseWatcher](s.store); ok && s.hub != nil && cfg.watch > 0 {
		go s.watchLeases(w, cfg.watch)
	}
	if _, ok := store.As[store.ExpiryIndex](s.store); ok && cfg.expiry > 0 {
		go s.watchExpiries(cfg.expiry)
	}
	if _, ok := store.As[store.RecoveryIndex](s.store); ok && cfg.recovery > 0 {
		go s.watchRecoveries(cfg.recovery)
	}
	if cfg.metrics {
		s.metrics.hub = s.hub
		s.metrics.store, _ = store.As[*instrumentedStore](s.store)
	}
	return s, nil
}

// sameStore reports whether a and b are the same store (false for stores whose
// type cannot be compared).
func sameStore(a, b store.Store) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

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

// Events returns the server's event hub (WithEventHub), or nil.
func (s *Server) Events() *EventHub { return s.hub }

// Drain ends the open live event streams and refuses new ones, so that a graceful
// shutdown (http.Server.Shutdown) does not wait for them; runs keep going. Serve
// calls it when shutting down; a program serving the handler itself should pass
// it to http.Server.RegisterOnShutdown.
func (s *Server) Drain() {
	if s.hub != nil {
		s.hub.Close()
	}
}

// watchLeases tells the listeners of each thread whose run died with its
// process (its lease expired) that the run failed, looking every period until
// the server closes.
func (s *Server) watchLeases(w store.LeaseWatcher, every time.Duration) {
	s.every(every, func() {
		ctx, cancel := context.WithTimeout(s.runCtx, every)
		expired, err := w.ExpiredLeases(ctx)
		cancel()
		if err != nil {
			if s.runCtx.Err() == nil {
				s.log.Warn("looking for runs that died with their process failed", "err", err)
			}
			return
		}
		for _, e := range expired {
			s.announceDeadRun(e)
		}
	})
}

// announceDeadRun tells the listeners of a thread whose run died with its
// process how the thread now reads.
func (s *Server) announceDeadRun(e store.ExpiredLease) {
	ctx, cancel := context.WithTimeout(s.runCtx, 10*time.Second)
	m, err := s.store.Meta(ctx, e.ThreadID)
	cancel()
	if err != nil {
		if !errors.Is(err, interlude.ErrNotFound) && s.runCtx.Err() == nil {
			s.log.Warn("reading a thread whose run died with its process failed", "thread_id", e.ThreadID, "err", err)
		}
		return
	}
	switch m.Status {
	case store.StatusFailed:
		s.log.Warn("a run died with its process; its thread reads as failed until it is continued", "thread_id", e.ThreadID, "checkpoint", m.Version)
		s.hub.Publish(graph.Event{Type: graph.EventEnd, ThreadID: e.ThreadID, Status: graph.Failed, Checkpoint: m.Version})
	case store.StatusInterrupted:
		s.log.Warn("a run died with its process after pausing; its thread waits for its answers", "thread_id", e.ThreadID, "checkpoint", m.Version)
		s.hub.Publish(graph.Event{Type: graph.EventEnd, ThreadID: e.ThreadID, Status: graph.Interrupted, Checkpoint: m.Version})
	case store.StatusRunning:
		s.log.Warn("a run died with its process after committing work that left more to do; it will be finished from its last checkpoint", "thread_id", e.ThreadID, "checkpoint", m.Version)
	}
}

// every calls fn each period until the server closes. A call that outlasts the
// period delays the next one rather than overlapping it.
func (s *Server) every(period time.Duration, fn func()) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-s.runCtx.Done():
			return
		case <-tick.C:
			fn()
		}
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
	return nil
}

// ServeHTTP serves the API. Every answer (JSON, NDJSON and SSE streams, errors,
// the inbox's files) tells browsers not to guess its type from its content, so
// that text from a thread is never taken for HTML or script.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	s.mux.ServeHTTP(w, r)
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

func (s *Server) routes(withMetrics bool) {
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
		{"/healthz", true, read(s.handleHealth)},
		{"/inbox/", true, read(s.handleInbox)},
		{"/", true, nil},
	}
	if withMetrics {
		rs = append(rs, route{"/metrics", false, read(s.handleMetrics)})
		var names, patterns []string
		for n := range s.graphs {
			names = append(names, n)
		}
		for _, r := range rs {
			patterns = append(patterns, r.pattern)
		}
		s.metrics = newMetrics(names, patterns)
	}
	for _, r := range rs {
		s.mux.Handle(r.pattern, s.wrap(r.pattern, r.public, r.eps))
	}
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

// graphFor returns the graph that runs the thread. For an existing thread it is the
// graph stored with it, which named (if given) must match.
func (s *Server) graphFor(ctx context.Context, threadID, named string) (graph.Erased, error) {
	m, err := s.store.Meta(ctx, threadID)
	if err != nil {
		if errors.Is(err, interlude.ErrNotFound) {
			return nil, notFound("thread %q does not exist; start it with input", threadID)
		}
		return nil, err
	}
	return s.pick(threadID, m.Graph, named, false)
}

// pick returns the graph to run the thread stored with graph stored ("" for a
// thread not written yet): that one, which named (if given) must match, or for
// a new thread with create set, named or the only graph hosted.
func (s *Server) pick(threadID, stored, named string, create bool) (graph.Erased, error) {
	if named != "" && s.graphs[named] == nil {
		return nil, badRequest("graph", "graph %q is not hosted here; hosted: %s", named, s.graphNames())
	}
	if stored == "" {
		switch {
		case !create:
			return nil, notFound("thread %q does not exist; start it with input", threadID)
		case named != "":
			return s.graphs[named], nil
		case len(s.graphs) == 1:
			for _, g := range s.graphs {
				return g, nil
			}
		}
		return nil, badRequest("graph", "graph is required to start a thread; hosted: %s", s.graphNames())
	}
	g := s.graphs[stored]
	switch {
	case g == nil:
		return nil, notFound("thread %q runs graph %q, which this server does not host", threadID, stored)
	case named != "" && named != stored:
		return nil, badRequest("graph", "thread %q runs graph %q, not %q; leave graph out or name %q", threadID, stored, named, stored)
	}
	return g, nil
}

// held is what a request holds on a thread while its run goes: this process's
// lock on the thread and, with a store shared by several processes, the claim.
type held struct {
	claim  *graph.Claim
	unlock func()
	fresh  bool // the thread is not stored yet: this run creates it
	once   sync.Once
}

// context returns the run's context under the claim, if any.
func (h *held) context(ctx context.Context) context.Context {
	if h == nil || h.claim == nil {
		return ctx
	}
	return h.claim.Context(ctx)
}

// release lets the thread go, once the run has ended and before its answer is
// sent, so that a client acting on the answer finds the thread free. Later
// calls do nothing.
func (h *held) release() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		if h.claim != nil {
			h.claim.Release(context.Background())
		}
		h.unlock()
	})
}

// route returns the graph that runs the thread, as pick chooses it, and holds
// the thread for the request's run. With a store shared by several processes it
// claims the thread (graph.Claim): one round trip that reserves the thread, or
// answers thread_busy if another process runs it, and tells whose thread it is.
// Otherwise it reads the thread's graph; a new thread stays locked in this
// process until its first run ends, so two requests creating it with different
// graphs do not overlap.
func (s *Server) route(ctx context.Context, threadID, named string, create bool) (graph.Erased, *held, error) {
	if named != "" && s.graphs[named] == nil {
		g, err := s.pick(threadID, "", named, create)
		return g, nil, err
	}
	if s.claimer == nil {
		m, err := s.store.Meta(ctx, threadID)
		switch {
		case err == nil:
			g, err := s.pick(threadID, m.Graph, named, create)
			return g, &held{unlock: func() {}}, err
		case !errors.Is(err, interlude.ErrNotFound):
			return nil, nil, err
		}
	}
	unlock, err := s.threads.Lock(ctx, threadID)
	if err != nil {
		return nil, nil, err
	}
	h := &held{unlock: unlock}
	stored := ""
	if s.claimer != nil {
		// Any graph can claim, but the thread's own graph knows whether its
		// copy is current, and the claim then skips loading it.
		claimer := s.claimer
		if named != "" {
			claimer = s.graphs[named]
		}
		if h.claim, err = claimer.Claim(ctx, threadID); err != nil {
			unlock()
			return nil, nil, err
		}
		stored = h.claim.Graph
	} else if m, err := s.store.Meta(ctx, threadID); err == nil {
		stored = m.Graph // created while this request waited for the lock
	} else if !errors.Is(err, interlude.ErrNotFound) {
		unlock()
		return nil, nil, err
	}
	g, err := s.pick(threadID, stored, named, create)
	if err != nil {
		h.release()
		return nil, nil, err
	}
	h.fresh = stored == ""
	return g, h, nil
}

// graphNames lists the hosted graphs, for messages.
func (s *Server) graphNames() string { return strings.Join(s.hosted, ", ") }

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
