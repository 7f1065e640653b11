package options_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/model/anthropic"
	"github.com/interludehq/interlude/model/openai"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/langgraph"
	"github.com/interludehq/interlude/server/mcpserver"
	"github.com/interludehq/interlude/store/memory"
	"github.com/interludehq/interlude/store/postgres"
	"github.com/interludehq/interlude/store/sqlite"
	"github.com/jackc/pgx/v5/pgxpool"
)

type state struct {
	N int `json:"n"`
}

func compile(opts ...graph.Option) error {
	g := graph.New[state]().AddNode("a", func(ctx context.Context, s state) (state, error) { return s, nil }).AddEdge(graph.Start, "a")
	_, err := g.Compile(opts...)
	return err
}

func erased(t *testing.T) graph.Erased {
	g := graph.New[state]().AddNode("a", func(ctx context.Context, s state) (state, error) { return s, nil }).AddEdge(graph.Start, "a")
	app, err := g.Compile(graph.WithName("a"))
	if err != nil {
		t.Fatal(err)
	}
	return app.Erase()
}

func hostWith(t *testing.T, opts ...host.Option) error {
	_, err := host.New(append([]host.Option{host.WithGraph(erased(t))}, opts...)...)
	return err
}

// serverWith builds a server over one graph; a server that builds is closed.
func serverWith(t *testing.T, opts ...server.Option) error {
	srv, err := server.New(append([]server.Option{server.WithGraph(erased(t)), server.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	if err == nil {
		srv.Close()
	}
	return err
}

// TestEveryConstructorRefusesABadOptionValueNamingTheOption gives each
// constructor one option with a value it cannot take: the constructor refuses
// it with an invalid-request error that names the option, instead of ignoring
// the value, clamping it or panicking.
func TestEveryConstructorRefusesABadOptionValueNamingTheOption(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pool, err := pgxpool.New(ctx, "postgres://nobody@127.0.0.1:1/none") // connects lazily: never, here
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	m := scripted.New(scripted.Text("ok"))
	h, err := host.New(host.WithGraph(erased(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	lg := func(o langgraph.Option) error { _, err := langgraph.New(h, o); return err }
	mcp := func(o mcpserver.Option) error { _, err := mcpserver.New(h, o); return err }
	hub := func(o host.HubOption) error { _, err := host.NewHub(o); return err }
	cl := func(o client.Option) error { _, err := client.New("http://127.0.0.1:8080", o); return err }
	oai := func(o openai.Option) error { _, err := openai.New(o); return err }
	ant := func(o anthropic.Option) error { _, err := anthropic.New(o); return err }
	cases := []struct {
		option string
		build  func() error
	}{
		{"graph.WithRecursionLimit", func() error { return compile(graph.WithRecursionLimit(0)) }},
		{"graph.WithCacheBytes", func() error { return compile(graph.WithCacheBytes(-1)) }},
		{"graph.WithCacheSize", func() error { return compile(graph.WithCacheSize(-1)) }},
		{"graph.WithLease", func() error { return compile(graph.WithLease(0, "me")) }},
		{"graph.WithClock", func() error { return compile(graph.WithClock(nil)) }},
		{"graph.WithDurability", func() error { return compile(graph.WithDurability(graph.Durability(42))) }},
		{"agent.WithParallelTools", func() error { _, err := agent.New(m, nil, agent.WithParallelTools(0)); return err }},
		{"agent.WithMaxTurns", func() error { _, err := agent.New(m, nil, agent.WithMaxTurns(-1)); return err }},
		{"agent.WithToolSource", func() error { _, err := agent.New(m, nil, agent.WithToolSource(nil)); return err }},
		{"agent.BeforeToolCall", func() error { _, err := agent.New(m, nil, agent.BeforeToolCall("", nil)); return err }},
		{"agent.WithApprovalTTL", func() error {
			_, err := agent.New(m, nil, agent.RequireApproval("x", agent.WithApprovalTTL(-time.Second)))
			return err
		}},
		{"host.WithLogger", func() error { return hostWith(t, host.WithLogger(nil)) }},
		{"host.WithClock", func() error { return hostWith(t, host.WithClock(nil)) }},
		{"host.WithExpiryWatch", func() error { return hostWith(t, host.WithExpiryWatch(-time.Second)) }},
		{"host.WithRecoveryWatch", func() error { return hostWith(t, host.WithRecoveryWatch(-time.Second)) }},
		{"host.WithLeaseWatch", func() error { return hostWith(t, host.WithLeaseWatch(-time.Second)) }},
		{"notify.WithRetry", func() error { _, err := notify.New(memory.New(), nil, notify.WithRetry(notify.Retry{})); return err }},
		{"notify.WithPoll", func() error { _, err := notify.New(memory.New(), nil, notify.WithPoll(0)); return err }},
		{"notify.WithClaimTTL", func() error { _, err := notify.New(memory.New(), nil, notify.WithClaimTTL(-time.Minute)); return err }},
		{"notify.WithTimeout", func() error { _, err := notify.New(memory.New(), nil, notify.WithTimeout(0)); return err }},
		{"notify.WithInboxURL", func() error { _, err := notify.New(memory.New(), nil, notify.WithInboxURL("ftp://inbox")); return err }},
		{"notify.WithOwner", func() error { _, err := notify.New(memory.New(), nil, notify.WithOwner("")); return err }},
		{"notify.WithClock", func() error { _, err := notify.New(memory.New(), nil, notify.WithClock(nil)); return err }},
		{"notify.WithLogger", func() error { _, err := notify.New(memory.New(), nil, notify.WithLogger(nil)); return err }},
		{"sqlite.WithSynchronous", func() error {
			_, err := sqlite.Open(filepath.Join(dir, "sync.db"), sqlite.WithSynchronous("OFF"))
			return err
		}},
		{"sqlite.WithBusyTimeout", func() error {
			_, err := sqlite.Open(filepath.Join(dir, "busy.db"), sqlite.WithBusyTimeout(-time.Second))
			return err
		}},
		{"sqlite.WithReadConns", func() error {
			_, err := sqlite.Open(filepath.Join(dir, "conns.db"), sqlite.WithReadConns(0))
			return err
		}},
		{"postgres.WithSchema", func() error { _, err := postgres.New(ctx, pool, postgres.WithSchema("")); return err }},
		{"postgres.WithBatchWait", func() error {
			_, err := postgres.New(ctx, pool, postgres.WithBatchWait(-time.Millisecond))
			return err
		}},
		{"server.WithHost", func() error { return serverWith(t, server.WithHost(nil)) }},
		{"server.WithGraph", func() error { return serverWith(t, server.WithGraph(nil)) }},
		{"server.WithBodyLimit", func() error { return serverWith(t, server.WithBodyLimit(0)) }},
		{"server.WithLogger", func() error { return serverWith(t, server.WithLogger(nil)) }},
		{"server.WithLeaseWatch", func() error { return serverWith(t, server.WithLeaseWatch(-time.Second)) }},
		{"server.WithExpiryWatch", func() error { return serverWith(t, server.WithExpiryWatch(-time.Second)) }},
		{"server.WithRecoveryWatch", func() error { return serverWith(t, server.WithRecoveryWatch(-time.Second)) }},
		{"server.WithClock", func() error { return serverWith(t, server.WithClock(nil)) }},
		{"server.WithStreamBuffer", func() error { return serverWith(t, server.WithStreamBuffer(-1)) }},
		{"server.WithCORSOrigins", func() error { return serverWith(t, server.WithCORSOrigins("localhost:3000")) }},
		{"langgraph.WithInterruptFormat", func() error { return lg(langgraph.WithInterruptFormat("a", "xml")) }},
		{"langgraph.WithLogger", func() error { return lg(langgraph.WithLogger(nil)) }},
		{"langgraph.WithBodyLimit", func() error { return lg(langgraph.WithBodyLimit(0)) }},
		{"langgraph.WithHeartbeat", func() error { return lg(langgraph.WithHeartbeat(-time.Second)) }},
		{"langgraph.WithWriteTimeout", func() error { return lg(langgraph.WithWriteTimeout(0)) }},
		{"mcpserver.WithSigningKey", func() error { return mcp(mcpserver.WithSigningKey([]byte("short"))) }},
		{"mcpserver.WithInboxURL", func() error { return mcp(mcpserver.WithInboxURL("inbox")) }},
		{"host.WithHubBuffer", func() error { return hub(host.WithHubBuffer(0)) }},
		{"host.WithHubThreads", func() error { return hub(host.WithHubThreads(-1)) }},
		{"host.WithHubBytes", func() error { return hub(host.WithHubBytes(0)) }},
		{"host.WithHubEncoding", func() error { return hub(host.WithHubEncoding(nil)) }},
		{"host.WithHubLog", func() error { return hub(host.WithHubLog(nil)) }},
		{"client.WithToken", func() error { return cl(client.WithToken("")) }},
		{"client.WithHTTPClient", func() error { return cl(client.WithHTTPClient(nil)) }},
		{"openai.WithBaseURL", func() error { return oai(openai.WithBaseURL("localhost:11434")) }},
		{"openai.WithAPIKey", func() error { return oai(openai.WithAPIKey("")) }},
		{"openai.WithModel", func() error { return oai(openai.WithModel("")) }},
		{"openai.WithHTTPClient", func() error { return oai(openai.WithHTTPClient(nil)) }},
		{"openai.WithMaxRetries", func() error { return oai(openai.WithMaxRetries(-1)) }},
		{"anthropic.WithBaseURL", func() error { return ant(anthropic.WithBaseURL("")) }},
		{"anthropic.WithAPIKey", func() error { return ant(anthropic.WithAPIKey("")) }},
		{"anthropic.WithModel", func() error { return ant(anthropic.WithModel("")) }},
		{"anthropic.WithMaxTokens", func() error { return ant(anthropic.WithMaxTokens(0)) }},
		{"anthropic.WithHTTPClient", func() error { return ant(anthropic.WithHTTPClient(nil)) }},
		{"anthropic.WithMaxRetries", func() error { return ant(anthropic.WithMaxRetries(-1)) }},
	}
	for _, c := range cases {
		t.Run(c.option, func(t *testing.T) {
			err := c.build()
			if !errors.Is(err, interlude.ErrInvalidRequest) || !strings.Contains(err.Error(), c.option+": ") {
				t.Fatalf("got %v, want an invalid request naming %s", err, c.option)
			}
		})
	}
	// Nothing was made: a store refused its options before creating its file.
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Fatalf("refused opens left %d files in %s", len(files), dir)
	}
}

// TestGoodOptionValuesAreTaken checks that the limits the refusals enforce
// are the edges: the smallest good values build.
func TestGoodOptionValuesAreTaken(t *testing.T) {
	if err := compile(graph.WithRecursionLimit(1), graph.WithCacheBytes(0), graph.WithCacheSize(0), graph.WithLease(time.Second, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.New(scripted.New(), nil, agent.WithParallelTools(1), agent.WithMaxTurns(0)); err != nil {
		t.Fatal(err)
	}
	if err := hostWith(t, host.WithExpiryWatch(0), host.WithRecoveryWatch(0), host.WithLeaseWatch(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := notify.New(memory.New(), nil, notify.WithInboxURL(""), notify.WithPoll(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := serverWith(t, server.WithBodyLimit(1), server.WithStreamBuffer(1), server.WithLeaseWatch(0), server.WithExpiryWatch(0),
		server.WithRecoveryWatch(0), server.WithCORSOrigins("http://localhost:3000"),
		server.WithLangGraphAPI(langgraph.WithBodyLimit(1), langgraph.WithHeartbeat(1), langgraph.WithInterruptFormat("a", langgraph.FormatAgentInbox))); err != nil {
		t.Fatal(err)
	}
	h, err := host.New(host.WithGraph(erased(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := mcpserver.New(h, mcpserver.WithSigningKey(make([]byte, 16)), mcpserver.WithInboxURL("/inbox/")); err != nil {
		t.Fatal(err)
	}
	hub, err := host.NewHub(host.WithHubBuffer(1), host.WithHubThreads(1), host.WithHubBytes(1))
	if err != nil {
		t.Fatal(err)
	}
	hub.Close()
	if _, err := client.New("https://interlude.example.com/", client.WithToken("s")); err != nil {
		t.Fatal(err)
	}
	if _, err := openai.New(openai.WithBaseURL("http://localhost:11434/v1"), openai.WithMaxRetries(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := anthropic.New(anthropic.WithMaxTokens(1), anthropic.WithMaxRetries(0)); err != nil {
		t.Fatal(err)
	}
}

func TestHTTPURLTakesAbsoluteHTTPURLsWithAHostOnly(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"https://interlude.example.com/inbox/", true},
		{"http://localhost:11434/v1", true},
		{"http://127.0.0.1:8080", true},
		{"https:/inbox", false},
		{"http:///inbox", false},
		{"https:", false},
		{"ftp://inbox.example.com/", false},
		{"localhost:11434", false},
		{"/inbox/", false},
		{"", false},
		{"http://[::1", false},
	} {
		if u, ok := options.HTTPURL(tc.in); ok != tc.ok || (ok && u.Host == "") {
			t.Errorf("HTTPURL(%q) = %v, %v; want ok %v", tc.in, u, ok, tc.ok)
		}
	}
}

func TestAnInboxURLWithoutAHostIsRefused(t *testing.T) {
	_, err := notify.New(memory.New(), nil, notify.WithInboxURL("https:/inbox"))
	if !errors.Is(err, interlude.ErrInvalidRequest) || !strings.Contains(err.Error(), "notify.WithInboxURL: ") {
		t.Fatalf("got %v, want the inbox URL refused", err)
	}
}
