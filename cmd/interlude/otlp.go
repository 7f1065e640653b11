package main

import (
	"context"
	"fmt"
	"math"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// otlpExporter sends the standard OTLP exporter's messages through
// otlptracehttp's client (its environment settings and retries), but builds
// them in memory kept between exports: rebuilding them anew each time was most
// of what tracing cost a busy server (docs/BENCHMARKS.md, "Tracing").
type otlpExporter struct {
	client otlptrace.Client

	mu        sync.Mutex
	stopped   bool
	resources map[attribute.Distinct]*resourcepb.Resource // built once each
	scopes    map[instrumentation.Scope]*commonpb.InstrumentationScope
	groups    []scopeGroup
	out       []*tracepb.ResourceSpans

	// Reused between exports: a message taken from one of these lives
	// until the export ends.
	spans    slab[tracepb.Span]
	statuses slab[tracepb.Status]
	events   slab[tracepb.Span_Event]
	links    slab[tracepb.Span_Link]
	kvs      slab[commonpb.KeyValue]
	values   slab[commonpb.AnyValue]
	strs     slab[commonpb.AnyValue_StringValue]
	ints     slab[commonpb.AnyValue_IntValue]
	floats   slab[commonpb.AnyValue_DoubleValue]
	bools    slab[commonpb.AnyValue_BoolValue]
	spanPtrs slab[*tracepb.Span]
	evPtrs   slab[*tracepb.Span_Event]
	linkPtrs slab[*tracepb.Span_Link]
	kvPtrs   slab[*commonpb.KeyValue]
	ids      slab[byte]
}

// scopeGroup gathers the spans of one resource and instrumentation scope.
type scopeGroup struct {
	res   *resource.Resource
	scope instrumentation.Scope
	spans []*tracepb.Span
}

// newOTLPExporter starts client and returns the exporter sending through it.
func newOTLPExporter(ctx context.Context, client otlptrace.Client) (*otlpExporter, error) {
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	return &otlpExporter{
		client:    client,
		resources: map[attribute.Distinct]*resourcepb.Resource{},
		scopes:    map[instrumentation.Scope]*commonpb.InstrumentationScope{},
	}, nil
}

// ExportSpans sends spans as one OTLP export request.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped || len(spans) == 0 {
		return nil
	}
	defer e.reset()
	for _, s := range spans {
		if s == nil {
			continue
		}
		g := e.group(s.Resource(), s.InstrumentationScope())
		g.spans = append(g.spans, e.span(s))
	}
	for i := range e.groups {
		g := &e.groups[i]
		ss := &tracepb.ScopeSpans{Scope: e.scope(g.scope), Spans: g.spans, SchemaUrl: g.scope.SchemaURL}
		var rs *tracepb.ResourceSpans
		for _, r := range e.out {
			if r.Resource == e.resource(g.res) {
				rs = r
			}
		}
		if rs == nil {
			rs = &tracepb.ResourceSpans{Resource: e.resource(g.res), SchemaUrl: g.res.SchemaURL()}
			e.out = append(e.out, rs)
		}
		rs.ScopeSpans = append(rs.ScopeSpans, ss)
	}
	if err := e.client.UploadTraces(ctx, e.out); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

// Shutdown stops the client, after which exports send nothing.
func (e *otlpExporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return nil
	}
	e.stopped = true
	return e.client.Stop(ctx)
}

// reset makes the memory of the export just sent reusable; the spans'
// groups keep their slices for the next one.
func (e *otlpExporter) reset() {
	for i := range e.groups {
		clear(e.groups[i].spans)
		e.groups[i].spans = e.groups[i].spans[:0]
	}
	e.groups = e.groups[:0]
	clear(e.out)
	e.out = e.out[:0]
	e.spans.reset()
	e.statuses.reset()
	e.events.reset()
	e.links.reset()
	e.kvs.reset()
	e.values.reset()
	e.strs.reset()
	e.ints.reset()
	e.floats.reset()
	e.bools.reset()
	e.spanPtrs.reset()
	e.evPtrs.reset()
	e.linkPtrs.reset()
	e.kvPtrs.reset()
	e.ids.reset()
}

