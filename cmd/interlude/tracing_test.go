package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/interludehq/interlude/internal/spanexport"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/cputime"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store/sqlite"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP trace receiver: it decodes each export request
// and keeps its spans, with the service that sent them.
type receiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	service string
	span    *tracepb.Span
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		var export coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &export)
		}
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
			t.Errorf("the receiver got %s %s (%s): %v", req.Method, req.URL.Path, req.Header.Get("Content-Type"), err)
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range export.ResourceSpans {
			service := stringAttr(rs.GetResource().GetAttributes(), "service.name")
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					r.spans = append(r.spans, receivedSpan{service, s})
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

// find waits (up to a deadline: the spans come from another process) for a
// span named name that match accepts.
func (r *receiver) find(t *testing.T, name string, match func(receivedSpan) bool) receivedSpan {
	t.Helper()
	var found receivedSpan
	ok := waitFor(15*time.Second, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, s := range r.spans {
			if s.span.Name == name && match(s) {
				found = s
				return true
			}
		}
		return false
	})
	if !ok {
		r.mu.Lock()
		var names []string
		for _, s := range r.spans {
			names = append(names, s.span.Name)
		}
		r.mu.Unlock()
		t.Fatalf("no span %q reached the receiver; it has %v", name, names)
	}
	return found
}

func stringAttr(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

func post(t *testing.T, url, body string, header map[string]string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", url, res.StatusCode, out)
	}
}

func TestServeExportsTheTraceOfAPauseAndOfItsAnswerAfterARestartByOTLP(t *testing.T) {
	recv := newReceiver(t)
	dir := t.TempDir()
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL, "OTEL_SERVICE_NAME=refunds", "OTEL_BSP_SCHEDULE_DELAY=50"}

	first := startServerIn(t, dir, env)
	const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	post(t, first.url+"/v1/graph/invoke", `{"graph":"refund","input":{"amount":150},"config":{"thread_id":"order-42"}}`,
		map[string]string{"traceparent": "00-" + callerTrace + "-00f067aa0ba902b7-01"})
	inCallerTrace := func(s receivedSpan) bool { return hex.EncodeToString(s.span.TraceId) == callerTrace }
	request := recv.find(t, "POST /v1/graph/invoke", inCallerTrace)
	if request.service != "refunds" {
		t.Fatalf("the spans should name the service OTEL_SERVICE_NAME gives, got %q", request.service)
	}
	run := recv.find(t, "interlude.run refund", inCallerTrace)
	if !bytes.Equal(run.span.ParentSpanId, request.span.SpanId) {
		t.Fatal("the run should be a child of the request's span")
	}
	pause := recv.find(t, "interlude.node refund", inCallerTrace) // raised the question

	// The server stops (flushing its spans), starts again, and the answer comes.
	stopServer(t, first)
	second := startServerIn(t, dir, env)
	post(t, second.url+"/v1/threads/order-42/resume", `{"response":{"approved":true}}`, nil)
	answered := recv.find(t, "interlude.run refund", func(s receivedSpan) bool { return stringAttr(s.span.Attributes, "interlude.command") == "answer" })
	if bytes.Equal(answered.span.TraceId, pause.span.TraceId) || len(answered.span.ParentSpanId) != 0 {
		t.Fatal("the answer's run should start a trace of its own")
	}
	var linked bool
	for _, l := range answered.span.Links {
		if bytes.Equal(l.TraceId, pause.span.TraceId) && bytes.Equal(l.SpanId, pause.span.SpanId) {
			linked = stringAttr(l.Attributes, "interlude.answer.by") == "alice" && stringAttr(l.Attributes, "interlude.answer.decision") == "resolved"
		}
	}
	if !linked {
		t.Fatalf("the answer's run should link the pause with who answered and how: %v", answered.span.Links)
	}
	recv.find(t, "POST /v1/threads/{id}/resume", func(s receivedSpan) bool {
		for _, l := range answered.span.Links {
			if bytes.Equal(l.SpanId, s.span.SpanId) {
				return true
			}
		}
		return false
	})
}

func TestTracingIsOffWithoutOTELVariables(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"OTEL_SERVICE_NAME": "refunds"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"},
	} {
		tp, err := tracingFromEnv(context.Background(), func(k string) string { return env[k] })
		if tp != nil || err != nil {
			t.Fatalf("%v: tracing should be off, got %v %v", env, tp, err)
		}
	}
}

func TestUnsupportedOTELSettingsAreRefusedWithWhatToUse(t *testing.T) {
	for _, env := range []map[string]string{
		{"OTEL_TRACES_EXPORTER": "zipkin"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_SAMPLER": "sometimes"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"},
	} {
		_, err := tracingFromEnv(context.Background(), func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), "OTEL_") {
			t.Fatalf("%v: want a refusal naming the variable, got %v", env, err)
		}
	}
}

