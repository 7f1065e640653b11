package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store/sqlite"
)

var serveCommand = &command{
	name:    "serve",
	args:    "[--addr 127.0.0.1:8000] [--db interlude.db] [--tokens FILE] [--body-limit N]",
	summary: "serve the HTTP API over the built-in graphs, keeping threads in a SQLite file",
	about: `The built-in graphs are refund, two-step, parallel, gated and support-agent (on the
scripted model). Without --tokens the API is open, so only loopback addresses are
allowed. The tokens file holds lines of name:token:roles (roles among run,
approve, admin, comma-separated) or a JSON list of {"name", "token", "roles"}.
SIGINT or SIGTERM stops the server gracefully: it stops accepting requests and
waits for the running ones.`,
	maxArgs: 0,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		addr := fs.String("addr", "127.0.0.1:8000", "the `address` to listen on")
		db := fs.String("db", "interlude.db", "the SQLite `file` that keeps the threads")
		tokensFile := fs.String("tokens", "", "require the bearer tokens listed in `FILE`")
		bodyLimit := fs.Int64("body-limit", 0, "refuse request bodies over `N` bytes (0: the server's default, 1 MiB)")
		logFormat := fs.String("log-format", "text", "log `format`: text or json")
		return func([]string) error {
			var h slog.Handler
			switch *logFormat {
			case "text":
				h = slog.NewTextHandler(e.stderr, nil)
			case "json":
				h = slog.NewJSONHandler(e.stderr, nil)
			default:
				return usageOf(fs, fmt.Sprintf("unknown log format %q", *logFormat))
			}
			if *bodyLimit < 0 {
				return usageOf(fs, "--body-limit must not be negative")
			}
			log := slog.New(h)
			var tokens []server.Token
			if *tokensFile != "" {
				var err error
				if tokens, err = server.LoadTokens(*tokensFile); err != nil {
					return err
				}
				if len(tokens) == 0 {
					return usagef("the tokens file %s has no tokens", *tokensFile)
				}
			}
			if err := server.CheckListenAddr(*addr, len(tokens) > 0); err != nil {
				return &usageError{err.Error()}
			}
			return serve(e, log, *addr, *db, tokens, *bodyLimit)
		}
	},
}

func serve(e *env, log *slog.Logger, addr, db string, tokens []server.Token, bodyLimit int64) error {
	st, err := sqlite.Open(db)
	if err != nil {
		return err
	}
	defer st.Close()
	hub := server.NewEventHub()
	gopts := []graph.Option{graph.WithStore(server.InstrumentStore(st)), graph.WithEvents(hub.Publish)}
	gs, err := builtins(gopts)
	if err != nil {
		return err
	}
	opts := []server.Option{server.WithEventHub(hub), server.WithLogger(log)}
	names := make([]string, len(gs))
	for i, g := range gs {
		opts = append(opts, server.WithGraph(g))
		names[i] = g.Name()
	}
	if len(tokens) > 0 {
		opts = append(opts, server.WithTokens(tokens))
	}
	if bodyLimit > 0 {
		opts = append(opts, server.WithBodyLimit(bodyLimit))
	}
	srv, err := server.New(opts...)
	if err != nil {
		return err
	}
	defer srv.Close()

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Info("listening", "addr", ln.Addr().String(), "db", db, "graphs", names, "tokens", len(tokens))
	if err := srv.Serve(ctx, ln); err != nil {
		if errors.Is(err, server.ErrInsecureListen) {
			return &usageError{err.Error()}
		}
		return err
	}
	log.Info("stopped")
	return nil
}

// builtins compiles the built-in graphs with opts.
func builtins(opts []graph.Option) ([]graph.Erased, error) {
	refund, err := graphs.Refund(opts...)
	if err != nil {
		return nil, err
	}
	twoStep, err := graphs.TwoStep(opts...)
	if err != nil {
		return nil, err
	}
	parallel, err := graphs.Parallel(opts...)
	if err != nil {
		return nil, err
	}
	gated, err := graphs.Gated(opts...)
	if err != nil {
		return nil, err
	}
	support, err := graphs.SupportAgent(nil, opts...)
	if err != nil {
		return nil, err
	}
	return []graph.Erased{refund.Erase(), twoStep.Erase(), parallel.Erase(), gated.Erase(), support.Erase()}, nil
}
