package server_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
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
	hub := server.NewEventHub()
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

	c := client.New("http://" + ln.Addr().String())
	sub, err := c.Subscribe(context.Background(), "slow", "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	invoked := make(chan *client.RunResult, 1)
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

func TestMetricsCountRunsPausesResolutionsRequestsAndStoreLatency(t *testing.T) {
	e := newEnv(t, setup{wrap: server.InstrumentStore})
	e.start("refund", "m", `{"amount":1}`)
	expect(t, e.post("/v1/threads/m/resume", `{"response":{"approved":true}}`), 200, "")
	expect(t, e.post("/v1/threads/m/resume", `{"response":{"approved":true}}`), 409, "not_interrupted")
	a := e.do(http.MethodGet, "/metrics", "", "")
	expect(t, a, 200, "")
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("Content-Type %q", ct)
	}
	body := string(a.body)
	for _, want := range []string{
		`interlude_runs_total{graph="refund",outcome="interrupted"} 1`,
		`interlude_runs_total{graph="refund",outcome="completed"} 1`,
		`interlude_runs_total{graph="refund",outcome="refused"} 1`,
		`interlude_pauses_total{graph="refund"} 1`,
		`interlude_resolutions_total{graph="refund",kind="resolved"} 1`,
		`interlude_http_requests_total{route="/v1/threads/{id}/resume",method="POST",code="409"} 1`,
		`interlude_http_request_duration_seconds_bucket{route="/v1/graph/invoke",le="+Inf"} 1`,
		`interlude_run_duration_seconds_count{graph="refund"} 2`,
		`# TYPE interlude_store_operation_duration_seconds histogram`,
		`interlude_store_operation_duration_seconds_count{op="append"} 3`,
		`interlude_event_listeners 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// Every sample line is name{labels} value.
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if f := strings.Fields(line); len(f) != 2 || !strings.HasPrefix(f[0], "interlude_") {
			t.Fatalf("malformed sample %q", line)
		}
	}
	off := newEnv(t, setup{opts: []server.Option{server.WithMetrics(false)}})
	expect(t, off.do(http.MethodGet, "/metrics", "", ""), 404, "not_found")
}

func TestAnInstrumentedStoreKeepsTheCapabilitiesOfTheStoreItWraps(t *testing.T) {
	for _, c := range []struct {
		name string
		wrap func(store.Store) store.Store
	}{
		{"instrumented", server.InstrumentStore},
		{"instrumented twice", func(s store.Store) store.Store { return server.InstrumentStore(server.InstrumentStore(s)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, setup{wrap: c.wrap})
			if _, ok := store.As[store.ExpiryIndex](e.st); !ok {
				t.Error("store.As finds no ExpiryIndex through the instrumentation")
			}
			if _, ok := store.As[store.RecoveryIndex](e.st); !ok {
				t.Error("store.As finds no RecoveryIndex through the instrumentation")
			}
			if _, err := e.srv.ExpireQuestions(context.Background()); err != nil {
				t.Errorf("ExpireQuestions on an instrumented store: %v", err)
			}
			if _, err := e.srv.RecoverThreads(context.Background()); err != nil {
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
	e := newEnv(t, setup{tokens: []server.Token{admin}})
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
