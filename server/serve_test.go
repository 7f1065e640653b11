package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
	"github.com/interludehq/interlude/store/storemetrics"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestListeningBeyondLoopbackWithoutTokensIsRefused(t *testing.T) {
	g, _ := graphs.Refund()
	srv, err := server.New(server.WithGraph(g.Erase()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:8080"} {
		if err := srv.ListenAndServe(ctx, addr); !errors.Is(err, server.ErrInsecureListen) {
			t.Errorf("ListenAndServe(%q) = %v, want ErrInsecureListen", addr, err)
		}
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(ctx, ln); !errors.Is(err, server.ErrInsecureListen) || !strings.Contains(err.Error(), "tokens") {
		t.Fatalf("Serve on %s = %v, want ErrInsecureListen", ln.Addr(), err)
	}
	if _, err := ln.Accept(); err == nil {
		t.Fatal("the refused listener was left open")
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		if err := server.CheckListenAddr(addr, false); err != nil {
			t.Errorf("CheckListenAddr(%q) = %v", addr, err)
		}
	}
	if err := server.CheckListenAddr("0.0.0.0:80", true); err != nil {
		t.Errorf("with tokens: %v", err)
	}
}

func TestServeShutsDownGracefullyLettingRunningRunsFinish(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	hub, err := server.NewEventHub()
	if err != nil {
		t.Fatal(err)
	}
	b := blockingGraph(entered, release)
	g, err := b(graph.WithStore(memory.New()), graph.WithEvents(hub.Publish))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.WithGraph(g), server.WithEventHub(hub), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	c := clienttest.New(t, "http://"+ln.Addr().String())
	sub, err := c.Subscribe(context.Background(), "slow", "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	invoked := make(chan *graph.Result[json.RawMessage], 1)
	go func() {
		res, err := c.Invoke(context.Background(), client.InvokeRequest{ThreadID: "slow", Input: map[string]any{"n": 1}})
		if err != nil {
			t.Error(err)
		}
		invoked <- res
	}()
	<-entered // the run is in its node
	stop()    // shut down
	// The live event stream is ended by the shutdown, while the run goes on.
	for _, err := range sub.Events() {
		if err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned while a run was going: %v", err)
	default:
	}
	close(release)
	res := <-invoked
	if res == nil || res.Status != "completed" {
		t.Fatalf("the running request got %+v", res)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
	if err := c.Health(context.Background()); !errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("after shutdown: %v", err)
	}
}

func TestNewRefusesGraphsItCannotHost(t *testing.T) {
	a, _ := graphs.Refund()
	b, _ := graphs.Gated() // another memory store
	if _, err := server.New(server.WithGraph(a.Erase()), server.WithGraph(b.Erase())); err == nil || !strings.Contains(err.Error(), "store") {
		t.Errorf("two stores: %v", err)
	}
	if _, err := server.New(server.WithGraph(a.Erase()), server.WithGraph(a.Erase())); err == nil {
		t.Error("two graphs with one name were accepted")
	}
	if _, err := server.New(); err == nil {
		t.Error("no graphs were accepted")
	}
	unnamed, _ := graphs.Refund(graph.WithName(""))
	if _, err := server.New(server.WithGraph(unnamed.Erase())); err == nil {
		t.Error("an unnamed graph was accepted")
	}
}

// sample finds the value of the sample of family name whose labels include
// want (a histogram's is its sample count), and reports whether there is one.
func sample(families map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := families[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// scrape reads /metrics with Prometheus' own text parser.
func scrape(t *testing.T, e *env) map[string]*dto.MetricFamily {
	t.Helper()
	a := e.do(http.MethodGet, "/metrics", "", "")
	expect(t, a, 200, "")
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("Content-Type %q", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(a.body))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v\n%s", err, a.body)
	}
	return families
}

func TestMetricsCountRunsPausesResolutionsRequestsAndStoreLatency(t *testing.T) {
	e := newEnv(t, setup{wrap: storemetrics.Instrument})
	e.start("refund", "m", `{"amount":1}`)
	expect(t, e.post("/v1/threads/m/resume", `{"response":{"approved":true}}`), 200, "")
	expect(t, e.post("/v1/threads/m/resume", `{"response":{"approved":true}}`), 409, "not_interrupted")
	families := scrape(t, e)
	for _, c := range []struct {
		name   string
		labels map[string]string
		typ    dto.MetricType
		want   float64
	}{
		{"interlude_runs_total", map[string]string{"graph": "refund", "outcome": "interrupted"}, dto.MetricType_COUNTER, 1},
		{"interlude_runs_total", map[string]string{"graph": "refund", "outcome": "completed"}, dto.MetricType_COUNTER, 1},
		{"interlude_runs_total", map[string]string{"graph": "refund", "outcome": "refused"}, dto.MetricType_COUNTER, 1},
		{"interlude_runs_total", map[string]string{"graph": "refund", "outcome": "failed"}, dto.MetricType_COUNTER, 0},
		{"interlude_pauses_total", map[string]string{"graph": "refund"}, dto.MetricType_COUNTER, 1},
		{"interlude_resolutions_total", map[string]string{"graph": "refund", "kind": "resolved"}, dto.MetricType_COUNTER, 1},
		{"interlude_http_requests_total", map[string]string{"route": "/v1/threads/{id}/resume", "method": "POST", "code": "409"}, dto.MetricType_COUNTER, 1},
		{"interlude_http_request_duration_seconds", map[string]string{"route": "/v1/graph/invoke"}, dto.MetricType_HISTOGRAM, 1},
		{"interlude_run_duration_seconds", map[string]string{"graph": "refund"}, dto.MetricType_HISTOGRAM, 2},
		{"interlude_store_operation_duration_seconds", map[string]string{"op": "append"}, dto.MetricType_HISTOGRAM, 3},
		{"interlude_store_errors_total", map[string]string{"op": "append"}, dto.MetricType_COUNTER, 0},
		{"interlude_event_listeners", nil, dto.MetricType_GAUGE, 0},
		{"interlude_event_listeners_dropped_total", nil, dto.MetricType_COUNTER, 0},
	} {
		if f := families[c.name]; f == nil || f.GetType() != c.typ {
			t.Errorf("%s is missing or not a %v", c.name, c.typ)
			continue
		}
		if got, ok := sample(families, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total"} {
		if families[name] == nil {
			t.Errorf("/metrics lacks the runtime's %s", name)
		}
	}
	off := newEnv(t, setup{opts: []server.Option{server.WithMetrics(false)}})
	expect(t, off.do(http.MethodGet, "/metrics", "", ""), 404, "not_found")
}

func TestMetricsGoToTheRegistryAProgramGives(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, setup{opts: []server.Option{server.WithMetricsRegistry(reg)}})
	e.start("refund", "m", `{"amount":1}`)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
	}
	if got, ok := sample(byName, "interlude_runs_total", map[string]string{"graph": "refund", "outcome": "interrupted"}); !ok || got != 1 {
		t.Fatalf("the program's registry has interlude_runs_total = %v (found %v), want 1", got, ok)
	}
	if byName["go_goroutines"] == nil {
		t.Fatal("the program's registry lacks the Go runtime's collector")
	}
	// /metrics serves the program's registry, with its own metrics too.
	mine := prometheus.NewCounter(prometheus.CounterOpts{Name: "program_widgets_total", Help: "Widgets."})
	reg.MustRegister(mine)
	mine.Add(3)
	if got, ok := sample(scrape(t, e), "program_widgets_total", nil); !ok || got != 3 {
		t.Fatalf("/metrics serves program_widgets_total = %v (found %v), want 3", got, ok)
	}
}

func TestAnInstrumentedStoreKeepsTheCapabilitiesOfTheStoreItWraps(t *testing.T) {
	for _, c := range []struct {
		name string
		wrap func(store.Store) store.Store
	}{
		{"instrumented", storemetrics.Instrument},
		{"instrumented twice", func(s store.Store) store.Store { return storemetrics.Instrument(storemetrics.Instrument(s)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, setup{wrap: c.wrap})
			if _, ok := store.As[store.ExpiryIndex](e.st); !ok {
				t.Error("store.As finds no ExpiryIndex through the instrumentation")
			}
			if _, ok := store.As[store.RecoveryIndex](e.st); !ok {
				t.Error("store.As finds no RecoveryIndex through the instrumentation")
			}
			if _, err := e.srv.Host().ExpireQuestions(context.Background()); err != nil {
				t.Errorf("ExpireQuestions on an instrumented store: %v", err)
			}
			if _, err := e.srv.Host().RecoverThreads(context.Background()); err != nil {
				t.Errorf("RecoverThreads on an instrumented store: %v", err)
			}
			e.start("refund", "m", `{"amount":1}`)
			metrics := string(e.do(http.MethodGet, "/metrics", "", "").body)
			if want := `interlude_store_operation_duration_seconds_count{op="append"} 1`; !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %s:\n%s", want, metrics)
			}
		})
	}
}

func TestHealthAndInboxPlaceholder(t *testing.T) {
	e := newEnv(t, setup{tokens: []auth.Token{admin}})
	expect(t, e.do(http.MethodGet, "/healthz", "", ""), 200, "")
	a := e.do(http.MethodGet, "/inbox/", "", "")
	if a.status != 200 || !strings.Contains(string(a.body), "inbox") || !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", a.status, a.body)
	}
	inbox := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("custom inbox " + r.URL.Path)) })
	e2 := newEnv(t, setup{opts: []server.Option{server.WithInbox(inbox)}})
	if a := e2.do(http.MethodGet, "/inbox/threads", "", ""); string(a.body) != "custom inbox /inbox/threads" {
		t.Fatalf("%s", a.body)
	}
}