// group returns the group of spans of res and scope in this export.
func (e *otlpExporter) group(res *resource.Resource, scope instrumentation.Scope) *scopeGroup {
	for i := range e.groups {
		if g := &e.groups[i]; g.res == res && g.scope == scope {
			return g
		}
	}
	if len(e.groups) < cap(e.groups) {
		e.groups = e.groups[:len(e.groups)+1]
		g := &e.groups[len(e.groups)-1]
		g.res, g.scope = res, scope
		return g
	}
	e.groups = append(e.groups, scopeGroup{res: res, scope: scope})
	return &e.groups[len(e.groups)-1]
}

// resource returns the OTLP form of res, built the first time it is seen:
// a provider has one resource, and it never changes.
func (e *otlpExporter) resource(res *resource.Resource) *resourcepb.Resource {
	if res == nil {
		return nil
	}
	key := res.Equivalent()
	r, ok := e.resources[key]
	if !ok {
		r = &resourcepb.Resource{}
		for it := res.Iter(); it.Next(); {
			r.Attributes = append(r.Attributes, keyValue(it.Attribute()))
		}
		e.resources[key] = r
	}
	return r
}

// scope returns the OTLP form of an instrumentation scope, built the first
// time it is seen.
func (e *otlpExporter) scope(s instrumentation.Scope) *commonpb.InstrumentationScope {
	if s == (instrumentation.Scope{}) {
		return nil
	}
	p, ok := e.scopes[s]
	if !ok {
		p = &commonpb.InstrumentationScope{Name: s.Name, Version: s.Version}
		for it := s.Attributes.Iter(); it.Next(); {
			p.Attributes = append(p.Attributes, keyValue(it.Attribute()))
		}
		e.scopes[s] = p
	}
	return p
}

// span returns the OTLP form of s, as otlptrace's exporter writes it.
func (e *otlpExporter) span(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc, parent := s.SpanContext(), s.Parent()
	p := e.spans.one()
	p.TraceId = e.traceID(sc.TraceID())
	p.SpanId = e.spanID(sc.SpanID())
	p.TraceState = sc.TraceState().String()
	if parent.SpanID().IsValid() {
		p.ParentSpanId = e.spanID(parent.SpanID())
	}
	p.Flags = spanFlags(sc.TraceFlags(), parent)
	p.Name = s.Name()
	p.Kind = spanKind(s.SpanKind())
	p.StartTimeUnixNano = uint64(max(0, s.StartTime().UnixNano()))
	p.EndTimeUnixNano = uint64(max(0, s.EndTime().UnixNano()))
	p.Attributes = e.keyValues(s.Attributes())
	p.DroppedAttributesCount = clampUint32(s.DroppedAttributes())
	if evs := s.Events(); len(evs) > 0 {
		p.Events = e.evPtrs.many(len(evs))
		for i, ev := range evs {
			pe := e.events.one()
			pe.Name = ev.Name
			pe.TimeUnixNano = uint64(max(0, ev.Time.UnixNano()))
			pe.Attributes = e.keyValues(ev.Attributes)
			pe.DroppedAttributesCount = clampUint32(ev.DroppedAttributeCount)
			p.Events[i] = pe
		}
	}
	p.DroppedEventsCount = clampUint32(s.DroppedEvents())
	if ls := s.Links(); len(ls) > 0 {
		p.Links = e.linkPtrs.many(len(ls))
		for i, l := range ls {
			pl := e.links.one()
			pl.TraceId = e.traceID(l.SpanContext.TraceID())
			pl.SpanId = e.spanID(l.SpanContext.SpanID())
			pl.TraceState = l.SpanContext.TraceState().String()
			pl.Attributes = e.keyValues(l.Attributes)
			pl.DroppedAttributesCount = clampUint32(l.DroppedAttributeCount)
			pl.Flags = spanFlags(l.SpanContext.TraceFlags(), l.SpanContext)
			p.Links[i] = pl
		}
	}
	p.DroppedLinksCount = clampUint32(s.DroppedLinks())
	st := s.Status()
	p.Status = e.statuses.one()
	p.Status.Message = st.Description
	switch st.Code {
	case codes.Ok:
		p.Status.Code = tracepb.Status_STATUS_CODE_OK
	case codes.Error:
		p.Status.Code = tracepb.Status_STATUS_CODE_ERROR
	}
	return p
}

func (e *otlpExporter) traceID(id trace.TraceID) []byte {
	b := e.ids.many(len(id))
	copy(b, id[:])
	return b
}

func (e *otlpExporter) spanID(id trace.SpanID) []byte {
	b := e.ids.many(len(id))
	copy(b, id[:])
	return b
}

