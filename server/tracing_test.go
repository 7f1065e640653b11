package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/interludehq/interlude/internal/spanexport"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/cputime"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store/memory"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracedServer serves the refund graph, its runs and requests traced through
// tp (nil: the global provider), with the options opts besides.
func tracedServer(tb testing.TB, tp trace.TracerProvider, opts ...server.Option) *server.Server {
	tb.Helper()
	gopts := []graph.Option{graph.WithStore(memory.New())}
	sopts := append([]server.Option{server.WithLogger(slog.New(slog.DiscardHandler)), server.WithMetrics(false)}, opts...)
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

// BenchmarkInvokeCycleTracing starts and answers a refund thread over the
// server's handler in process, untraced (the global provider, unset), with a
// no-op provider, and recording every span into memory through the processor
// and exporter of `interlude serve -trace=memory`.
func BenchmarkInvokeCycleTracing(b *testing.B) {
	for _, mode := range []string{"off", "noop", "recording"} {
		b.Run(mode, func(b *testing.B) {
			var tp trace.TracerProvider
			switch mode {
			case "noop":
				tp = noop.NewTracerProvider()
			case "recording":
				processor := spanexport.NewBatcher(spanexport.NewMemory(spanexport.MemorySpans), spanexport.DefaultSettings())
				sdk := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(processor), sdktrace.WithSampler(sdktrace.AlwaysSample()))
				b.Cleanup(func() { sdk.Shutdown(context.Background()) })
				tp = sdk
			}
			// The host's watches, which scan every thread on a timer, are
			// off: their cost grows with the threads made and the time
			// taken, not with tracing.
			srv := tracedServer(b, tp, server.WithLeaseWatch(0), server.WithExpiryWatch(0), server.WithRecoveryWatch(0))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cputime.Process().Nanoseconds()
			for i := range b.N {
				id := "t" + strconv.Itoa(i)
				if code := serve(srv, "/v1/graph/invoke", `{"graph":"refund","input":{"amount":150},"config":{"thread_id":"`+id+`"}}`, nil); code != http.StatusOK {
					b.Fatal(code)
				}
				if code := serve(srv, "/v1/threads/"+id+"/resume", `{"response":{"approved":true}}`, nil); code != http.StatusOK {
					b.Fatal(code)
				}
			}
			// On a shared machine the process's CPU time says more than the
			// elapsed time.
			b.ReportMetric(float64(cputime.Process().Nanoseconds()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// recordingServer is a server traced into an in-memory exporter.
func recordingServer(t *testing.T) (*server.Server, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tracedServer(t, tp), exp
}

// requestSpan returns the only server span exp holds.
func requestSpan(t *testing.T, exp *tracetest.InMemoryExporter) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.SpanKind == trace.SpanKindServer {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one request span, got %d", len(found))
	}
	return found[0]
}

func attrsOf(s tracetest.SpanStub) map[string]string {
	m := map[string]string{}
	for _, a := range s.Attributes {
		m[string(a.Key)] = a.Value.Emit()
	}
	return m
}

func TestARequestsSpanCarriesTheHTTPServerSemanticConventionAttributes(t *testing.T) {
	srv, exp := recordingServer(t)
	body := `{"graph":"refund","input":{"amount":150},"config":{"thread_id":"t"}}`
	if code := serve(srv, "/v1/graph/invoke", body, map[string]string{"User-Agent": "refund-bot/1.0"}); code != http.StatusOK {
		t.Fatal(code)
	}
	span := requestSpan(t, exp)
	if span.Name != "POST /v1/graph/invoke" || span.Status.Code != codes.Unset {
		t.Fatalf("want the span named for the route and not failed, got %q %v", span.Name, span.Status)
	}
	got := attrsOf(span)
	for k, v := range map[string]string{
		"http.request.method": "POST", "url.scheme": "http", "url.path": "/v1/graph/invoke", "http.route": "/v1/graph/invoke",
		"server.address": "127.0.0.1", "http.response.status_code": "200", "user_agent.original": "refund-bot/1.0",
		"network.protocol.version": "1.1", "network.peer.address": "192.0.2.1",
		"http.request.body.size": strconv.Itoa(len(body)),
	} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if n, _ := strconv.Atoi(got["http.response.body.size"]); n <= 0 {
		t.Errorf("http.response.body.size = %q, want the answer's size", got["http.response.body.size"])
	}
	if v, ok := got["client.address"]; ok {
		t.Errorf("client.address = %q: without a proxy's header the client is the peer, network.peer.address", v)
	}
}

// startSampler records the attributes each span starts with, as a sampler
// sees them, and samples every span.
type startSampler struct {
	mu    sync.Mutex
	attrs map[string]map[string]string // by span name
}

func (s *startSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]string{}
	for _, a := range p.Attributes {
		m[string(a.Key)] = a.Value.Emit()
	}
	s.attrs[p.Name] = m
	return sdktrace.AlwaysSample().ShouldSample(p)
}

func (*startSampler) Description() string { return "startSampler" }

func TestASamplerSeesTheRequestAttributesHTTPConventionsListForSampling(t *testing.T) {
	sampler := &startSampler{attrs: map[string]map[string]string{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler))
	defer tp.Shutdown(context.Background())
	srv := tracedServer(t, tp)
	body := `{"graph":"refund","input":{"amount":150},"config":{"thread_id":"t"}}`
	if code := serve(srv, "/v1/graph/invoke", body, map[string]string{"User-Agent": "refund-bot/1.0", "X-Forwarded-For": "203.0.113.7"}); code != http.StatusOK {
		t.Fatal(code)
	}
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	got := sampler.attrs["POST"] // named for its method until routed
	for k, v := range map[string]string{
		"http.request.method": "POST", "url.scheme": "http", "url.path": "/v1/graph/invoke",
		"server.address": "127.0.0.1", "user_agent.original": "refund-bot/1.0", "client.address": "203.0.113.7",
	} {
		if got[k] != v {
			t.Errorf("the sampler saw %s = %q, want %q", k, got[k], v)
		}
	}
}

func TestARequestsSpanNamesTheClientBehindAProxy(t *testing.T) {
	srv, exp := recordingServer(t)
	body := `{"graph":"refund","input":{"amount":150},"config":{"thread_id":"t"}}`
	if code := serve(srv, "/v1/graph/invoke", body, map[string]string{"X-Forwarded-For": "203.0.113.7, 198.51.100.2"}); code != http.StatusOK {
		t.Fatal(code)
	}
	got := attrsOf(requestSpan(t, exp))
	if got["client.address"] != "203.0.113.7" || got["network.peer.address"] != "192.0.2.1" {
		t.Fatalf("want the first forwarded address as the client and the proxy as the peer, got client %q peer %q", got["client.address"], got["network.peer.address"])
	}
}

func TestARequestOfAnUnknownMethodIsTracedAsOtherWithItsOriginalMethod(t *testing.T) {
	srv, exp := recordingServer(t)
	req := httptest.NewRequest("BREW", "/v1/graphs", nil)
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	span := requestSpan(t, exp)
	got := attrsOf(span)
	if got["http.request.method"] != "_OTHER" || got["http.request.method_original"] != "BREW" || !strings.HasPrefix(span.Name, "HTTP") {
		t.Fatalf("want _OTHER and the original method, named HTTP: %q %v", span.Name, got)
	}
	if got["http.response.status_code"] != strconv.Itoa(w.Code) {
		t.Fatalf("the span should carry the answer's status %d: %v", w.Code, got)
	}
}

func TestAStreamFlushesThroughTheRequestsSpan(t *testing.T) {
	srv, exp := recordingServer(t)
	req := httptest.NewRequest(http.MethodPost, "/v1/graph/stream", strings.NewReader(`{"graph":"refund","input":{"amount":150},"config":{"thread_id":"s"}}`))
	req.Host = "127.0.0.1"
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	if w.Code != http.StatusOK || !w.Flushed || !strings.Contains(w.Body.String(), "interrupt") {
		t.Fatalf("the stream should flush its events to the end: %d flushed=%v %s", w.Code, w.Flushed, w.Body)
	}
	if got := attrsOf(requestSpan(t, exp)); got["http.route"] != "/v1/graph/stream" {
		t.Fatalf("want the stream's route on its span: %v", got)
	}
}
