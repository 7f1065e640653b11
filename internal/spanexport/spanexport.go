// Package spanexport holds the span processor and the in-memory span exporter
// that `interlude serve` exports its spans through, for the command and for
// the tests and benchmarks that trace a server as it does.
package spanexport

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// DefaultQueueSize and DefaultBatchSize are the batch span processor's queue
// and export sizes unless OTEL_BSP_MAX_QUEUE_SIZE and
// OTEL_BSP_MAX_EXPORT_BATCH_SIZE say otherwise. A busy server ends some
// 20,000 spans a second: the SDK's default queue (2,048) holds a tenth of a
// second of them, so a slower export drops spans, and its default batch (512)
// makes forty exports a second.
const (
	DefaultQueueSize = 16384
	DefaultBatchSize = 2048
)

// Settings are the batch span processor's settings, which `interlude serve`
// reads from the OTEL_BSP_* variables as the SDK reads them.
type Settings struct {
	QueueSize, BatchSize int           // the spans queued at most, and exported at once
	Delay, Timeout       time.Duration // between scheduled exports, and for one export
}

// DefaultSettings are the settings of the processor with no OTEL_BSP_*
// variable set: the sizes above, the SDK's delay (5s) and timeout (30s).
func DefaultSettings() Settings {
	return Settings{QueueSize: DefaultQueueSize, BatchSize: DefaultBatchSize, Delay: 5 * time.Second, Timeout: 30 * time.Second}
}

// Batcher is the span processor `interlude serve` exports through: the SDK's
// batch span processor's behaviour and settings at a fraction of its cost per
// span. The SDK's hands each ended span over a channel to its exporting
// goroutine, waking it (and with it a thread) for every span on the path of
// the request that ended it; this one appends the span to a queue under a
// mutex and wakes the exporter only when a batch is full, its timer finding
// the rest. A span ended while the queue is full is dropped, as the SDK's
// does.
type Batcher struct {
	exporter sdktrace.SpanExporter
	settings Settings

	mu      sync.Mutex
	queue   []sdktrace.ReadOnlySpan
	stopped bool
	dropped int

	exporting sync.Mutex              // one export at a time
	spare     []sdktrace.ReadOnlySpan // the last export's memory, for the next queue; under exporting

	full     chan struct{} // holds a signal when a batch is queued
	stop     chan struct{}
	done     chan struct{}
	shutdown sync.Once
}

// NewBatcher returns a processor that exports through exp with the settings s,
// and starts its exporting goroutine (Shutdown stops it).
func NewBatcher(exp sdktrace.SpanExporter, s Settings) *Batcher {
	b := &Batcher{exporter: exp, settings: s, full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

// OnStart does nothing: spans are exported as they end.
func (b *Batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span for export.
func (b *Batcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return
	}
	if len(b.queue) >= b.settings.QueueSize {
		b.dropped++
		b.mu.Unlock()
		return
	}
	b.queue = append(b.queue, s)
	ready := len(b.queue) == b.settings.BatchSize
	b.mu.Unlock()
	if ready {
		select {
		case b.full <- struct{}{}:
		default:
		}
	}
}

// loop exports the queue whenever a batch is full or the schedule's delay
// has passed, until Shutdown.
func (b *Batcher) loop() {
	defer close(b.done)
	t := time.NewTimer(b.settings.Delay)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		case <-b.full:
		}
		if err := b.export(context.Background()); err != nil {
			otel.Handle(err)
		}
		t.Reset(b.settings.Delay)
	}
}

// export sends the spans queued, a batch at a time, each within the export
// timeout; it returns the first error, and says how many spans a full queue
// dropped since the last export.
func (b *Batcher) export(ctx context.Context) error {
	b.exporting.Lock()
	defer b.exporting.Unlock()
	b.mu.Lock()
	spans, dropped := b.queue, b.dropped
	b.queue, b.dropped, b.spare = b.spare, 0, nil
	b.mu.Unlock()
	var first error
	if dropped > 0 {
		first = fmt.Errorf("tracing dropped %d spans: the export queue was full (raise OTEL_BSP_MAX_QUEUE_SIZE or sample fewer traces)", dropped)
	}
	for rest := spans; len(rest) > 0; {
		n := min(len(rest), b.settings.BatchSize)
		ectx, cancel := context.WithTimeout(ctx, b.settings.Timeout)
		err := b.exporter.ExportSpans(ectx, rest[:n])
		cancel()
		if err != nil && first == nil {
			first = err
		}
		rest = rest[n:]
	}
	clear(spans)
	b.spare = spans[:0]
	return first
}

// ForceFlush exports the spans queued.
func (b *Batcher) ForceFlush(ctx context.Context) error {
	return b.export(ctx)
}

// Shutdown stops queueing, exports what is queued and shuts the exporter
// down; it does so once.
func (b *Batcher) Shutdown(ctx context.Context) error {
	var err error
	b.shutdown.Do(func() {
		b.mu.Lock()
		b.stopped = true
		b.mu.Unlock()
		close(b.stop)
		select {
		case <-b.done:
		case <-ctx.Done():
		}
		err = errors.Join(b.export(ctx), b.exporter.Shutdown(ctx))
	})
	return err
}

// MemorySpans is how many of the most recent spans `interlude serve`'s memory
// exporter holds at most.
const MemorySpans = 1024

// Memory keeps the most recent spans it is given, up to its limit, as
// the SDK ended them: a server traced into memory for hours keeps its memory
// flat, and exporting a span costs a pointer's copy, so that
// OTEL_TRACES_EXPORTER=memory measures what tracing costs the server and
// nothing else. It is a mode for benchmarks and tests; GetSpans copies the
// spans held for reading.
type Memory struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan // a ring, the oldest at next once full
	next  int
}

// NewMemory returns an exporter holding the most recent limit spans.
func NewMemory(limit int) *Memory {
	return &Memory{spans: make([]sdktrace.ReadOnlySpan, 0, limit)}
}

// ExportSpans keeps spans, in place of the oldest held once the limit is
// reached.
func (m *Memory) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if limit := cap(m.spans); len(spans) > limit {
		spans = spans[len(spans)-limit:]
	}
	for len(spans) > 0 {
		if len(m.spans) < cap(m.spans) {
			n := min(len(spans), cap(m.spans)-len(m.spans))
			m.spans = append(m.spans, spans[:n]...)
			spans = spans[n:]
			continue
		}
		n := copy(m.spans[m.next:], spans)
		m.next = (m.next + n) % len(m.spans)
		spans = spans[n:]
	}
	return nil
}

// Shutdown lets go of the spans held.
func (m *Memory) Shutdown(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.spans)
	m.spans, m.next = m.spans[:0], 0
	return nil
}

// GetSpans returns copies of the spans held, the oldest first.
func (m *Memory) GetSpans() tracetest.SpanStubs {
	m.mu.Lock()
	defer m.mu.Unlock()
	held := append(slices.Clone(m.spans[m.next:]), m.spans[:m.next]...)
	return tracetest.SpanStubsFromReadOnlySpans(held)
}
