package graph_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store/sqlite"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// recorder is a tracer provider that keeps every ended span in memory.
type recorder struct {
	tp  *sdktrace.TracerProvider
	exp *tracetest.InMemoryExporter
}

func newRecorder(t *testing.T) *recorder {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return &recorder{tp: tp, exp: exp}
}

// named returns the spans whose name starts with prefix, in the order they ended.
func (r *recorder) named(prefix string) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range r.exp.GetSpans() {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func (r *recorder) one(t *testing.T, prefix string) tracetest.SpanStub {
	t.Helper()
	ss := r.named(prefix)
	if len(ss) != 1 {
		t.Fatalf("want one span named %q, got %d of %d spans: %v", prefix, len(ss), len(r.exp.GetSpans()), spanNames(r.exp.GetSpans()))
	}
	return ss[0]
}

func spanNames(ss tracetest.SpanStubs) []string {
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	return names
}

func attr(kvs []attribute.KeyValue, key string) (attribute.Value, bool) {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func wantAttr(t *testing.T, what string, kvs []attribute.KeyValue, key string, want any) {
	t.Helper()
	v, ok := attr(kvs, key)
	if !ok {
		t.Fatalf("%s has no attribute %s: %v", what, key, kvs)
	}
	if got := v.AsInterface(); got != want {
		t.Fatalf("%s: %s = %v (%T), want %v (%T)", what, key, got, got, want, want)
	}
}

func childOf(child, parent tracetest.SpanStub) bool {
	return child.Parent.SpanID() == parent.SpanContext.SpanID() && child.SpanContext.TraceID() == parent.SpanContext.TraceID()
}

func TestATracedRunHasASpanPerRunStepNodeAndAppendAndAnEventPerPause(t *testing.T) {
	rec := newRecorder(t)
	app := refundGraph(t, sqliteStore(t), graph.WithTracerProvider(rec.tp))
	ctx, parent := rec.tp.Tracer("test").Start(context.Background(), "caller")
	if _, err := app.Invoke(ctx, "order-1", graph.Input(refundState{Amount: 5})); err != nil {
		t.Fatal(err)
	}
	parent.End()

	run := rec.one(t, "interlude.run refund")
	if run.Parent.SpanID() != parent.SpanContext().SpanID() {
		t.Fatal("the run span should continue the caller's trace")
	}
	wantAttr(t, "run", run.Attributes, "interlude.thread_id", "order-1")
	wantAttr(t, "run", run.Attributes, "interlude.command", "input")
	wantAttr(t, "run", run.Attributes, "interlude.status", "interrupted")
	step := rec.one(t, "interlude.step")
	node := rec.one(t, "interlude.node refund")
	if !childOf(step, run) || !childOf(node, step) {
		t.Fatalf("want run > step > node, got parents step=%v node=%v", step.Parent.SpanID(), node.Parent.SpanID())
	}
	if len(rec.named("interlude.pause")) != 0 {
		t.Fatal("a question should be an event of its node, not a span of its own")
	}
	wantAttr(t, "node", node.Attributes, "interlude.status", "paused")
	wantAttr(t, "run", run.Attributes, "interlude.graph", "refund")
	wantAttr(t, "node", node.Attributes, "interlude.node", "refund")
	if _, ok := attr(node.Attributes, "interlude.step"); ok {
		t.Fatalf("the node should leave its step to its parent step span: %v", node.Attributes)
	}
	wantAttr(t, "step", step.Attributes, "interlude.step", int64(0))
	if v, _ := attr(step.Attributes, "interlude.nodes"); !slices.Equal(v.AsStringSlice(), []string{"refund"}) {
		t.Fatalf("the step should name the nodes it runs: %v", step.Attributes)
	}
	// The pause's commit is a span of its own under the step, and durable:
	// the caller is told of it.
	commit := rec.one(t, "interlude.append")
	if !childOf(commit, step) {
		t.Fatalf("the pause's commit should be a child of its step, got parent %v", commit.Parent.SpanID())
	}
	wantAttr(t, "append", commit.Attributes, "interlude.record.kind", "pause")
	wantAttr(t, "append", commit.Attributes, "interlude.checkpoint", int64(1))
	wantAttr(t, "append", commit.Attributes, "interlude.durable", true)

	snap, err := app.State(context.Background(), "order-1")
	if err != nil || len(snap.Interrupts) != 1 {
		t.Fatal(err, snap)
	}
	q := snap.Interrupts[0]
	var pauses []sdktrace.Event
	for _, e := range node.Events {
		if e.Name == "interlude.pause" {
			pauses = append(pauses, e)
		}
	}
	if len(pauses) != 1 {
		t.Fatalf("the question should be one pause event of its node, got %+v", node.Events)
	}
	wantAttr(t, "pause", pauses[0].Attributes, "interlude.interrupt.id", q.ID)
	wantAttr(t, "pause", pauses[0].Attributes, "interlude.interrupt.reason", q.Reason)
	want := "00-" + node.SpanContext.TraceID().String() + "-" + node.SpanContext.SpanID().String() + "-01"
	if q.Trace != want {
		t.Fatalf("the stored question should carry the span context %s of the node that raised it, got %q", want, q.Trace)
	}
}

func TestAnAnswerAfterARestartStartsATraceLinkedToThePauseAndTheAnsweringRequest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interlude.db")
	asked := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	answered := asked.Add(26 * time.Hour)

	// The first process pauses and stops.
	before := newRecorder(t)
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	app := refundGraph(t, st, graph.WithTracerProvider(before.tp), graph.WithClock(func() time.Time { return asked }))
	if _, err := app.Invoke(context.Background(), "order-42", graph.Input(refundState{Amount: 150})); err != nil {
		t.Fatal(err)
	}
	st.Close()
	pause := before.one(t, "interlude.node refund") // the node that raised the question

	// Another process answers a day later, from a request of its own trace.
	after := newRecorder(t)
	st, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	app = refundGraph(t, st, graph.WithTracerProvider(after.tp), graph.WithClock(func() time.Time { return answered }))
	ctx, click := after.tp.Tracer("test").Start(context.Background(), "POST /v1/threads/{id}/resume")
	res, err := app.Invoke(interlude.WithActor(ctx, "alice"), "order-42", graph.Resume(interlude.Resolve(map[string]any{"approved": true})))
	click.End()
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatal(err, res)
	}

	run := after.one(t, "interlude.run refund")
	if run.Parent.IsValid() {
		t.Fatal("the answer's run should start a new trace")
	}
	if run.SpanContext.TraceID() == pause.SpanContext.TraceID() || run.SpanContext.TraceID() == click.SpanContext().TraceID() {
		t.Fatal("the answer's run should be a trace of its own")
	}
	wantAttr(t, "run", run.Attributes, "interlude.command", "answer")
	wantAttr(t, "run", run.Attributes, "interlude.status", "completed")
	var toPause, toRequest *sdktrace.Link
	for i, l := range run.Links {
		switch {
		case l.SpanContext.SpanID() == pause.SpanContext.SpanID() && l.SpanContext.TraceID() == pause.SpanContext.TraceID():
			toPause = &run.Links[i]
		case l.SpanContext.SpanID() == click.SpanContext().SpanID():
			toRequest = &run.Links[i]
		}
	}
	if toPause == nil || toRequest == nil {
		t.Fatalf("the run should link the pause and the answering request: %+v", run.Links)
	}
	wantAttr(t, "link to the pause", toPause.Attributes, "interlude.link", "pause")
	wantAttr(t, "link to the pause", toPause.Attributes, "interlude.answer.by", "alice")
	wantAttr(t, "link to the pause", toPause.Attributes, "interlude.answer.decision", "resolved")
	wantAttr(t, "link to the pause", toPause.Attributes, "interlude.answer.wait_seconds", float64(26*3600))
	wantAttr(t, "link to the request", toRequest.Attributes, "interlude.link", "answer")
	var answers []sdktrace.Event
	for _, e := range run.Events {
		if e.Name == "interlude.answer" {
			answers = append(answers, e)
		}
	}
	if len(answers) != 1 {
		t.Fatalf("the run should record the answer as an event: %+v", run.Events)
	}
	wantAttr(t, "answer event", answers[0].Attributes, "interlude.answer.by", "alice")
	var answerCommit *tracetest.SpanStub
	for _, c := range after.named("interlude.append") {
		if v, _ := attr(c.Attributes, "interlude.record.kind"); v.AsString() == "resolve" {
			answerCommit = &c
		}
	}
	if answerCommit == nil || !childOf(*answerCommit, run) {
		t.Fatalf("the answer's commit should be an append span of the run: %+v", after.named("interlude.append"))
	}

	node := after.one(t, "interlude.node refund")
	wantAttr(t, "node", node.Attributes, "interlude.status", "finished")
	if node.SpanContext.TraceID() != run.SpanContext.TraceID() {
		t.Fatal("the re-run node belongs to the answer's trace")
	}
}

func TestAnUntracedGraphStoresNoTraceWithItsQuestions(t *testing.T) {
	app := refundGraph(t, sqliteStore(t))
	res, err := app.Invoke(context.Background(), "order-7", graph.Input(refundState{Amount: 5}))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatal(err, res)
	}
	if res.Interrupts[0].Trace != "" {
		t.Fatalf("without a tracer provider the question should carry no trace, got %q", res.Interrupts[0].Trace)
	}
}

func sqliteStore(t *testing.T) *sqlite.Store {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "interlude.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