// stopServer stops s with SIGTERM and waits for it to exit.
func stopServer(t *testing.T, s *liveServer) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("interlude serve did not stop on SIGTERM\n%s", s.stderr.String())
	}
}

// BenchmarkTracedCycleExportedByOTLP starts and answers a refund thread over
// the server's handler in process, on SQLite as `interlude serve` runs,
// untraced, then traced as `interlude serve` traces with every span sampled:
// into the in-memory exporter (OTEL_TRACES_EXPORTER=memory, the cost of tracing
// alone) and exported by OTLP/HTTP to a receiver in this process that drops
// what it reads. cpu-ns/op is the process's CPU per cycle, the batch
// processor's and the exporter's included.
func BenchmarkTracedCycleExportedByOTLP(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	for _, mode := range []string{"off", "memory", "otlp"} {
		b.Run(mode, func(b *testing.B) {
			var tp trace.TracerProvider
			if mode != "off" {
				env := map[string]string{"OTEL_TRACES_SAMPLER": "always_on"}
				if mode == "memory" {
					env["OTEL_TRACES_EXPORTER"] = "memory"
				} else {
					env["OTEL_EXPORTER_OTLP_ENDPOINT"] = sink.URL
				}
				sdk, err := tracingFromEnv(context.Background(), func(k string) string { return env[k] })
				if err != nil {
					b.Fatal(err)
				}
				defer sdk.Shutdown(context.Background())
				tp = sdk
				// The propagators interlude serve installs with tracing on.
				prev := otel.GetTextMapPropagator()
				otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
				defer otel.SetTextMapPropagator(prev)
			}
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			gopts := []graph.Option{graph.WithStore(st)}
			sopts := []server.Option{server.WithLogger(slog.New(slog.DiscardHandler)), server.WithMetrics(false)}
			if tp != nil {
				gopts = append(gopts, graph.WithTracerProvider(tp))
				sopts = append(sopts, server.WithTracerProvider(tp))
			}
			g, err := graphs.Refund(gopts...)
			if err != nil {
				b.Fatal(err)
			}
			srv, err := server.New(append(sopts, server.WithGraph(g.Erase()))...)
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			send := func(path, body string) {
				req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
				req.Host = "127.0.0.1"
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", path, w.Code, w.Body)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cputime.Process().Nanoseconds()
			for i := range b.N {
				id := "t" + strconv.Itoa(i)
				send("/v1/graph/invoke", `{"graph":"refund","input":{"amount":150},"config":{"thread_id":"`+id+`"}}`)
				send("/v1/threads/"+id+"/resume", `{"response":{"approved":true}}`)
			}
			b.ReportMetric(float64(cputime.Process().Nanoseconds()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

func TestOTELTracesExporterMemoryTracesIntoTheProcess(t *testing.T) {
	env := map[string]string{"OTEL_TRACES_EXPORTER": "memory", "OTEL_TRACES_SAMPLER": "always_on"}
	tp, err := tracingFromEnv(context.Background(), func(k string) string { return env[k] })
	if err != nil || tp == nil {
		t.Fatalf("OTEL_TRACES_EXPORTER=memory should trace: %v %v", tp, err)
	}
	defer tp.Shutdown(context.Background())
	_, span := tp.Tracer("test").Start(context.Background(), "kept")
	span.End()
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestTheBatchProcessorsSettingsFollowOTELBSPVariablesWhenSet(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want spanexport.Settings
	}{
		{map[string]string{}, spanexport.DefaultSettings()},
		{map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "100"}, spanexport.Settings{QueueSize: 100, BatchSize: 100, Delay: 5 * time.Second, Timeout: 30 * time.Second}},
		{map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "10",
			"OTEL_BSP_SCHEDULE_DELAY": "250", "OTEL_BSP_EXPORT_TIMEOUT": "2000"}, spanexport.Settings{QueueSize: 100, BatchSize: 10, Delay: 250 * time.Millisecond, Timeout: 2 * time.Second}},
	} {
		got, err := batchFromEnv(func(k string) string { return c.env[k] })
		if err != nil || got != c.want {
			t.Errorf("%v: want %+v, got %+v %v", c.env, c.want, got, err)
		}
	}
	for _, v := range []string{"OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT"} {
		for _, bad := range []string{"0", "-1", "ten"} {
			if _, err := batchFromEnv(func(k string) string { return map[string]string{v: bad}[k] }); err == nil || !strings.Contains(err.Error(), v) {
				t.Errorf("%s=%s: want a refusal naming the variable, got %v", v, bad, err)
			}
		}
	}
}
