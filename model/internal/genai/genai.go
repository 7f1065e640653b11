// Package genai traces the model providers' calls as OpenTelemetry's GenAI
// semantic conventions describe them: a client span per call named for the
// operation and the requested model, with the provider, the request and
// response models, token usage and finish reasons; and the HTTP client whose
// transport carries the call's trace context to the provider.
package genai

import (
	"context"
	"errors"
	"iter"
	"net/http"

	"github.com/interludehq/interlude/internal/tracing"
	"github.com/interludehq/interlude/model"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracer starts the spans of one provider's calls.
type Tracer struct {
	tracer   trace.Tracer
	provider attribute.KeyValue
}

// New returns the tracer of a provider (a gen_ai.provider.name value such as
// "openai") through tp, or the global provider when tp is nil.
func New(tp trace.TracerProvider, provider string) *Tracer {
	return &Tracer{tracer: tracing.Tracer(tp), provider: semconv.GenAIProviderNameKey.String(provider)}
}

// Client returns an HTTP client like c (http.DefaultClient when nil) whose
// transport makes a client span per request and sends the trace context with
// it, through tp (the global provider when nil).
func Client(c *http.Client, tp trace.TracerProvider) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	wrapped := *c
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	opts := []otelhttp.Option{}
	if tp != nil {
		opts = append(opts, otelhttp.WithTracerProvider(tp))
	}
	wrapped.Transport = otelhttp.NewTransport(base, opts...)
	return &wrapped
}

// Start starts the span of a chat call to requestModel.
func (t *Tracer) Start(ctx context.Context, requestModel string, req *model.Request) (context.Context, trace.Span) {
	ctx, span := t.tracer.Start(ctx, "chat "+requestModel, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		attrs := []attribute.KeyValue{semconv.GenAIOperationNameChat, t.provider, semconv.GenAIRequestModel(requestModel)}
		if req != nil && req.MaxTokens > 0 {
			attrs = append(attrs, semconv.GenAIRequestMaxTokens(req.MaxTokens))
		}
		if req != nil && req.Temperature != nil {
			attrs = append(attrs, semconv.GenAIRequestTemperature(*req.Temperature))
		}
		span.SetAttributes(attrs...)
	}
	return ctx, span
}

// FinishReason records the provider's own reason for ending the answer on the
// call's span found on ctx.
func FinishReason(ctx context.Context, reason string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() && reason != "" {
		span.SetAttributes(semconv.GenAIResponseFinishReasons(reason))
	}
}

// End ends a call's span with its response or error.
func End(span trace.Span, resp *model.Response, err error) {
	if span.IsRecording() {
		if resp != nil {
			if resp.Model != "" {
				span.SetAttributes(semconv.GenAIResponseModel(resp.Model))
			}
			span.SetAttributes(semconv.GenAIUsageInputTokens(resp.Usage.InputTokens), semconv.GenAIUsageOutputTokens(resp.Usage.OutputTokens))
		}
		if err != nil {
			typ := "error"
			var me *model.Error
			if errors.As(err, &me) && me.Code != "" {
				typ = me.Code
			}
			span.SetAttributes(semconv.ErrorTypeKey.String(typ))
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
	}
	span.End()
}

// Generate traces one call of generate.
func (t *Tracer) Generate(ctx context.Context, requestModel string, req *model.Request,
	generate func(context.Context, *model.Request) (*model.Response, error)) (*model.Response, error) {
	ctx, span := t.Start(ctx, requestModel, req)
	resp, err := generate(ctx, req)
	End(span, resp, err)
	return resp, err
}

// Stream traces one call of stream: the span lasts until the stream ends or
// its reader stops.
func (t *Tracer) Stream(ctx context.Context, requestModel string, req *model.Request,
	stream func(context.Context, *model.Request) iter.Seq2[model.Chunk, error]) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		ctx, span := t.Start(ctx, requestModel, req)
		var (
			resp   *model.Response
			failed error
		)
		defer func() { End(span, resp, failed) }()
		for c, err := range stream(ctx, req) {
			if err != nil {
				failed = err
			} else if c.Type == model.ChunkDone {
				resp = c.Response
			}
			if !yield(c, err) {
				return
			}
		}
	}
}
