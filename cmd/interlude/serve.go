package main

import (
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/crashpoint"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/server/langgraph"
	"github.com/interludehq/interlude/server/mcpserver"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/postgres"
	"github.com/interludehq/interlude/store/sqlite"
	"github.com/interludehq/interlude/store/storemetrics"
)

var serveCommand = &command{
	name:    "serve",
	args:    "[--addr 127.0.0.1:8000] [--db interlude.db | --postgres DSN] [--tokens FILE] [--tls-cert FILE --tls-key FILE] [--body-limit N] [--webhook URL --webhook-secret whsec_... | --notify FILE]",
	summary: "serve the HTTP API over the built-in graphs, keeping threads in SQLite or Postgres",
	about: `The built-in graphs are refund, two-step, parallel, gated, support-agent,
nested (an approval subgraph inside a workflow) and team-agent (a supervisor whose
billing tool is an agent); the agents run on the scripted model. Without --tokens the API is open, so only loopback addresses are
allowed. The tokens file holds lines of name:token:roles (roles among run,
approve, admin, comma-separated) or a JSON list of {"name", "token", "roles"};
it must be readable by its owner only (chmod 600). With --tls-cert and --tls-key
the server answers HTTPS; on an address other machines can reach without them,
it warns that tokens travel in clear text (a TLS-terminating proxy in front is
a fine answer too).

MCP clients reach the same graphs at /mcp (streamable HTTP), with the same
tokens and roles: each graph is a tool, and a question a run asks is put to a
client that declared elicitation, or left waiting and answered through the
tools pending_questions and answer_question.

SIGINT or SIGTERM stops the server gracefully: it stops accepting requests and
waits for the running ones, for at most --shutdown-timeout; then it closes the
connections left and cancels the runs still going, which the server finishes
from their last checkpoint when it starts again. The other timeouts bound how
long a client may take to send a request or read an answer (a run's own time is
not counted), so that a stalled client holds no connection for long.

Memory is bounded by bytes: --cache-bytes of threads' states kept between runs
(shared by the graphs) and --event-buffer-bytes of recent events kept for
listeners that reconnect with Last-Event-ID.

Threads live in the SQLite file --db unless --postgres (or INTERLUDE_POSTGRES)
gives a Postgres connection string. Any number of replicas may serve one Postgres
database behind a load balancer, with no sticky sessions: each run holds its
thread's lease (renewed every third of --lease-ttl), and the live events of every
replica's runs reach the event listeners of all of them through the database. If
a replica dies mid-run, its threads are taken over once their leases expire: a
thread whose pause was committed still waits for its answers, and one whose run
had committed nothing yet reads as failed (its event listeners are told so) until
a continue runs it from its last committed step. A run that had committed answers
or a step with more left to do, and died or was stopped with the server (with
either store), is finished by the server itself from its last committed step: at
start, and every second once the dead run's lease has expired.

Tracing follows OpenTelemetry's standard variables: with
OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, spans of
requests, runs, steps, nodes, model and tool calls and store appends go by OTLP
over HTTP to it, named by OTEL_SERVICE_NAME (default interlude) and sampled as
OTEL_TRACES_SAMPLER says; a request's traceparent header continues its trace.
OTEL_TRACES_EXPORTER=memory keeps the spans in memory instead, sending nothing
(to measure what tracing costs). Without them nothing is traced.

With --webhook (and its --webhook-secret) or --notify, every question raised,
answered, rejected, cancelled or expired, and every failed thread, is written to
the store's outbox in the same transaction as the change, and delivered from
there at least once, signed as the Standard Webhooks specification says: a
server killed at any moment delivers what it committed when it starts again,
and with Postgres one replica delivers each. Failed deliveries are tried again
with growing pauses, then listed by "interlude notifications --failed".
With --slack-channel (or "slack" in the --notify file), questions are posted
to a Slack channel with Approve and Reject buttons, whose clicks the Slack app
sends to /v1/slack/interactions, answered as the Interlude user each Slack user
is mapped to (--slack-user U...=NAME), and updated when answered or expired.
A --notify file may also list email destinations (SMTP), whose approval mails
carry one-click Approve and Reject links served under /mail/, and escalation
policies for questions left unanswered (see package notify's Config).

Unless GOGC is set, the server runs its garbage collector less often than Go's
default (as GOGC=400 would): its live heap is small, and this saves CPU.`,
	maxArgs: 0,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		addr := fs.String("addr", "127.0.0.1:8000", "the `address` to listen on")
		db := fs.String("db", "interlude.db", "the SQLite `file` that keeps the threads")
		pgDSN := fs.String("postgres", "", "keep the threads in the Postgres database at `DSN` (default $INTERLUDE_POSTGRES) instead of SQLite")
		pgSchema := fs.String("postgres-schema", postgres.DefaultSchema, "the Postgres `schema` that holds the tables, created if missing")
		leaseTTL := fs.Duration("lease-ttl", 30*time.Second, "with Postgres, how long a run's hold on its thread outlives its replica: a thread whose replica died can be continued after this `duration`")
		durability := fs.String("durability", "async", "which commits wait for the disk: async (those someone is told about: a run's result, a pause, an accepted answer), sync (every step) or exit (only a run's end)")
		tokensFile := fs.String("tokens", "", "require the bearer tokens listed in `FILE`")
		tlsCert := fs.String("tls-cert", "", "serve HTTPS with the PEM certificate (chain) in `FILE`; needs --tls-key")
		tlsKey := fs.String("tls-key", "", "the PEM private key of --tls-cert, in `FILE`")
		bodyLimit := fs.Int64("body-limit", 0, "refuse request bodies over `N` bytes (0: the server's default, 1 MiB)")
		logFormat := fs.String("log-format", "text", "log `format`: text or json")
		logLevel := fs.String("log-level", "info", "log `level`: debug (every request), info, warn (refused requests) or error")
		var nf notifyFlags
		fs.StringVar(&nf.webhook, "webhook", "", "send every notification (a question raised, answered, rejected, cancelled or expired; a thread failed) to the Standard Webhooks endpoint at `URL`")
		fs.StringVar(&nf.secret, "webhook-secret", "", "the endpoint's signing `secret` (whsec_ and base64; default $INTERLUDE_WEBHOOK_SECRET)")
		fs.StringVar(&nf.file, "notify", "", "route notifications to the webhooks, the Slack channel and the email recipients listed in the JSON `FILE` (by graph, reason and type)")
		nf.slack.define(fs)
		fs.StringVar(&nf.inbox, "public-url", "", "the `URL` people reach the server at, for links to the inbox in notifications (default: the listen address)")
		memLimit := fs.Int64("memory-limit", 512<<20, "a soft limit on the process's memory in `bytes`, past which the garbage collector works harder and returns memory to the system (0: none; $GOMEMLIMIT wins when set)")
		var lim limits
		fs.DurationVar(&lim.timeouts.ReadHeader, "read-header-timeout", 10*time.Second, "how long a client may take to send a request's headers (0: no limit)")
		fs.DurationVar(&lim.timeouts.Read, "read-timeout", 30*time.Second, "how long a client may take to send a request's body (0: no limit)")
		fs.DurationVar(&lim.timeouts.Write, "write-timeout", 30*time.Second, "how long a client may take to read an answer once it is ready, or each event of a stream (0: no limit)")
		fs.DurationVar(&lim.timeouts.Idle, "idle-timeout", 2*time.Minute, "how long a kept-alive connection may wait for its next request (0: no limit)")
		fs.DurationVar(&lim.timeouts.Shutdown, "shutdown-timeout", 15*time.Second, "how long SIGINT or SIGTERM waits for the running requests before cutting them off (0: no limit)")
		fs.Int64Var(&lim.cacheBytes, "cache-bytes", graph.DefaultCacheBytes, "keep up to `N` bytes of threads' states in memory between runs, shared equally by the graphs (0: none)")
		fs.Int64Var(&lim.eventBytes, "event-buffer-bytes", host.DefaultHubBytes, "keep up to `N` bytes of recent events for listeners that reconnect")
		fs.BoolVar(&lim.langgraph, "langgraph", true, "also serve the LangGraph Platform API (threads, runs, assistants) at the root, for LangGraph's SDKs and UIs")
		fs.Var((*originList)(&lim.inboxFmt), "langgraph-agent-inbox", "show the tool approvals of `GRAPH` to LangGraph clients in agent-inbox's format instead of LangChain's; repeat for more")
		fs.Var((*originList)(&lim.cors), "cors-origin", "let web pages from `ORIGIN` (such as http://localhost:3000) call the API from a browser; repeat for more")
		return func([]string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
				return usagef("unknown log level %q: use debug, info, warn or error", *logLevel)
			}
			if *memLimit < 0 {
				return usagef("--memory-limit must not be negative")
			}
			lim.memory = *memLimit
			hopts := &slog.HandlerOptions{Level: level}
			var h slog.Handler
			switch *logFormat {
			case "text":
				h = slog.NewTextHandler(e.stderr, hopts)
			case "json":
				h = slog.NewJSONHandler(e.stderr, hopts)
			default:
				return usagef("unknown log format %q: use text or json", *logFormat)
			}
			if *bodyLimit < 0 {
				return usagef("--body-limit must not be negative")
			}
			if err := lim.check(); err != nil {
				return err
			}
			if *leaseTTL < 100*time.Millisecond {
				return usagef("--lease-ttl must be at least 100ms")
			}
			dur, err := graph.ParseDurability(*durability)
			if err != nil {
				return usagef("--%v", err)
			}
			cfg := storeConfig{sqlite: *db, postgres: *pgDSN, schema: *pgSchema, leaseTTL: *leaseTTL, durability: dur}
			if cfg.postgres == "" {
				cfg.postgres = e.getenv("INTERLUDE_POSTGRES")
			}
			if cfg.postgres != "" && flagGiven(fs, "db") {
				return usagef("give --db or --postgres, not both")
			}
			if cfg.postgres == "" && flagGiven(fs, "postgres-schema") {
				return usagef("--postgres-schema needs --postgres")
			}
			log := slog.New(h)
			var tokens []auth.Token
			if *tokensFile != "" {
				var err error
				if tokens, err = auth.LoadTokens(*tokensFile); err != nil {
					return err
				}
				if len(tokens) == 0 {
					return usagef("the tokens file %s has no tokens", *tokensFile)
				}
			}
			if err := server.CheckListenAddr(*addr, len(tokens) > 0); err != nil {
				return listenRefused(*addr, err)
			}
			tlsCfg, err := tlsConfig(*tlsCert, *tlsKey)
			if err != nil {
				return err
			}
			cfg.tls = tlsCfg
			if nf.secret == "" {
				nf.secret = e.getenv("INTERLUDE_WEBHOOK_SECRET")
			}
			nf.slack.token, nf.slack.secret = e.getenv("INTERLUDE_SLACK_BOT_TOKEN"), e.getenv("INTERLUDE_SLACK_SIGNING_SECRET")
			if cfg.notify, err = nf.config(*addr, tlsCfg != nil); err != nil {
				return err
			}
			if err := checkHosted(lim.inboxFmt); err != nil {
				return err
			}
			return serve(e, log, *addr, cfg, tokens, *bodyLimit, lim)
		}
	},
}

