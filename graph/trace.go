package graph

import (
	"context"
	"errors"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// commandName names a command kind in the run span.
func commandName(k commandKind) string {
	switch k {
	case cmdInput:
		return "input"
	case cmdAnswer:
		return "answer"
	case cmdRecover:
		return "recover"
	}
	return "continue"
}

// startRun starts the span of one invocation. A run that answers questions
// starts a new trace: the wait for an answer can last days, and the answered
// pauses (linked as answer adds them) and the request that answered (linked
// here) each belong to traces of their own.
func (g *Graph[S]) startRun(ctx context.Context, threadID string, cmd Command) (context.Context, trace.Span) {
	name := g.runSpan
	var opts []trace.SpanStartOption
	if cmd.kind == cmdAnswer {
		opts = append(opts, trace.WithNewRoot())
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{tracing.Link.String(tracing.LinkAnswer)}}))
		}
	}
	ctx, span := g.cfg.tracer.Start(ctx, name, opts...)
	if span.IsRecording() {
		span.SetAttributes(tracing.Graph.String(g.name), tracing.ThreadID.String(threadID), tracing.Command.String(commandName(cmd.kind)))
	}
	return ctx, span
}

// endRun ends the run's span with how the run ended.
func endRun[S any](span trace.Span, res *Result[S], err error) {
	if span.IsRecording() {
		if res != nil {
			span.SetAttributes(tracing.Status.String(string(res.Status)), tracing.Checkpoint.Int64(res.Checkpoint))
			if len(res.Replays) > 0 {
				span.SetAttributes(tracing.Replayed.Bool(true))
			}
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
	}
	span.End()
}

// linkAnswer links the run's span to the pause of question q, answered by res
// at now: who answered, with what decision, after how long. A question raised
// by an untraced run gets the answer's event only.
func linkAnswer(ctx context.Context, q interlude.Interruption, res interlude.Resolution, now time.Time) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{
		tracing.InterruptID.String(q.ID),
		tracing.Decision.String(string(res.Status)),
		tracing.AnsweredBy.String(res.By),
		tracing.WaitSeconds.Float64(now.Sub(q.CreatedAt).Seconds()),
	}
	if sc, ok := tracing.Parse(q.Trace); ok {
		span.AddLink(trace.Link{SpanContext: sc, Attributes: append([]attribute.KeyValue{tracing.Link.String(tracing.LinkPause)}, attrs...)})
	}
	if q.Reason != "" {
		attrs = append(attrs, tracing.Reason.String(q.Reason))
	}
	span.AddEvent("interlude.answer", trace.WithAttributes(attrs...))
}

// startStep starts the span of one step, running nodes.
func (r *runner[S]) startStep(nodes []string) (context.Context, trace.Span) {
	ctx, span := r.g.cfg.tracer.Start(r.ctx, "interlude.step")
	if span.IsRecording() {
		span.SetAttributes(tracing.Step.Int(r.c.st.step), tracing.Nodes.StringSlice(nodes))
	}
	return ctx, span
}

// startNode starts the span of one node's task.
func (r *runner[S]) startNode(ctx context.Context, node string) (context.Context, trace.Span) {
	ctx, span := r.g.cfg.tracer.Start(ctx, r.g.labels[node].span)
	if span.IsRecording() {
		span.SetAttributes(tracing.Node.String(node), tracing.Step.Int(r.c.st.step))
	}
	return ctx, span
}

// endNode ends a node's span with its outcome.
func endNode(span trace.Span, o *outcome) {
	if span.IsRecording() {
		switch {
		case len(o.raised) > 0:
			span.SetAttributes(tracing.Status.String("paused"))
		case o.err != nil:
			span.SetAttributes(tracing.Status.String("failed"))
			span.RecordError(o.err)
			span.SetStatus(codes.Error, o.err.Error())
		default:
			span.SetAttributes(tracing.Status.String("finished"))
		}
	}
	span.End()
}

// tracedAppend records a commit to the store as an "interlude.append" event
// of the span it happens in (the step's, or the run's), not as a span of its
// own: the enclosing span already times it, and an event costs a fraction of
// a span to record and export.
func (r *runner[S]) tracedAppend(version int64, kind string, size int) {
	span := trace.SpanFromContext(r.ctx)
	if !span.IsRecording() {
		return
	}
	span.AddEvent("interlude.append", trace.WithAttributes(tracing.Checkpoint.Int64(version),
		tracing.RecordKind.String(kind), tracing.RecordBytes.Int(size)))
}

// endSpan ends span, recording err as its failure unless it is a refusal
// (*interlude.Error) that is part of normal work, such as a lost race.
func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		var ie *interlude.Error
		if !errors.As(err, &ie) {
			span.SetStatus(codes.Error, err.Error())
		} else {
			span.SetAttributes(attribute.String("interlude.error.code", string(ie.Code)))
		}
	}
	span.End()
}
