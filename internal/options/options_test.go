package options_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/notify"
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

func hostWith(t *testing.T, opts ...host.Option) error {
	g := graph.New[state]().AddNode("a", func(ctx context.Context, s state) (state, error) { return s, nil }).AddEdge(graph.Start, "a")
	app, err := g.Compile(graph.WithName("a"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = host.New(append([]host.Option{host.WithGraph(app.Erase())}, opts...)...)
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
}
