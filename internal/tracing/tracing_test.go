package tracing

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestTheGlobalTracerStartsNothingUntilAProgramSetsTheGlobalProvider(t *testing.T) {
	tr := Tracer(nil)
	ctx := context.Background()
	got, span := tr.Start(ctx, "before")
	if got != ctx || span.IsRecording() || span.SpanContext().IsValid() {
		t.Fatal("before a provider is set, a span should cost nothing and record nothing")
	}
	span.End()

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(ctx)
	otel.SetTracerProvider(tp)
	if !GlobalSet() {
		t.Fatal("the global provider is set")
	}
	_, span = tr.Start(ctx, "after")
	span.End()
	if spans := exp.GetSpans(); len(spans) != 1 || spans[0].Name != "after" || spans[0].InstrumentationScope.Name != Scope {
		t.Fatalf("a tracer taken before the provider was set should start its spans once it is: %v", spans)
	}
}

func TestATraceparentReadsBackAsTheSpanContextItWasWrittenFrom(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	s := Traceparent(sc)
	if s != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
		t.Fatalf("traceparent %q", s)
	}
	back, ok := Parse(s)
	if !ok || back.TraceID() != tid || back.SpanID() != sid || !back.IsSampled() || !back.IsRemote() {
		t.Fatalf("%v %v", back, ok)
	}
	for _, bad := range []string{"", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf9-00f0-01", "garbage"} {
		if _, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) should refuse it", bad)
		}
	}
	if Traceparent(trace.SpanContext{}) != "" {
		t.Error("an invalid span context has no traceparent")
	}
}
