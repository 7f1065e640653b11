// Package tracing holds what Interlude's packages share to emit OpenTelemetry
// spans: the instrumentation scope's name, the choice of a tracer provider (the
// one given, else the global one), the attribute keys of Interlude's own
// attributes, and the W3C traceparent form in which a pause's span context is
// stored with its question.
//
// Only the OpenTelemetry API is used here; a program chooses the SDK.
package tracing

import (
	"context"
	"encoding/hex"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope of every tracer Interlude creates.
const Scope = "github.com/interludehq/interlude"

// unset is the global tracer provider as it is before a program sets one: it
// delegates to the provider set later (otel.SetTracerProvider).
var unset = otel.GetTracerProvider()

// GlobalSet reports whether the program has set the global tracer provider.
func GlobalSet() bool { return otel.GetTracerProvider() != unset }

// Tracer returns the tracer of tp, or of the global provider when tp is nil.
// The global provider's tracer starts no span, and costs next to nothing, until
// a program sets the global provider; from then on it starts the spans of the
// provider set.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return global{delegate: unset.Tracer(Scope)}
	}
	return tp.Tracer(Scope)
}

// global is the tracer of the global provider.
type global struct {
	embedded.Tracer
	delegate trace.Tracer
}

// Start starts a span of the global provider once it is set; before, it
// returns ctx as it is and a span that records nothing.
func (g global) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !GlobalSet() {
		return ctx, noop.Span{}
	}
	return g.delegate.Start(ctx, name, opts...)
}

// Attribute keys of Interlude's spans, links and events.
const (
	Graph         = attribute.Key("interlude.graph")
	ThreadID      = attribute.Key("interlude.thread_id")
	Command       = attribute.Key("interlude.command")
	Status        = attribute.Key("interlude.status")
	Step          = attribute.Key("interlude.step")
	Node          = attribute.Key("interlude.node")
	Nodes         = attribute.Key("interlude.nodes")
	Checkpoint    = attribute.Key("interlude.checkpoint")
	RecordKind    = attribute.Key("interlude.record.kind")
	RecordBytes   = attribute.Key("interlude.record.bytes")
	Durable       = attribute.Key("interlude.durable")
	InterruptID   = attribute.Key("interlude.interrupt.id")
	Reason        = attribute.Key("interlude.interrupt.reason")
	InterruptName = attribute.Key("interlude.interrupt.name")
	Link          = attribute.Key("interlude.link")
	AnsweredBy    = attribute.Key("interlude.answer.by")
	Decision      = attribute.Key("interlude.answer.decision")
	WaitSeconds   = attribute.Key("interlude.answer.wait_seconds")
	ToolOutcome   = attribute.Key("interlude.tool.outcome")
	Replayed      = attribute.Key("interlude.replayed")
)

// Values of the Link attribute, saying what a linked span is to the run.
const (
	// LinkPause links a run to the pause whose question it answers.
	LinkPause = "pause"
	// LinkAnswer links a run to the request that answered.
	LinkAnswer = "answer"
)

// Attrs is memory for the attributes a span is given in one call
// (SetAttributes, AddEvent), taken from a pool with NewAttrs and given back
// with Free once the call returns: the SDK copies the attributes it is given,
// so that the slices Interlude builds for its spans cost no allocation.
// Attributes that outlive the call (a link's) must not come from it.
type Attrs struct {
	kv  [8]attribute.KeyValue
	opt [1]trace.EventOption
}

var attrsPool = sync.Pool{New: func() any { return new(Attrs) }}

// NewAttrs returns memory for up to 8 attributes.
func NewAttrs() *Attrs { return attrsPool.Get().(*Attrs) }

// Slice returns a's memory as an empty slice to append attributes to.
func (a *Attrs) Slice() []attribute.KeyValue { return a.kv[:0] }

// AddEvent adds the event name with attrs to span, its option held by a.
func (a *Attrs) AddEvent(span trace.Span, name string, attrs []attribute.KeyValue) {
	a.opt[0] = trace.WithAttributes(attrs...)
	span.AddEvent(name, a.opt[:]...)
}

// SetAttributes sets attrs on span from pooled memory: the list given here
// stays on the caller's stack.
func SetAttributes(span trace.Span, attrs ...attribute.KeyValue) {
	buf := NewAttrs()
	span.SetAttributes(append(buf.Slice(), attrs...)...)
	buf.Free()
}

// Free gives a's memory back, letting go of the values it held.
func (a *Attrs) Free() {
	*a = Attrs{}
	attrsPool.Put(a)
}

// Traceparent returns sc in the W3C traceparent form
// ("00-<trace id>-<span id>-<flags>"), or "" when sc is not valid.
func Traceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	var b [55]byte
	copy(b[:], "00-")
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:], []byte{byte(sc.TraceFlags())})
	return string(b[:])
}

// Parse reads a traceparent written by Traceparent as a remote span context;
// it reports false for anything else.
func Parse(s string) (trace.SpanContext, bool) {
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' {
		return trace.SpanContext{}, false
	}
	tid, err := trace.TraceIDFromHex(s[3:35])
	if err != nil {
		return trace.SpanContext{}, false
	}
	sid, err := trace.SpanIDFromHex(s[36:52])
	if err != nil {
		return trace.SpanContext{}, false
	}
	var flags [1]byte
	if _, err := hex.Decode(flags[:], []byte(s[53:])); err != nil {
		return trace.SpanContext{}, false
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(flags[0]), Remote: true})
	return sc, sc.IsValid()
}

// Pause records the raising of question id as an "interlude.pause" event of
// the span on ctx, and returns that span's context as a traceparent to store
// with the question ("" when nothing on ctx is traced), for the answering run
// to link to. An event costs a fraction of a span to record and export.
func Pause(ctx context.Context, id, name, reason string) string {
	span := trace.SpanFromContext(ctx)
	sc := span.SpanContext()
	if !sc.IsValid() {
		return ""
	}
	if span.IsRecording() {
		buf := NewAttrs()
		attrs := append(buf.Slice(), InterruptID.String(id), Reason.String(reason))
		if name != "" {
			attrs = append(attrs, InterruptName.String(name))
		}
		buf.AddEvent(span, "interlude.pause", attrs)
		buf.Free()
	}
	return Traceparent(sc)
}