// storeConfig says where serve keeps the threads.
type storeConfig struct {
	sqlite           string           // the SQLite file, unless postgres is set
	postgres, schema string           // the Postgres DSN and schema
	leaseTTL         time.Duration    // thread leases, with Postgres
	durability       graph.Durability // which commits wait for the disk
	tls              *tls.Config      // HTTPS, when set
	notify           *notify.Config   // where notifications go, if anywhere
}

// limits bound the time clients may take and the memory serve keeps.
type limits struct {
	timeouts   server.Timeouts
	cacheBytes int64    // threads' states, for all graphs
	eventBytes int64    // recent events
	memory     int64    // the soft limit on the process's memory, 0 for none
	langgraph  bool     // serve the LangGraph Platform API too
	inboxFmt   []string // graphs whose approvals LangGraph clients see in agent-inbox's format
	cors       []string // origins browsers may call the API from
}

// originList is a repeatable flag of origins.
type originList []string

func (o *originList) String() string     { return strings.Join(*o, ",") }
func (o *originList) Set(v string) error { *o = append(*o, v); return nil }

// check refuses negative limits and turns the timeouts given as 0 (no limit)
// into the server's way of saying so.
func (l *limits) check() error {
	t := &l.timeouts
	for _, d := range []struct {
		name string
		d    *time.Duration
	}{{"read-header-timeout", &t.ReadHeader}, {"read-timeout", &t.Read}, {"write-timeout", &t.Write}, {"idle-timeout", &t.Idle}, {"shutdown-timeout", &t.Shutdown}} {
		switch {
		case *d.d < 0:
			return usagef("--%s must not be negative", d.name)
		case *d.d == 0:
			*d.d = -1
		}
	}
	if l.cacheBytes < 0 {
		return usagef("--cache-bytes must not be negative")
	}
	if l.eventBytes <= 0 {
		return usagef("--event-buffer-bytes must be positive")
	}
	return nil
}

