package host

import (
	"context"
	"encoding/json"

	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/tracing"
	"github.com/interludehq/interlude/store"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// startWatch starts the span of a watch's work on one thread.
func (h *Host) startWatch(ctx context.Context, name string, m store.Meta) (context.Context, trace.Span) {
	ctx, span := h.tracer.Start(ctx, name)
	if span.IsRecording() {
		span.SetAttributes(tracing.Graph.String(m.Graph), tracing.ThreadID.String(m.ThreadID))
	}
	return ctx, span
}

// endWatch ends a watch's span with the run's end.
func endWatch(span trace.Span, res *graph.Result[json.RawMessage], err error) {
	if span.IsRecording() {
		if res != nil {
			span.SetAttributes(tracing.Status.String(string(res.Status)))
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
	}
	span.End()
}