// keyValues returns the OTLP form of attrs; scalar values are built in the
// exporter's reused memory, the rare slices and maps anew.
func (e *otlpExporter) keyValues(attrs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(attrs) == 0 {
		return nil
	}
	out := e.kvPtrs.many(len(attrs))
	for i, a := range attrs {
		kv := e.kvs.one()
		kv.Key = string(a.Key)
		switch a.Value.Type() {
		case attribute.STRING:
			v := e.strs.one()
			v.StringValue = a.Value.AsString()
			kv.Value = e.values.one()
			kv.Value.Value = v
		case attribute.INT64:
			v := e.ints.one()
			v.IntValue = a.Value.AsInt64()
			kv.Value = e.values.one()
			kv.Value.Value = v
		case attribute.FLOAT64:
			v := e.floats.one()
			v.DoubleValue = a.Value.AsFloat64()
			kv.Value = e.values.one()
			kv.Value.Value = v
		case attribute.BOOL:
			v := e.bools.one()
			v.BoolValue = a.Value.AsBool()
			kv.Value = e.values.one()
			kv.Value.Value = v
		default:
			kv.Value = anyValue(a.Value)
		}
		out[i] = kv
	}
	return out
}

// keyValue returns the OTLP form of kv in memory of its own.
func keyValue(kv attribute.KeyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)}
}

// anyValue returns the OTLP form of v in memory of its own, as otlptrace's
// exporter writes it.
func anyValue(v attribute.Value) *commonpb.AnyValue {
	av := &commonpb.AnyValue{}
	switch v.Type() {
	case attribute.BOOL:
		av.Value = &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}
	case attribute.INT64:
		av.Value = &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}
	case attribute.FLOAT64:
		av.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}
	case attribute.STRING:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: v.AsString()}
	case attribute.BYTESLICE:
		av.Value = &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}
	case attribute.BOOLSLICE:
		av.Value = array(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		av.Value = array(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		av.Value = array(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		av.Value = array(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		av.Value = array(v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		m := v.AsMap()
		kvs := make([]*commonpb.KeyValue, len(m))
		for i, kv := range m {
			kvs[i] = keyValue(kv)
		}
		av.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: kvs}}
	case attribute.EMPTY:
	default:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: "INVALID"}
	}
	return av
}

// array returns the OTLP array of vs, each made a value by val.
func array[T any](vs []T, val func(T) attribute.Value) *commonpb.AnyValue_ArrayValue {
	out := make([]*commonpb.AnyValue, len(vs))
	for i, v := range vs {
		out[i] = anyValue(val(v))
	}
	return &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: out}}
}

// spanFlags are the OTLP flags of a span or link: the W3C trace flags, and
// whether its parent (or the linked span) is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	flags := uint32(tf) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if parent.IsRemote() {
		flags |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return flags
}

func spanKind(k trace.SpanKind) tracepb.Span_SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return tracepb.Span_SPAN_KIND_INTERNAL
	case trace.SpanKindClient:
		return tracepb.Span_SPAN_KIND_CLIENT
	case trace.SpanKindServer:
		return tracepb.Span_SPAN_KIND_SERVER
	case trace.SpanKindProducer:
		return tracepb.Span_SPAN_KIND_PRODUCER
	case trace.SpanKindConsumer:
		return tracepb.Span_SPAN_KIND_CONSUMER
	}
	return tracepb.Span_SPAN_KIND_UNSPECIFIED
}

func clampUint32(v int) uint32 {
	if v < 0 {
		return 0
	}
	if int64(v) > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(v)
}

// slab hands out zeroed values from chunks of memory kept after reset: what
// it handed out stays where it is until then.
type slab[T any] struct {
	chunks [][]T
	c, i   int // the chunk in use, and its next free value
}

// many returns n zeroed values, next to each other.
func (s *slab[T]) many(n int) []T {
	for {
		if s.c == len(s.chunks) {
			size := 256
			if s.c > 0 {
				size = 2 * len(s.chunks[s.c-1])
			}
			s.chunks = append(s.chunks, make([]T, max(size, n)))
		}
		if ch := s.chunks[s.c]; s.i+n <= len(ch) {
			out := ch[s.i : s.i+n : s.i+n]
			s.i += n
			clear(out)
			return out
		}
		s.c, s.i = s.c+1, 0
	}
}

// one returns a zeroed value.
func (s *slab[T]) one() *T { return &s.many(1)[0] }

// reset makes all the values handed out reusable.
func (s *slab[T]) reset() { s.c, s.i = 0, 0 }