func serve(e *env, log *slog.Logger, addr string, sc storeConfig, tokens []auth.Token, bodyLimit int64, lim limits) error {
	crashpoint.Arm(e.getenv(crashpoint.Env)) // tests only: die right after a chosen commit
	tp, err := tracingFromEnv(e.ctx, e.getenv)
	if err != nil {
		return usagef("%v", err)
	}
	if tp != nil {
		defer installTracing(tp)()
	}
	if e.getenv("GOGC") == "" {
		// A server's live heap is small and steady (paused threads live in the
		// store, not in memory), so Go's default pace of collection spends CPU
		// for little memory: let the heap grow to five times what is live.
		debug.SetGCPercent(gcPercent)
	}
	if e.getenv("GOMEMLIMIT") == "" && lim.memory > 0 {
		// With the relaxed pace above, a burst could leave the heap at five times
		// what is live; the soft limit makes the collector catch up and return
		// memory to the system before the process outgrows it.
		debug.SetMemoryLimit(lim.memory)
	}
	// Listening first, a server that cannot have its address opens no store
	// (and creates no database file).
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%s is in use by another program (another interlude serve?); stop it or choose another address with --addr", addr)
		}
		return err
	}
	defer ln.Close()
	if sc.tls != nil {
		ln = tls.NewListener(ln, sc.tls)
	}
	var (
		st    store.Store
		hub   *host.Hub
		where []any
	)
	if sc.postgres != "" {
		pg, err := postgres.Open(e.ctx, sc.postgres, postgres.WithSchema(sc.schema))
		if err != nil {
			return err
		}
		defer pg.Close()
		events, err := pg.EventLog(e.ctx, postgres.EventConfig{Logger: log})
		if err != nil {
			return err
		}
		defer events.Close() // after the server: the last runs' events are written
		st = pg
		if hub, err = server.NewEventHub(host.WithHubLog(events), host.WithHubBytes(lim.eventBytes)); err != nil {
			return err
		}
		where = []any{"store", "postgres", "schema", sc.schema, "lease_ttl", sc.leaseTTL.String()}
	} else {
		lite, err := sqlite.Open(sc.sqlite)
		if err != nil {
			return err
		}
		defer lite.Close()
		st = lite
		if hub, err = server.NewEventHub(host.WithHubBytes(lim.eventBytes)); err != nil {
			return err
		}
		where = []any{"db", sc.sqlite}
	}
	if tp != nil {
		exporter := "otlp/http"
		if strings.TrimSpace(e.getenv("OTEL_TRACES_EXPORTER")) == "memory" {
			exporter = "memory"
		}
		log.Info("tracing", "exporter", exporter)
	}
	gopts := []graph.Option{graph.WithStore(storemetrics.Instrument(st)), graph.WithEvents(hub.Publish), graph.WithListeners(hub.Listening), graph.WithLease(sc.leaseTTL, ""), graph.WithCacheBytes(lim.cacheBytes / builtinCount), graph.WithDurability(sc.durability)}
	opts := []server.Option{server.WithEventHub(hub), server.WithLogger(log), server.WithTimeouts(lim.timeouts)}
	if sc.notify != nil {
		d, err := dispatcher(st, sc.notify, log)
		if err != nil {
			return err
		}
		gopts = append(gopts, graph.WithOutbox())
		opts = append(opts, server.WithNotifier(d))
		where = append(where, "webhooks", len(sc.notify.Webhooks), "emails", len(sc.notify.Emails))
		for _, dst := range d.Destinations() {
			if sl, ok := dst.(*notify.Slack); ok {
				opts = append(opts, server.WithSlack(sl))
				where = append(where, "slack", sc.notify.Slack.Channel)
			}
		}
		if links, err := sc.notify.Links(); err != nil {
			return err
		} else if links != nil {
			opts = append(opts, server.WithMailLinks(links))
		}
	}
	gs, err := builtins(gopts)
	if err != nil {
		return err
	}
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
	if lim.langgraph {
		var lopts []langgraph.Option
		for _, g := range lim.inboxFmt {
			lopts = append(lopts, langgraph.WithInterruptFormat(g, langgraph.FormatAgentInbox))
		}
		opts = append(opts, server.WithLangGraphAPI(lopts...))
	}
	if len(lim.cors) > 0 {
		opts = append(opts, server.WithCORSOrigins(lim.cors...))
	}
	srv, err := server.New(opts...)
	if err != nil {
		return err
	}
	defer srv.Close()

	mcpOpts := []mcpserver.Option{mcpserver.WithInboxURL(inboxURL(ln.Addr(), sc.tls != nil))}
	if key := mcpKey(tokens); key != nil {
		mcpOpts = append(mcpOpts, mcpserver.WithSigningKey(key))
	}
	mcp, err := mcpserver.New(srv.Host(), mcpOpts...)
	if err != nil {
		return err
	}
	srv.Mount("/mcp", mcp.Handler())
	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Info("listening", append([]any{"addr", ln.Addr().String(), "inbox", inboxURL(ln.Addr(), sc.tls != nil), "mcp", "/mcp", "tls", sc.tls != nil, "graphs", names, "tokens", len(tokens)}, where...)...)
	warnIfCleartext(log, ln.Addr(), sc.tls != nil)
	if err := srv.Serve(ctx, ln); err != nil {
		if errors.Is(err, server.ErrInsecureListen) {
			return listenRefused(addr, err)
		}
		return err
	}
	log.Info("stopped")
	return nil
}

