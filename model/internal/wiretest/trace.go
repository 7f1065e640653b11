package wiretest

import (
	"context"
	"testing"

	"github.com/interludehq/interlude/model"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Traced is what a provider's traced call should show.
type Traced struct {
	// Provider is the gen_ai.provider.name value.
	Provider string
	// RequestModel is the model asked for, ResponseModel the one the reply names.
	RequestModel, ResponseModel string
	// InputTokens and OutputTokens are the reply's usage.
	InputTokens, OutputTokens int
	// FinishReason is the provider's own reason in the reply.
	FinishReason string
}

// CheckTraced makes one call (streamed or not) through the model that newModel
// builds with a recording tracer provider, inside a parent span, and checks
// the call's GenAI span and that the HTTP request carried the trace context.
func CheckTraced(t *testing.T, srv *Server, stream bool, want Traced, newModel func(trace.TracerProvider) model.Model) {
	t.Helper()
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())

	ctx, parent := tp.Tracer("test").Start(context.Background(), "node")
	m := newModel(tp)
	var err error
	if stream {
		_, err = model.Collect(m.Stream(ctx, FirstRequest()))
	} else {
		_, err = m.Generate(ctx, FirstRequest())
	}
	if err != nil {
		t.Fatal(err)
	}
	parent.End()
	var call *tracetest.SpanStub
	var httpSpan *tracetest.SpanStub
	spans := exp.GetSpans()
	for i, s := range spans {
		switch {
		case s.Name == "chat "+want.RequestModel:
			call = &spans[i]
		case s.SpanKind == trace.SpanKindClient && s.InstrumentationScope.Name != "github.com/interludehq/interlude":
			httpSpan = &spans[i]
		}
	}
	if call == nil || httpSpan == nil {
		t.Fatalf("want a span \"chat %s\" and an HTTP client span, got %d spans: %+v", want.RequestModel, len(spans), spans)
	}
	if call.SpanKind != trace.SpanKindClient || httpSpan.Parent.SpanID() != call.SpanContext.SpanID() || call.Parent.SpanID() != parent.SpanContext().SpanID() {
		t.Fatal("the model call should be a client span in its caller's trace, parent of its HTTP request's")
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range call.Attributes {
		attrs[kv.Key] = kv.Value
	}
	for key, v := range map[string]any{
		"gen_ai.operation.name":      "chat",
		"gen_ai.provider.name":       want.Provider,
		"gen_ai.request.model":       want.RequestModel,
		"gen_ai.response.model":      want.ResponseModel,
		"gen_ai.usage.input_tokens":  int64(want.InputTokens),
		"gen_ai.usage.output_tokens": int64(want.OutputTokens),
	} {
		if got := attrs[attribute.Key(key)].AsInterface(); got != v {
			t.Errorf("%s = %v, want %v", key, got, v)
		}
	}
	if got := attrs["gen_ai.response.finish_reasons"].AsStringSlice(); len(got) != 1 || got[0] != want.FinishReason {
		t.Errorf("gen_ai.response.finish_reasons = %v, want [%s]", got, want.FinishReason)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	tp0 := reqs[len(reqs)-1].Header.Get("traceparent")
	if want := "00-" + httpSpan.SpanContext.TraceID().String() + "-" + httpSpan.SpanContext.SpanID().String() + "-01"; tp0 != want {
		t.Errorf("the request should carry traceparent %s, got %q", want, tp0)
	}
}
