package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
)

// Metrics are prometheus/client_golang collectors, registered with the
// server's registry (WithMetricsRegistry). The series each request, run and
// answer records are looked up once, so recording one takes no lock.

var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// The outcomes of a run in interlude_runs_total.
var runOutcomes = []string{"completed", "interrupted", "failed", "refused", "error"}

// The kinds of answers in interlude_resolutions_total.
var resolutionKinds = []string{"resolved", "rejected", "cancelled", "expired"}

type metrics struct {
	requestsVec *prometheus.CounterVec
	requests    sync.Map // requestKey -> prometheus.Counter
	reqLatency  map[string]prometheus.Observer
	runs        map[[2]string]prometheus.Counter // graph, outcome
	runLatency  map[string]prometheus.Observer
	pauses      map[string]prometheus.Counter
	resolutions map[[2]string]prometheus.Counter // graph, kind
}

type requestKey struct {
	route, method string
	code          int
}

// newMetrics registers the server's metrics with reg, and those of its store
// (InstrumentStore), event hub and notification dispatcher, if any, and the Go runtime's and the
// process's collectors unless reg has them.
func newMetrics(reg prometheus.Registerer, graphs, routes []string, st *instrumentedStore, hub *host.Hub, d *notify.Dispatcher) (*metrics, error) {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "interlude_http_requests_total",
		Help: "HTTP requests by route, method and status code."}, []string{"route", "method", "code"})
	reqLatency := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "interlude_http_request_duration_seconds",
		Help: "HTTP request latency by route (streams: until the stream ends).", Buckets: latencyBuckets}, []string{"route"})
	runs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "interlude_runs_total",
		Help: "Runs (invoke, stream and answers) by graph and outcome: completed, interrupted, failed, refused (the request was refused and nothing changed) or error."}, []string{"graph", "outcome"})
	runLatency := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "interlude_run_duration_seconds",
		Help: "Latency of runs that were not refused, by graph: the steps they ran, committed.", Buckets: latencyBuckets}, []string{"graph"})
	pauses := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "interlude_pauses_total",
		Help: "Runs that ended paused (waiting for answers or at a breakpoint), by graph."}, []string{"graph"})
	resolutions := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "interlude_resolutions_total",
		Help: "Answers accepted, by graph and kind (identical replays included)."}, []string{"graph", "kind"})
	cs := []prometheus.Collector{requests, reqLatency, runs, runLatency, pauses, resolutions}
	if hub != nil {
		cs = append(cs,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "interlude_event_listeners",
				Help: "Open live event streams (GET /v1/threads/{id}/events)."}, func() float64 { return float64(hub.Listeners()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "interlude_event_listeners_dropped_total",
				Help: "Live event streams closed because the listener fell behind."}, func() float64 { return float64(hub.Dropped()) }))
	}
	if st != nil {
		cs = append(cs, st.latency, st.errors)
	}
	if d != nil {
		cs = append(cs, notifierCollector{d})
		cs = append(cs, d.Collectors()...)
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("server: register the metrics: %w", err)
		}
	}
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return nil, fmt.Errorf("server: register the metrics: %w", err)
		}
	}
	m := &metrics{requestsVec: requests, reqLatency: map[string]prometheus.Observer{}, runs: map[[2]string]prometheus.Counter{},
		runLatency: map[string]prometheus.Observer{}, pauses: map[string]prometheus.Counter{}, resolutions: map[[2]string]prometheus.Counter{}}
	for _, r := range routes {
		m.reqLatency[r] = reqLatency.WithLabelValues(r)
	}
	for _, g := range graphs {
		m.runLatency[g] = runLatency.WithLabelValues(g)
		m.pauses[g] = pauses.WithLabelValues(g)
		for _, o := range runOutcomes {
			m.runs[[2]string{g, o}] = runs.WithLabelValues(g, o)
		}
		for _, k := range resolutionKinds {
			m.resolutions[[2]string{g, k}] = resolutions.WithLabelValues(g, k)
		}
	}
	return m, nil
}

func (m *metrics) request(route, method string, code int, d time.Duration) {
	if m == nil {
		return
	}
	k := requestKey{route, method, code}
	c, ok := m.requests.Load(k)
	if !ok {
		c, _ = m.requests.LoadOrStore(k, m.requestsVec.WithLabelValues(route, method, strconv.Itoa(code)))
	}
	c.(prometheus.Counter).Inc()
	if h := m.reqLatency[route]; h != nil {
		h.Observe(d.Seconds())
	}
}

func (m *metrics) run(graph, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	if c := m.runs[[2]string{graph, outcome}]; c != nil {
		c.Inc()
	}
	if outcome == "interrupted" {
		m.pauses[graph].Inc()
	}
	if outcome != "refused" {
		if h := m.runLatency[graph]; h != nil {
			h.Observe(d.Seconds())
		}
	}
}

func (m *metrics) resolution(graph, kind string) {
	if m == nil {
		return
	}
	if c := m.resolutions[[2]string{graph, kind}]; c != nil {
		c.Inc()
	}
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
	inner    store.Store
	latency  *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	observed [8]prometheus.Observer
	failed   [8]prometheus.Counter
}

// InstrumentStore wraps s so that the latency and errors of its operations show
// in /metrics (interlude_store_operation_duration_seconds and
// interlude_store_errors_total). Compile the graphs with the returned store; the
// server finds it through the graphs. The returned store unwraps to s (its
// Unwrap method), so store.As finds s's optional capabilities, such as
// store.Leaser on a store shared by several processes, through it.
func InstrumentStore(s store.Store) store.Store {
	is := &instrumentedStore{inner: s,
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "interlude_store_operation_duration_seconds",
			Help: "Store operation latency by operation.", Buckets: latencyBuckets}, []string{"op"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "interlude_store_errors_total",
			Help: "Store operations that returned an error (other than not found), by operation."}, []string{"op"})}
	for i, op := range storeOps {
		is.observed[i], is.failed[i] = is.latency.WithLabelValues(op), is.errors.WithLabelValues(op)
	}
	return is
}

// Unwrap returns the store that InstrumentStore wrapped.
func (s *instrumentedStore) Unwrap() store.Store { return s.inner }

func (s *instrumentedStore) done(op int, start time.Time, err error) {
	s.observed[op].Observe(time.Since(start).Seconds())
	if err != nil && !errors.Is(err, interlude.ErrNotFound) {
		s.failed[op].Inc()
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

var notificationAttempts = prometheus.NewDesc("interlude_notification_attempts_total",
	"Notification delivery attempts by what they left: delivered, retrying (tried again later) or failed (the last attempt failed).",
	[]string{"outcome"}, nil)

// notifierCollector reads a dispatcher's counts of attempts when scraped.
type notifierCollector struct{ d *notify.Dispatcher }

func (c notifierCollector) Describe(ch chan<- *prometheus.Desc) { ch <- notificationAttempts }

func (c notifierCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.d.Stats()
	for _, o := range []struct {
		outcome string
		n       uint64
	}{{"delivered", st.Delivered}, {"retrying", st.Retrying}, {"failed", st.Failed}} {
		ch <- prometheus.MustNewConstMetric(notificationAttempts, prometheus.CounterValue, float64(o.n), o.outcome)
	}
}
