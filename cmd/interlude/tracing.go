package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// tracingFromEnv builds the tracer provider that `interlude serve` exports its
// spans through, from OpenTelemetry's standard environment variables: OTLP
// over HTTP (protobuf) to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or
// OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces added; the service name
// OTEL_SERVICE_NAME (default "interlude") and OTEL_RESOURCE_ATTRIBUTES; the
// sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG. The exporter reads
// its other settings (headers, timeout, compression, certificates) from the
// environment as well, and the batch processor its own (OTEL_BSP_*).
//
// OTEL_TRACES_EXPORTER=memory keeps the spans in the process instead (the
// most recent memoryExporterSpans of them), exporting nothing: what tracing
// costs a server without the cost of sending its spans.
//
// Tracing is off, and it returns nil, unless an endpoint is set or
// OTEL_TRACES_EXPORTER is otlp or memory; OTEL_TRACES_EXPORTER=none or
// OTEL_SDK_DISABLED=true turn it off.
func tracingFromEnv(ctx context.Context, getenv func(string) string) (*sdktrace.TracerProvider, error) {
	exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	endpoint := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	if endpoint == "" {
		if base := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); base != "" {
			endpoint = strings.TrimSuffix(base, "/") + "/v1/traces"
		}
	}
	switch {
	case strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true"), exporter == "none":
		return nil, nil
	case exporter != "" && exporter != "otlp" && exporter != "memory":
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s is not supported: use otlp (OTLP over HTTP), memory or none", exporter)
	case exporter == "" && endpoint == "":
		return nil, nil
	}
	sampler, err := samplerFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	res, err := resourceFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	batch, err := batchFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	if exporter == "memory" {
		return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(newBatcher(newMemoryExporter(memoryExporterSpans), batch)),
			sdktrace.WithResource(res), sdktrace.WithSampler(sampler)), nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(v); p != "" && p != "http/protobuf" {
			return nil, fmt.Errorf("%s=%s is not supported: interlude serve exports OTLP over HTTP (http/protobuf)", v, p)
		}
	}
	var opts []otlptracehttp.Option
	if endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
	}
	exp, err := newOTLPExporter(ctx, otlptracehttp.NewClient(opts...))
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(newBatcher(exp, batch)), sdktrace.WithResource(res), sdktrace.WithSampler(sampler)), nil
}

// resourceFromEnv is the resource of the spans: the SDK's default one (which
// reads OTEL_RESOURCE_ATTRIBUTES), named by OTEL_SERVICE_NAME or "interlude".
func resourceFromEnv(getenv func(string) string) (*resource.Resource, error) {
	name := getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = "interlude"
	}
	// The default resource reads OTEL_RESOURCE_ATTRIBUTES; the service name
	// given here wins over the SDK's default one.
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(name)))
	if err != nil {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	if v := getenv("OTEL_SERVICE_NAME"); v != "" {
		res, _ = resource.Merge(res, resource.NewSchemaless(semconv.ServiceName(v)))
	}
	return res, nil
}

// The batch span processor's queue and export sizes unless OTEL_BSP_MAX_QUEUE_SIZE
// and OTEL_BSP_MAX_EXPORT_BATCH_SIZE say otherwise. A busy server ends some
// 20,000 spans a second: the SDK's default queue (2,048) holds a tenth of a
// second of them, so a slower export drops spans, and its default batch (512)
// makes forty exports a second.
const (
	batchQueueSize  = 16384
	batchExportSize = 2048
)

// batchSettings are the batch span processor's settings, read from the
// OTEL_BSP_* variables as the SDK reads them, with the sizes above as
// defaults.
type batchSettings struct {
	queueSize, batchSize int
	delay, timeout       time.Duration
}

// batchFromEnv reads OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
// OTEL_BSP_SCHEDULE_DELAY and OTEL_BSP_EXPORT_TIMEOUT (milliseconds).
func batchFromEnv(getenv func(string) string) (batchSettings, error) {
	b := batchSettings{queueSize: batchQueueSize, batchSize: batchExportSize, delay: 5 * time.Second, timeout: 30 * time.Second}
	for _, v := range []struct {
		name string
		set  func(int)
	}{
		{"OTEL_BSP_MAX_QUEUE_SIZE", func(n int) { b.queueSize = n }},
		{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", func(n int) { b.batchSize = n }},
		{"OTEL_BSP_SCHEDULE_DELAY", func(n int) { b.delay = time.Duration(n) * time.Millisecond }},
		{"OTEL_BSP_EXPORT_TIMEOUT", func(n int) { b.timeout = time.Duration(n) * time.Millisecond }},
	} {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return b, fmt.Errorf("%s=%s: give a whole number above 0", v.name, s)
		}
		v.set(n)
	}
	b.batchSize = min(b.batchSize, b.queueSize)
	return b, nil
}

