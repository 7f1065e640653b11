package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/interludehq/interlude/internal/spanexport"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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
// most recent spanexport.MemorySpans of them), exporting nothing: what tracing
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
		return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spanexport.NewBatcher(spanexport.NewMemory(spanexport.MemorySpans), batch)),
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
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spanexport.NewBatcher(exp, batch)), sdktrace.WithResource(res), sdktrace.WithSampler(sampler)), nil
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

// batchFromEnv reads OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
// OTEL_BSP_SCHEDULE_DELAY and OTEL_BSP_EXPORT_TIMEOUT (milliseconds).
func batchFromEnv(getenv func(string) string) (spanexport.Settings, error) {
	b := spanexport.DefaultSettings()
	for _, v := range []struct {
		name string
		set  func(int)
	}{
		{"OTEL_BSP_MAX_QUEUE_SIZE", func(n int) { b.QueueSize = n }},
		{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", func(n int) { b.BatchSize = n }},
		{"OTEL_BSP_SCHEDULE_DELAY", func(n int) { b.Delay = time.Duration(n) * time.Millisecond }},
		{"OTEL_BSP_EXPORT_TIMEOUT", func(n int) { b.Timeout = time.Duration(n) * time.Millisecond }},
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
	b.BatchSize = min(b.BatchSize, b.QueueSize)
	return b, nil
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
