package graph

import (
	"context"
	"errors"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/tracing"
	"github.com/interludehq/interlude/store"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Attributes with one of a few values, made once.
var (
	commandAttrs = [...]attribute.KeyValue{
		cmdInput:   tracing.Command.String("input"),
		cmdAnswer:  tracing.Command.String("answer"),
		cmdRecover: tracing.Command.String("recover"),
	}
	commandContinue = tracing.Command.String("continue")
	nodePaused      = tracing.Status.String("paused")
	nodeFailed      = tracing.Status.String("failed")
	nodeFinished    = tracing.Status.String("finished")
	replayedAttr    = tracing.Replayed.Bool(true)
	linkPause       = tracing.Link.String(tracing.LinkPause)
	// linkAnswer1 are the attributes of the link to the request that
	// answered, which the SDK keeps as they are: never written to.
	linkAnswer1 = []attribute.KeyValue{tracing.Link.String(tracing.LinkAnswer)}
)

// commandAttr is the interlude.command attribute of a command kind.
func commandAttr(k commandKind) attribute.KeyValue {
	if int(k) < len(commandAttrs) && commandAttrs[k].Key != "" {
		return commandAttrs[k]
	}
	return commandContinue
}

// The spans of runs, steps and nodes get all their attributes as they end, in
// one call: the SDK then copies them once into the span, where setting some
// at the start and the rest at the end copies them twice.

// startRun starts the span of one invocation. A run that answers questions
// starts a new trace: the wait for an answer can last days, and the answered
// pauses (linked as answer adds them) and the request that answered (linked
// here, as the span starts) each belong to traces of their own. The new
// root's span starts on a context whose span is none (a noop span, one
// allocation where the SDK's WithNewRoot makes two); untraced, there is no
// span to hide.
func (g *Graph[S]) startRun(ctx context.Context, threadID string, cmd Command) (context.Context, trace.Span) {
	sc := trace.SpanContextFromContext(ctx)
	if cmd.kind != cmdAnswer || !sc.IsValid() {
		return g.cfg.tracer.Start(ctx, g.runSpan)
	}
	ctx, span := g.cfg.tracer.Start(trace.ContextWithSpan(ctx, noop.Span{}), g.runSpan)
	if span.IsRecording() {
		span.AddLink(trace.Link{SpanContext: sc, Attributes: linkAnswer1})
	}
	return ctx, span
}

// endRun ends the run's span with what it ran and how it ended.
func (g *Graph[S]) endRun(span trace.Span, threadID string, cmd Command, res *Result[S], err error) {
	if span.IsRecording() {
		buf := tracing.NewAttrs()
		attrs := append(buf.Slice(), tracing.Graph.String(g.name), tracing.ThreadID.String(threadID), commandAttr(cmd.kind))
		if res != nil {
			attrs = append(attrs, tracing.Status.String(string(res.Status)), tracing.Checkpoint.Int64(res.Checkpoint))
			if len(res.Replays) > 0 {
				attrs = append(attrs, replayedAttr)
			}
		}
		span.SetAttributes(attrs...)
		buf.Free()
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
	// One array holds the link's attributes (the first five) and the
	// event's (from the second on).
	all := make([]attribute.KeyValue, 5, 6)
	all[0] = linkPause
	all[1] = tracing.InterruptID.String(q.ID)
	all[2] = tracing.Decision.String(string(res.Status))
	all[3] = tracing.AnsweredBy.String(res.By)
	all[4] = tracing.WaitSeconds.Float64(now.Sub(q.CreatedAt).Seconds())
	if sc, ok := tracing.Parse(q.Trace); ok {
		span.AddLink(trace.Link{SpanContext: sc, Attributes: all[:5:5]})
	}
	attrs := all[1:]
	if q.Reason != "" {
		attrs = append(attrs, tracing.Reason.String(q.Reason))
	}
	buf := tracing.NewAttrs()
	buf.AddEvent(span, "interlude.answer", attrs)
	buf.Free()
}

// stepSpan is the span of one step, with the attributes it ends with.
type stepSpan struct {
	span  trace.Span
	step  int
	nodes attribute.KeyValue
}

// startStep starts the span of the step about to run st.next.
func (r *runner[S]) startStep() (context.Context, stepSpan) {
	ctx, span := r.g.cfg.tracer.Start(r.ctx, "interlude.step")
	s := stepSpan{span: span}
	if span.IsRecording() {
		s.step, s.nodes = r.c.st.step, r.g.nodesAttr(r.c.st.next)
	}
	return ctx, s
}

// end ends the step's span, recording err as endSpan does.
func (s stepSpan) end(err error) {
	if s.span.IsRecording() {
		tracing.SetAttributes(s.span, tracing.Step.Int(s.step), s.nodes)
	}
	endSpan(s.span, err)
}

// nodesAttr is the interlude.nodes attribute of a step running nodes; a
// step of a single node takes the one its node's labels hold.
func (g *Graph[S]) nodesAttr(nodes []string) attribute.KeyValue {
	if len(nodes) == 1 {
		if l, ok := g.labels[nodes[0]]; ok {
			return l.nodes
		}
	}
	return tracing.Nodes.StringSlice(nodes)
}

// startNode starts the span of one node's task, named as its labels say.
func (r *runner[S]) startNode(ctx context.Context, l *nodeLabels[S]) (context.Context, trace.Span) {
	return r.g.cfg.tracer.Start(ctx, l.span)
}

// endNode ends the span of a node's task with its outcome. The step is its
// parent step span's attribute, not repeated here.
func endNode(span trace.Span, o *outcome) {
	if span.IsRecording() {
		status := nodeFinished
		switch {
		case len(o.raised) > 0:
			status = nodePaused
		case o.err != nil:
			status = nodeFailed
		}
		tracing.SetAttributes(span, tracing.Node.String(o.node), status)
		if o.err != nil && len(o.raised) == 0 {
			span.RecordError(o.err)
			span.SetStatus(codes.Error, o.err.Error())
		}
	}
	span.End()
}

// startAppend starts the span of one commit to the store, a child of the
// step's span (or the run's): it times the commit, fsync included when the
// commit waits for the disk.
func (r *runner[S]) startAppend() (context.Context, trace.Span) {
	return r.g.cfg.tracer.Start(r.ctx, "interlude.append")
}

// endAppend ends a commit's span with the checkpoint and record it wrote and
// whether it waited for the disk, recording err as endSpan does.
func endAppend(span trace.Span, a *store.Append, kind string, size int, err error) {
	if span.IsRecording() {
		tracing.SetAttributes(span, tracing.Checkpoint.Int64(a.Expect+1), tracing.RecordKind.String(kind),
			tracing.RecordBytes.Int(size), tracing.Durable.Bool(!a.NoSync))
	}
	endSpan(span, err)
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
