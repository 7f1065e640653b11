package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store/memory"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracedServer serves the refund graph, its runs and requests traced through
// tp (nil: the global provider).
func tracedServer(tb testing.TB, tp trace.TracerProvider) *server.Server {
	tb.Helper()
	gopts := []graph.Option{graph.WithStore(memory.New())}
	sopts := []server.Option{server.WithLogger(slog.New(slog.DiscardHandler)), server.WithMetrics(false)}
	if tp != nil {
		gopts = append(gopts, graph.WithTracerProvider(tp))
		sopts = append(sopts, server.WithTracerProvider(tp))
	}
	g, err := graphs.Refund(gopts...)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := server.New(append(sopts, server.WithGraph(g.Erase()))...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	return srv
}

// serve sends one request to srv in process and returns the answer's status.
func serve(srv http.Handler, path, body string, header map[string]string) int {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Host = "127.0.0.1"
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	return w.Code
}

func TestARequestsTraceparentContinuesItsTraceAndAnAnswerLinksItsRequest(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	srv := tracedServer(t, tp)

	const caller = "4bf92f3577b34da6a3ce929d0e0e4736"
	if code := serve(srv, "/v1/graph/invoke", `{"graph":"refund","input":{"amount":150},"config":{"thread_id":"t"}}`,
		map[string]string{"traceparent": "00-" + caller + "-00f067aa0ba902b7-01"}); code != http.StatusOK {
		t.Fatal(code)
	}
	if code := serve(srv, "/v1/threads/t/resume", `{"response":{"approved":true}}`, nil); code != http.StatusOK {
		t.Fatal(code)
	}
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		byName[s.Name] = append(byName[s.Name], s)
	}
	start, resume, runs := byName["POST /v1/graph/invoke"], byName["POST /v1/threads/{id}/resume"], byName["interlude.run refund"]
	if len(start) != 1 || len(resume) != 1 || len(runs) != 2 {
		t.Fatalf("want a span per request and per run, got %v", byName)
	}
	if start[0].SpanContext.TraceID().String() != caller || start[0].Parent.SpanID().String() != "00f067aa0ba902b7" || start[0].SpanKind != trace.SpanKindServer {
		t.Fatal("the request's span should continue the trace its traceparent names")
	}
	if runs[0].Parent.SpanID() != start[0].SpanContext.SpanID() {
		t.Fatal("the run a request starts should be a child of the request's span")
	}
	answer := runs[1]
	if answer.Parent.IsValid() || answer.SpanContext.TraceID() == resume[0].SpanContext.TraceID() {
		t.Fatal("the answer's run should start a trace of its own")
	}
	var toRequest, toPause bool
	for _, l := range answer.Links {
		toRequest = toRequest || l.SpanContext.SpanID() == resume[0].SpanContext.SpanID()
		toPause = toPause || l.SpanContext.TraceID().String() == caller
	}
	if !toRequest || !toPause {
		t.Fatalf("the answer's run should link the answering request and the pause: %+v", answer.Links)
	}
}

// processCPU returns the CPU time the process has used, user and system, in
// nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkInvokeCycleTracing starts and answers a refund thread over the
// server's handler in process, untraced (the global provider, unset), with a
// no-op provider, and recording every span into memory.
func BenchmarkInvokeCycleTracing(b *testing.B) {
	for _, mode := range []string{"off", "noop", "recording"} {
		b.Run(mode, func(b *testing.B) {
			var tp trace.TracerProvider
			var exp *tracetest.InMemoryExporter
			switch mode {
			case "noop":
				tp = noop.NewTracerProvider()
			case "recording":
				exp = tracetest.NewInMemoryExporter()
				sdk := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
				b.Cleanup(func() { sdk.Shutdown(context.Background()) })
				tp = sdk
			}
			srv := tracedServer(b, tp)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for i := range b.N {
				id := "t" + strconv.Itoa(i)
				if code := serve(srv, "/v1/graph/invoke", `{"graph":"refund","input":{"amount":150},"config":{"thread_id":"`+id+`"}}`, nil); code != http.StatusOK {
					b.Fatal(code)
				}
				if code := serve(srv, "/v1/threads/"+id+"/resume", `{"response":{"approved":true}}`, nil); code != http.StatusOK {
					b.Fatal(code)
				}
				if exp != nil && i%256 == 255 {
					exp.Reset() // keep memory flat; exporting is appending to a slice
				}
			}
			// On a shared machine the process's CPU time says more than the
			// elapsed time.
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
