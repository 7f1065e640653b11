package notify

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// extras are the dispatcher's escalation policies and its metrics.
type extras struct {
	escalations []Escalation
	store       store.Store
	answerTime  *prometheus.HistogramVec
	deliveries  *prometheus.CounterVec
	byDest      map[string][2]prometheus.Counter // deliveries' ok and error counters by destination; read-only once set
	escalated   *prometheus.CounterVec
}

// answerBuckets span a minute to a week.
var answerBuckets = []float64{60, 300, 900, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 24 * 3600, 2 * 24 * 3600, 7 * 24 * 3600}

func (x *extras) init(st store.Store) {
	x.store = st
	x.answerTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "interlude_question_answer_seconds",
		Help: "Time from a question being asked to its answer (resolved, rejected or cancelled; not expired), by graph and reason.", Buckets: answerBuckets},
		[]string{"graph", "reason"})
	x.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "interlude_notification_deliveries_total",
		Help: "Deliveries of a notification to one destination, by destination and outcome (ok or error)."}, []string{"destination", "outcome"})
	x.escalated = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "interlude_escalations_total",
		Help: "Questions escalated after waiting unanswered, by graph and reason."}, []string{"graph", "reason"})
}

// counters looks up the delivery counters of dests once, rather than by
// their labels on every delivery.
func (x *extras) counters(dests []Destination) {
	x.byDest = make(map[string][2]prometheus.Counter, len(dests))
	for _, d := range dests {
		x.byDest[d.Name()] = [2]prometheus.Counter{x.deliveries.WithLabelValues(d.Name(), "ok"), x.deliveries.WithLabelValues(d.Name(), "error")}
	}
}

// delivered counts one delivery to one destination.
func (x *extras) delivered(dest string, err error) {
	c, ok := x.byDest[dest]
	if !ok {
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		x.deliveries.WithLabelValues(dest, outcome).Inc()
		return
	}
	if err != nil {
		c[1].Inc()
		return
	}
	c[0].Inc()
}

// first records what a notice says, on its first attempt, so that each
// answer and escalation is counted once.
func (x *extras) first(n *Notification) {
	q := n.Data.Interrupt
	if n.Notice.Attempts != 1 || q == nil {
		return
	}
	switch n.Notice.Type {
	case store.NoticeEscalated:
		x.escalated.WithLabelValues(n.Notice.Graph, q.Reason).Inc()
	case store.NoticeAnswered, store.NoticeRejected, store.NoticeCancelled:
		if r := n.Data.Resolution; r != nil && !r.At.IsZero() && !q.CreatedAt.IsZero() {
			x.answerTime.WithLabelValues(n.Notice.Graph, q.Reason).Observe(r.At.Sub(q.CreatedAt).Seconds())
		}
	}
}

// Collectors returns the dispatcher's metrics, for a Prometheus registry:
// the time questions take to be answered, the questions pending (read from
// the store when scraped), deliveries by destination and outcome, and
// escalations. The server registers them (server.WithMetricsRegistry).
func (d *Dispatcher) Collectors() []prometheus.Collector {
	return []prometheus.Collector{d.ext.answerTime, d.ext.deliveries, d.ext.escalated, pendingCollector{d.ext.store}}
}

var pendingDesc = prometheus.NewDesc("interlude_questions_pending",
	"Questions waiting for an answer, by graph, as the store lists them when scraped.", []string{"graph"}, nil)

// pendingCollector counts the pending questions of a store's waiting threads.
type pendingCollector struct{ st store.Store }

func (c pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pendingDesc }

// pendingPages bounds how much of the store one scrape reads.
const pendingPages = 100

func (c pendingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts := map[string]int{}
	q := store.Query{Status: interlude.ThreadInterrupted, Limit: 1000}
	for range pendingPages {
		p, err := c.st.List(ctx, q)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(pendingDesc, err)
			return
		}
		for _, m := range p.Threads {
			counts[m.Graph] += len(m.Interrupts)
		}
		if p.NextCursor == "" {
			break
		}
		q.Cursor = p.NextCursor
	}
	for g, n := range counts {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(n), g)
	}
}
