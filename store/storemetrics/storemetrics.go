// Package storemetrics times a store's operations for Prometheus:
// interlude_store_operation_duration_seconds{op} and
// interlude_store_errors_total{op}. The server registers them with its
// metrics when its graphs' store is instrumented.
package storemetrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// The operations of a store, in the order of the arrays of instrumented.
var ops = []string{"append", "load", "version", "records", "meta", "list", "delete", "history"}

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

// instrumented times the operations of a store.
type instrumented struct {
	inner    store.Store
	latency  *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	observed [8]prometheus.Observer
	failed   [8]prometheus.Counter
}

// Instrument wraps s so that the latency and errors of its operations are
// measured; the result is a prometheus.Collector (found with
// store.As[prometheus.Collector]) and unwraps to s, so that store.As finds
// s's capabilities through it. Compile the graphs with the returned store.
func Instrument(s store.Store) store.Store {
	is := &instrumented{inner: s,
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "interlude_store_operation_duration_seconds",
			Help:    "Store operation latency by operation.",
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}}, []string{"op"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "interlude_store_errors_total",
			Help: "Store operations that returned an error (other than not found), by operation."}, []string{"op"})}
	for i, op := range ops {
		is.observed[i], is.failed[i] = is.latency.WithLabelValues(op), is.errors.WithLabelValues(op)
	}
	return is
}

// Describe describes the store's metrics.
func (s *instrumented) Describe(ch chan<- *prometheus.Desc) {
	s.latency.Describe(ch)
	s.errors.Describe(ch)
}

// Collect collects the store's metrics.
func (s *instrumented) Collect(ch chan<- prometheus.Metric) {
	s.latency.Collect(ch)
	s.errors.Collect(ch)
}

// Unwrap returns the store that Instrument wrapped.
func (s *instrumented) Unwrap() store.Store { return s.inner }

func (s *instrumented) done(op int, start time.Time, err error) {
	s.observed[op].Observe(time.Since(start).Seconds())
	if err != nil && !errors.Is(err, interlude.ErrNotFound) {
		s.failed[op].Inc()
	}
}

func (s *instrumented) Append(ctx context.Context, a store.Append) error {
	start := time.Now()
	err := s.inner.Append(ctx, a)
	s.done(opAppend, start, err)
	return err
}

func (s *instrumented) Load(ctx context.Context, threadID string) (*store.Loaded, error) {
	start := time.Now()
	l, err := s.inner.Load(ctx, threadID)
	s.done(opLoad, start, err)
	return l, err
}

func (s *instrumented) Version(ctx context.Context, threadID string) (int64, error) {
	start := time.Now()
	v, err := s.inner.Version(ctx, threadID)
	s.done(opVersion, start, err)
	return v, err
}

func (s *instrumented) Records(ctx context.Context, threadID string, after, before int64, limit int) ([]store.Record, error) {
	start := time.Now()
	rs, err := s.inner.Records(ctx, threadID, after, before, limit)
	s.done(opRecords, start, err)
	return rs, err
}

func (s *instrumented) History(ctx context.Context, threadID string, before int64, limit int) (*store.HistoryPage, error) {
	start := time.Now()
	p, err := s.inner.History(ctx, threadID, before, limit)
	s.done(opHistory, start, err)
	return p, err
}

func (s *instrumented) Meta(ctx context.Context, threadID string) (*store.Meta, error) {
	start := time.Now()
	m, err := s.inner.Meta(ctx, threadID)
	s.done(opMeta, start, err)
	return m, err
}

// Head implements store.Header, timed as a Meta: through the wrapped store's
// Head, or its Meta with the interrupts dropped.
func (s *instrumented) Head(ctx context.Context, threadID string) (*store.Meta, error) {
	start := time.Now()
	var (
		m   *store.Meta
		err error
	)
	if h, ok := store.As[store.Header](s.inner); ok {
		m, err = h.Head(ctx, threadID)
	} else if m, err = s.inner.Meta(ctx, threadID); m != nil {
		m.Interrupts = nil
	}
	s.done(opMeta, start, err)
	return m, err
}

func (s *instrumented) List(ctx context.Context, q store.Query) (*store.Page, error) {
	start := time.Now()
	p, err := s.inner.List(ctx, q)
	s.done(opList, start, err)
	return p, err
}

func (s *instrumented) Delete(ctx context.Context, threadID string) error {
	start := time.Now()
	err := s.inner.Delete(ctx, threadID)
	s.done(opDelete, start, err)
	return err
}

func (s *instrumented) Close() error { return s.inner.Close() }
