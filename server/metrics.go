package server

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
)

// Metrics are kept in atomics in maps built once, so recording one takes no lock;
// /metrics renders them in the Prometheus text exposition format (version 0.0.4).

var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

type histogram struct {
	counts []atomic.Uint64 // per bucket, plus one for +Inf
	sum    atomic.Uint64   // float64 bits
}

func newHistogram() *histogram {
	return &histogram{counts: make([]atomic.Uint64, len(latencyBuckets)+1)}
}

func (h *histogram) observe(d time.Duration) {
	v := d.Seconds()
	i, _ := slices.BinarySearch(latencyBuckets, v)
	h.counts[i].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// The outcomes of a run in interlude_runs_total.
var runOutcomes = []string{"completed", "interrupted", "failed", "refused", "error"}

// The kinds of answers in interlude_resolutions_total.
var resolutionKinds = []string{"resolved", "rejected", "cancelled", "expired"}

type metrics struct {
	requests    sync.Map // requestKey -> *atomic.Uint64
	reqLatency  map[string]*histogram
	runs        map[[2]string]*atomic.Uint64 // graph, outcome
	runLatency  map[string]*histogram
	pauses      map[string]*atomic.Uint64
	resolutions map[[2]string]*atomic.Uint64 // graph, kind
	store       *instrumentedStore
	hub         *EventHub
	notifier    *notify.Dispatcher
}

type requestKey struct {
	route, method string
	code          int
}

func newMetrics(graphs, routes []string) *metrics {
	m := &metrics{reqLatency: map[string]*histogram{}, runs: map[[2]string]*atomic.Uint64{}, runLatency: map[string]*histogram{},
		pauses: map[string]*atomic.Uint64{}, resolutions: map[[2]string]*atomic.Uint64{}}
	for _, r := range routes {
		m.reqLatency[r] = newHistogram()
	}
	for _, g := range graphs {
		m.runLatency[g] = newHistogram()
		m.pauses[g] = new(atomic.Uint64)
		for _, o := range runOutcomes {
			m.runs[[2]string{g, o}] = new(atomic.Uint64)
		}
		for _, k := range resolutionKinds {
			m.resolutions[[2]string{g, k}] = new(atomic.Uint64)
		}
	}
	return m
}

func (m *metrics) request(route, method string, code int, d time.Duration) {
	if m == nil {
		return
	}
	k := requestKey{route, method, code}
	c, ok := m.requests.Load(k)
	if !ok {
		c, _ = m.requests.LoadOrStore(k, new(atomic.Uint64))
	}
	c.(*atomic.Uint64).Add(1)
	if h := m.reqLatency[route]; h != nil {
		h.observe(d)
	}
}

func (m *metrics) run(graph, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	if c := m.runs[[2]string{graph, outcome}]; c != nil {
		c.Add(1)
	}
	if outcome == "interrupted" {
		m.pauses[graph].Add(1)
	}
	if outcome != "refused" {
		if h := m.runLatency[graph]; h != nil {
			h.observe(d)
		}
	}
}

func (m *metrics) resolution(graph, kind string) {
	if m == nil {
		return
	}
	if c := m.resolutions[[2]string{graph, kind}]; c != nil {
		c.Add(1)
	}
}

// exposition writes the Prometheus text format.
type exposition struct{ b strings.Builder }

func (e *exposition) header(name, typ, help string) {
	e.b.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n")
}

func (e *exposition) sample(name string, labels []string, v float64) {
	e.b.WriteString(name)
	if len(labels) > 0 {
		e.b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				e.b.WriteByte(',')
			}
			e.b.WriteString(labels[i] + `="` + escapeLabel(labels[i+1]) + `"`)
		}
		e.b.WriteByte('}')
	}
	e.b.WriteByte(' ')
	e.b.WriteString(formatFloat(v))
	e.b.WriteByte('\n')
}

