package spanexport

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestTheMemoryExporterHoldsTheNewestSpansUpToItsLimit(t *testing.T) {
	exp := NewMemory(3)
	ended := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer ended.Shutdown(context.Background())
	for i := range 7 {
		_, s := ended.Tracer("test").Start(context.Background(), "span "+strconv.Itoa(i))
		s.End()
	}
	var names []string
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
	}
	if want := []string{"span 4", "span 5", "span 6"}; !slices.Equal(names, want) {
		t.Fatalf("the exporter should hold at most its limit, the newest spans: got %v, want %v", names, want)
	}
	if err := exp.ExportSpans(context.Background(), tracetest.SpanStubs{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}.Snapshots()); err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
	}
	if want := []string{"b", "c", "d"}; !slices.Equal(names, want) {
		t.Fatalf("a batch larger than the limit should leave its newest spans: got %v, want %v", names, want)
	}
}

// chanExporter hands the names of each batch it is given to batches.
type chanExporter struct{ batches chan []string }

func (e chanExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
	}
	e.batches <- names
	return nil
}

func (chanExporter) Shutdown(context.Context) error { return nil }

func TestTheBatchProcessorExportsAFullBatchAtOnceAndTheRestWhenFlushedOrShutDown(t *testing.T) {
	exp := chanExporter{batches: make(chan []string, 4)}
	b := NewBatcher(exp, Settings{QueueSize: 10, BatchSize: 2, Delay: time.Hour, Timeout: time.Minute})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	defer tp.Shutdown(context.Background())
	end := func(names ...string) {
		for _, n := range names {
			_, s := tp.Tracer("test").Start(context.Background(), n)
			s.End()
		}
	}
	end("a", "b") // a full batch goes without waiting for the schedule's hour
	select {
	case got := <-exp.batches:
		if !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("want the full batch [a b], got %v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a full batch was not exported")
	}
	end("c")
	if err := b.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := <-exp.batches; !slices.Equal(got, []string{"c"}) {
		t.Fatalf("a flush should export what is queued: got %v", got)
	}
	end("d")
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := <-exp.batches; !slices.Equal(got, []string{"d"}) {
		t.Fatalf("shutting down should export what is queued: got %v", got)
	}
	end("e")
	b.ForceFlush(context.Background())
	select {
	case got := <-exp.batches:
		t.Fatalf("nothing ended after shutdown should be exported: %v", got)
	default:
	}
}

func TestTheBatchProcessorDropsSpansBeyondItsQueueAndSaysSo(t *testing.T) {
	exp := chanExporter{batches: make(chan []string, 4)}
	// A batch larger than the queue: nothing is exported before the flush.
	b := NewBatcher(exp, Settings{QueueSize: 3, BatchSize: 4, Delay: time.Hour, Timeout: time.Minute})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	defer tp.Shutdown(context.Background())
	for _, n := range []string{"a", "b", "c", "d"} {
		_, s := tp.Tracer("test").Start(context.Background(), n)
		s.End()
	}
	err := b.ForceFlush(context.Background())
	if got := <-exp.batches; !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("the queue's spans should be exported, and nothing beyond them: got %v", got)
	}
	if err == nil || !strings.Contains(err.Error(), "dropped 1 spans") || !strings.Contains(err.Error(), "OTEL_BSP_MAX_QUEUE_SIZE") {
		t.Fatalf("the flush should say a span was dropped and what to do: %v", err)
	}
}
