package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// capture is an OTLP client that keeps the encoded requests it is given.
type capture struct{ sent [][]byte }

func (c *capture) Start(context.Context) error { return nil }
func (c *capture) Stop(context.Context) error  { return nil }
func (c *capture) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	c.sent = append(c.sent, b)
	return err
}

// testSpans are spans of two resources and two scopes, with every kind of
// attribute value, events, links, a remote parent and each status.
func testSpans() []sdktrace.ReadOnlySpan {
	id := func(b byte) (trace.TraceID, trace.SpanID) {
		return trace.TraceID{b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, trace.SpanID{b, 1, 2, 3, 4, 5, 6, 7}
	}
	tid, sid := id(1)
	ts, _ := trace.ParseTraceState("vendor=value")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts})
	ptid, psid := id(2)
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: ptid, SpanID: psid, Remote: true})
	all := []attribute.KeyValue{
		attribute.String("s", "v"), attribute.Int("i", -3), attribute.Float64("f", 1.5), attribute.Bool("b", true),
		attribute.StringSlice("ss", []string{"a", "b"}), attribute.IntSlice("is", []int{1, 2}),
		attribute.Float64Slice("fs", []float64{0.5}), attribute.BoolSlice("bs", []bool{false, true}),
	}
	r1 := resource.NewSchemaless(attribute.String("service.name", "one"))
	r2 := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.40.0", attribute.String("service.name", "two"))
	t0 := time.Unix(1700000000, 123)
	stubs := tracetest.SpanStubs{
		{Name: "first", SpanContext: sc, Parent: remote, SpanKind: trace.SpanKindServer, StartTime: t0, EndTime: t0.Add(time.Millisecond),
			Attributes: all, DroppedAttributes: 2, Resource: r1, InstrumentationScope: instrumentation.Scope{Name: "a", Version: "1"},
			Events:        []sdktrace.Event{{Name: "ev", Time: t0.Add(time.Microsecond), Attributes: all[:3], DroppedAttributeCount: 1}},
			Links:         []sdktrace.Link{{SpanContext: remote, Attributes: all[2:4], DroppedAttributeCount: 4}},
			Status:        sdktrace.Status{Code: codes.Error, Description: "broken"},
			DroppedEvents: 5, DroppedLinks: 6},
		{Name: "second", SpanContext: sc, SpanKind: trace.SpanKindInternal, StartTime: t0, EndTime: t0, Resource: r1,
			InstrumentationScope: instrumentation.Scope{Name: "b", SchemaURL: "https://opentelemetry.io/schemas/1.40.0",
				Attributes: attribute.NewSet(attribute.String("scope", "attr"))}, Status: sdktrace.Status{Code: codes.Ok}},
		{Name: "third", SpanContext: sc, Parent: sc, SpanKind: trace.SpanKindClient, StartTime: t0, EndTime: t0, Resource: r2,
			InstrumentationScope: instrumentation.Scope{Name: "a", Version: "1"}},
		{Name: "fourth", SpanContext: sc, SpanKind: trace.SpanKindConsumer, Resource: r1, InstrumentationScope: instrumentation.Scope{Name: "a", Version: "1"}},
	}
	return stubs.Snapshots()
}

// decoded is an export request read back, its resources in a fixed order:
// the standard exporter gathers them in a map.
func decoded(t *testing.T, b []byte) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	rs := req.ResourceSpans
	for i := range rs {
		for j := i + 1; j < len(rs); j++ {
			if rs[j].SchemaUrl < rs[i].SchemaUrl {
				rs[i], rs[j] = rs[j], rs[i]
			}
		}
	}
	return &req
}

func TestTheExporterSendsWhatTheStandardOTLPExporterSends(t *testing.T) {
	ctx := context.Background()
	std := &capture{}
	stdExp, err := otlptrace.New(ctx, std)
	if err != nil {
		t.Fatal(err)
	}
	ours := &capture{}
	exp, err := newOTLPExporter(ctx, ours)
	if err != nil {
		t.Fatal(err)
	}
	spans := testSpans()
	// Twice each: the second export reuses the first one's memory.
	for range 2 {
		if err := stdExp.ExportSpans(ctx, spans); err != nil {
			t.Fatal(err)
		}
		if err := exp.ExportSpans(ctx, spans); err != nil {
			t.Fatal(err)
		}
	}
	if err := exp.ExportSpans(ctx, spans[3:]); err != nil { // a smaller export after larger ones
		t.Fatal(err)
	}
	if err := stdExp.ExportSpans(ctx, spans[3:]); err != nil {
		t.Fatal(err)
	}
	if len(ours.sent) != 3 || len(std.sent) != 3 {
		t.Fatalf("want three exports each, got %d and %d", len(ours.sent), len(std.sent))
	}
	for i := range ours.sent {
		want, got := decoded(t, std.sent[i]), decoded(t, ours.sent[i])
		if !proto.Equal(want, got) {
			t.Fatalf("export %d differs from the standard exporter's:\n got %v\nwant %v", i, got, want)
		}
	}
}

// failing is an OTLP client whose uploads fail.
type failing struct{ capture }

func (f *failing) UploadTraces(context.Context, []*tracepb.ResourceSpans) error {
	return errors.New("collector unreachable")
}

func TestAnExportThatFailsSaysSoAndTheNextOneStillSendsEverySpan(t *testing.T) {
	ctx := context.Background()
	exp, err := newOTLPExporter(ctx, &failing{})
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(ctx, testSpans()); err == nil {
		t.Fatal("a failed upload should be an error of the export")
	}
	ok := &capture{}
	exp.client = ok
	if err := exp.ExportSpans(ctx, testSpans()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rs := range decoded(t, ok.sent[0]).ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			n += len(ss.Spans)
		}
	}
	if n != 4 {
		t.Fatalf("want the 4 spans sent, got %d", n)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(ctx, testSpans()); err != nil || len(ok.sent) != 1 {
		t.Fatalf("an export after shutdown should send nothing: %v, %d sent", err, len(ok.sent))
	}
}