// mcpKey is the key that signs the MCP endpoint's requestState: derived from
// the tokens' secrets, so that a restarted server, and every replica given the
// same tokens file, accepts the retries of the others. Without tokens the
// server is reached from this machine only, and a key of its own will do.
func mcpKey(tokens []auth.Token) []byte {
	if len(tokens) == 0 {
		return nil
	}
	h := sha256.New()
	h.Write([]byte("interlude mcp requestState\x00"))
	for _, t := range tokens {
		h.Write([]byte(t.Name + "\x00" + t.Secret + "\x00"))
	}
	return h.Sum(nil)
}

// listenRefused words a refused listen address in the flags of this command
// rather than the Go API's options.
func listenRefused(addr string, err error) error {
	if errors.Is(err, server.ErrInsecureListen) {
		return usagef("refusing to listen on %s without API tokens: give --tokens FILE, or --addr 127.0.0.1:PORT", addr)
	}
	return &usageError{err.Error()}
}

// gcPercent is the garbage collector's pace in `interlude serve` unless GOGC
// sets it.
const gcPercent = 400

// builtinCount is how many graphs builtins compiles.
const builtinCount = 7

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
	nested, err := graphs.Nested(opts...)
	if err != nil {
		return nil, err
	}
	team, err := graphs.TeamAgent(nil, nil, opts...)
	if err != nil {
		return nil, err
	}
	return []graph.Erased{refund.Erase(), twoStep.Erase(), parallel.Erase(), gated.Erase(), support.Erase(), nested.Erase(), team.Erase()}, nil
}

// checkHosted refuses --langgraph-agent-inbox graphs that serve does not host,
// naming the ones it does.
func checkHosted(names []string) error {
	gs, err := builtins(nil)
	if err != nil {
		return err
	}
	hosted := make([]string, len(gs))
	for i, g := range gs {
		hosted[i] = g.Name()
	}
	for _, n := range names {
		if !slices.Contains(hosted, n) {
			return usagef("--langgraph-agent-inbox: the server hosts no graph %q; it hosts %s", n, strings.Join(hosted, ", "))
		}
	}
	return nil
}

// inboxURL is the web inbox's address on a listener, with a host a browser on
// this machine can open when the server listens on every address.
func inboxURL(a net.Addr, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return scheme + "://" + a.String() + "/inbox/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/inbox/"
}