// batcher is the span processor `interlude serve` exports through: the SDK's
// batch span processor's behaviour and settings at a fraction of its cost per
// span. The SDK's hands each ended span over a channel to its exporting
// goroutine, waking it (and with it a thread) for every span on the path of
// the request that ended it; this one appends the span to a queue under a
// mutex and wakes the exporter only when a batch is full, its timer finding
// the rest. A span ended while the queue is full is dropped, as the SDK's
// does.
type batcher struct {
	exporter sdktrace.SpanExporter
	settings batchSettings

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

func newBatcher(exp sdktrace.SpanExporter, s batchSettings) *batcher {
	b := &batcher{exporter: exp, settings: s, full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

// OnStart does nothing: spans are exported as they end.
func (b *batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span for export.
func (b *batcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return
	}
	if len(b.queue) >= b.settings.queueSize {
		b.dropped++
		b.mu.Unlock()
		return
	}
	b.queue = append(b.queue, s)
	ready := len(b.queue) == b.settings.batchSize
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
func (b *batcher) loop() {
	defer close(b.done)
	t := time.NewTimer(b.settings.delay)
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
		t.Reset(b.settings.delay)
	}
}

// export sends the spans queued, a batch at a time, each within the export
// timeout; it returns the first error, and says how many spans a full queue
// dropped since the last export.
func (b *batcher) export(ctx context.Context) error {
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
		n := min(len(rest), b.settings.batchSize)
		ectx, cancel := context.WithTimeout(ctx, b.settings.timeout)
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
func (b *batcher) ForceFlush(ctx context.Context) error {
	return b.export(ctx)
}

// Shutdown stops queueing, exports what is queued and shuts the exporter
// down; it does so once.
func (b *batcher) Shutdown(ctx context.Context) error {
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

// memoryExporterSpans is how many of the most recent spans the memory
// exporter holds at most.
const memoryExporterSpans = 1024

// memoryExporter keeps the most recent spans it is given, up to its limit, as
// the SDK ended them: a server traced into memory for hours keeps its memory
// flat, and exporting a span costs a pointer's copy, so that
// OTEL_TRACES_EXPORTER=memory measures what tracing costs the server and
// nothing else. It is a mode for benchmarks and tests; GetSpans copies the
// spans held for reading.
type memoryExporter struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan // a ring, the oldest at next once full
	next  int
}

func newMemoryExporter(limit int) *memoryExporter {
	return &memoryExporter{spans: make([]sdktrace.ReadOnlySpan, 0, limit)}
}

// ExportSpans keeps spans, in place of the oldest held once the limit is
// reached.
func (m *memoryExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
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
func (m *memoryExporter) Shutdown(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.spans)
	m.spans, m.next = m.spans[:0], 0
	return nil
}

// GetSpans returns copies of the spans held, the oldest first.
func (m *memoryExporter) GetSpans() tracetest.SpanStubs {
	m.mu.Lock()
	defer m.mu.Unlock()
	held := append(slices.Clone(m.spans[m.next:]), m.spans[:m.next]...)
	return tracetest.SpanStubsFromReadOnlySpans(held)
}

// samplerFromEnv reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG
// (default parentbased_always_on).
func samplerFromEnv(getenv func(string) string) (sdktrace.Sampler, error) {
	name := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER"))
	ratio := 1.0
	if arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG")); arg != "" && strings.HasSuffix(name, "traceidratio") {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%s: give a ratio from 0 to 1", arg)
		}
		ratio = r
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%s is not supported: use always_on, always_off, traceidratio or their parentbased_ forms", name)
}

// installTracing makes tp the process's tracer provider, with W3C trace
// context and baggage as its propagators, and returns what flushes and stops
// it.
func installTracing(tp *sdktrace.TracerProvider) func() {
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tp.Shutdown(ctx)
	}
}