func (e *exposition) histogram(name string, labels []string, h *histogram) {
	var cum uint64
	for i, ub := range latencyBuckets {
		cum += h.counts[i].Load()
		e.sample(name+"_bucket", append(slices.Clone(labels), "le", formatFloat(ub)), float64(cum))
	}
	cum += h.counts[len(latencyBuckets)].Load()
	e.sample(name+"_bucket", append(slices.Clone(labels), "le", "+Inf"), float64(cum))
	e.sample(name+"_sum", labels, math.Float64frombits(h.sum.Load()))
	e.sample(name+"_count", labels, float64(cum))
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }

func sortedKeys[K comparable, V any](m map[K]V, less func(a, b K) int) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, less)
	return ks
}

func pairLess(a, b [2]string) int {
	if c := strings.Compare(a[0], b[0]); c != 0 {
		return c
	}
	return strings.Compare(a[1], b[1])
}

func (m *metrics) render() string {
	var e exposition
	e.header("interlude_http_requests_total", "counter", "HTTP requests by route, method and status code.")
	var keys []requestKey
	m.requests.Range(func(k, _ any) bool { keys = append(keys, k.(requestKey)); return true })
	slices.SortFunc(keys, func(a, b requestKey) int {
		if c := strings.Compare(a.route, b.route); c != 0 {
			return c
		}
		if c := strings.Compare(a.method, b.method); c != 0 {
			return c
		}
		return a.code - b.code
	})
	for _, k := range keys {
		c, _ := m.requests.Load(k)
		e.sample("interlude_http_requests_total", []string{"route", k.route, "method", k.method, "code", strconv.Itoa(k.code)}, float64(c.(*atomic.Uint64).Load()))
	}
	e.header("interlude_http_request_duration_seconds", "histogram", "HTTP request latency by route (streams: until the stream ends).")
	for _, r := range sortedKeys(m.reqLatency, strings.Compare) {
		e.histogram("interlude_http_request_duration_seconds", []string{"route", r}, m.reqLatency[r])
	}
	e.header("interlude_runs_total", "counter", "Runs (invoke, stream and answers) by graph and outcome: completed, interrupted, failed, refused (the request was refused and nothing changed) or error.")
	for _, k := range sortedKeys(m.runs, pairLess) {
		e.sample("interlude_runs_total", []string{"graph", k[0], "outcome", k[1]}, float64(m.runs[k].Load()))
	}
	e.header("interlude_run_duration_seconds", "histogram", "Latency of runs that were not refused, by graph: the steps they ran, committed.")
	for _, g := range sortedKeys(m.runLatency, strings.Compare) {
		e.histogram("interlude_run_duration_seconds", []string{"graph", g}, m.runLatency[g])
	}
	e.header("interlude_pauses_total", "counter", "Runs that ended paused (waiting for answers or at a breakpoint), by graph.")
	for _, g := range sortedKeys(m.pauses, strings.Compare) {
		e.sample("interlude_pauses_total", []string{"graph", g}, float64(m.pauses[g].Load()))
	}
	e.header("interlude_resolutions_total", "counter", "Answers accepted, by graph and kind (identical replays included).")
	for _, k := range sortedKeys(m.resolutions, pairLess) {
		e.sample("interlude_resolutions_total", []string{"graph", k[0], "kind", k[1]}, float64(m.resolutions[k].Load()))
	}
	if d := m.notifier; d != nil {
		st := d.Stats()
		e.header("interlude_notification_attempts_total", "counter", "Notification delivery attempts by what they left: delivered, retrying (tried again later) or failed (the last attempt failed).")
		e.sample("interlude_notification_attempts_total", []string{"outcome", "delivered"}, float64(st.Delivered))
		e.sample("interlude_notification_attempts_total", []string{"outcome", "retrying"}, float64(st.Retrying))
		e.sample("interlude_notification_attempts_total", []string{"outcome", "failed"}, float64(st.Failed))
	}
	if m.hub != nil {
		e.header("interlude_event_listeners", "gauge", "Open live event streams (GET /v1/threads/{id}/events).")
		e.sample("interlude_event_listeners", nil, float64(m.hub.subscribers.Load()))
		e.header("interlude_event_listeners_dropped_total", "counter", "Live event streams closed because the listener fell behind.")
		e.sample("interlude_event_listeners_dropped_total", nil, float64(m.hub.dropped.Load()))
	}
	if st := m.store; st != nil {
		e.header("interlude_store_operation_duration_seconds", "histogram", "Store operation latency by operation.")
		for i, op := range storeOps {
			e.histogram("interlude_store_operation_duration_seconds", []string{"op", op}, st.latency[i])
		}
		e.header("interlude_store_errors_total", "counter", "Store operations that returned an error (other than not found), by operation.")
		for i, op := range storeOps {
			e.sample("interlude_store_errors_total", []string{"op", op}, float64(st.errors[i].Load()))
		}
	}
	return e.b.String()
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request, _ *reqCtx) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(s.metrics.render()))
}

