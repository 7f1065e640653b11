// Package metrics holds the Prometheus series of the HTTP API: requests, runs,
// pauses and answers, with the event hub's, the store's and the notification
// dispatcher's. Each series is looked up once, so recording takes no lock.
package metrics

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/notify"
)

var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// The outcomes of a run in interlude_runs_total.
var runOutcomes = []string{"completed", "interrupted", "failed", "refused", "error"}

// The kinds of answers in interlude_resolutions_total.
var resolutionKinds = []string{"resolved", "rejected", "cancelled", "expired"}

// Metrics records the API's series; a nil *Metrics records nothing.
type Metrics struct {
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

// New registers the series with reg for the graphs and routes, with those of
// the store (storemetrics.Instrument), event hub and dispatcher if not nil,
// and the Go runtime's and process's collectors unless reg has them.
func New(reg prometheus.Registerer, graphs, routes []string, st prometheus.Collector, hub *host.Hub, d *notify.Dispatcher) (*Metrics, error) {
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
		cs = append(cs, st)
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
	m := &Metrics{requestsVec: requests, reqLatency: map[string]prometheus.Observer{}, runs: map[[2]string]prometheus.Counter{},
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

// Request records a request's answer.
func (m *Metrics) Request(route, method string, code int, d time.Duration) {
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

// Run records a run's outcome: completed, interrupted, failed, refused or error.
func (m *Metrics) Run(graph, outcome string, d time.Duration) {
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

// Resolution records an answer of a kind: resolved, rejected, cancelled or expired.
func (m *Metrics) Resolution(graph, kind string) {
	if m == nil {
		return
	}
	if c := m.resolutions[[2]string{graph, kind}]; c != nil {
		c.Inc()
	}
}

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