// The operations of a store, in the order of instrumentedStore's arrays.
var storeOps = []string{"append", "load", "version", "records", "meta", "list", "delete", "history"}

const (
	opAppend = iota
	opLoad
	opVersion
	opRecords
	opMeta
	opList
	opDelete
	opHistory
)

// instrumentedStore times the operations of a store.
type instrumentedStore struct {
	inner   store.Store
	latency [8]*histogram
	errors  [8]atomic.Uint64
}

// InstrumentStore wraps s so that the latency and errors of its operations show
// in /metrics (interlude_store_operation_duration_seconds and
// interlude_store_errors_total). Compile the graphs with the returned store; the
// server finds it through the graphs. The returned store unwraps to s (its
// Unwrap method), so store.As finds s's optional capabilities, such as
// store.Leaser on a store shared by several processes, through it.
func InstrumentStore(s store.Store) store.Store {
	is := &instrumentedStore{inner: s}
	for i := range is.latency {
		is.latency[i] = newHistogram()
	}
	return is
}

// Unwrap returns the store that InstrumentStore wrapped.
func (s *instrumentedStore) Unwrap() store.Store { return s.inner }

func (s *instrumentedStore) done(op int, start time.Time, err error) {
	s.latency[op].observe(time.Since(start))
	if err != nil && !errors.Is(err, interlude.ErrNotFound) {
		s.errors[op].Add(1)
	}
}

func (s *instrumentedStore) Append(ctx context.Context, a store.Append) error {
	start := time.Now()
	err := s.inner.Append(ctx, a)
	s.done(opAppend, start, err)
	return err
}

func (s *instrumentedStore) Load(ctx context.Context, threadID string) (*store.Loaded, error) {
	start := time.Now()
	l, err := s.inner.Load(ctx, threadID)
	s.done(opLoad, start, err)
	return l, err
}

func (s *instrumentedStore) Version(ctx context.Context, threadID string) (int64, error) {
	start := time.Now()
	v, err := s.inner.Version(ctx, threadID)
	s.done(opVersion, start, err)
	return v, err
}

func (s *instrumentedStore) Records(ctx context.Context, threadID string, after, before int64, limit int) ([]store.Record, error) {
	start := time.Now()
	rs, err := s.inner.Records(ctx, threadID, after, before, limit)
	s.done(opRecords, start, err)
	return rs, err
}

func (s *instrumentedStore) History(ctx context.Context, threadID string, before int64, limit int) (*store.HistoryPage, error) {
	start := time.Now()
	p, err := s.inner.History(ctx, threadID, before, limit)
	s.done(opHistory, start, err)
	return p, err
}

func (s *instrumentedStore) Meta(ctx context.Context, threadID string) (*store.Meta, error) {
	start := time.Now()
	m, err := s.inner.Meta(ctx, threadID)
	s.done(opMeta, start, err)
	return m, err
}

func (s *instrumentedStore) List(ctx context.Context, q store.Query) (*store.Page, error) {
	start := time.Now()
	p, err := s.inner.List(ctx, q)
	s.done(opList, start, err)
	return p, err
}

func (s *instrumentedStore) Delete(ctx context.Context, threadID string) error {
	start := time.Now()
	err := s.inner.Delete(ctx, threadID)
	s.done(opDelete, start, err)
	return err
}

func (s *instrumentedStore) Close() error { return s.inner.Close() }
