package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/keylock"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/internal/tracing"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
	"go.opentelemetry.io/otel/trace"
)

// Host runs a set of compiled graphs sharing one store, one run per thread at
// a time, and watches their threads (see the package doc). It is safe for
// concurrent use.
type Host struct {
	graphs    map[string]graph.Erased
	inputs    map[string]inputRules // what each graph's input schema says
	names     []string              // the names of the graphs, sorted
	store     store.Store
	opener    graph.Erased   // opens threads for runs (graph.Erased.Open): any graph can, they share the store
	threads   *keylock.Locks // one run per thread at a time in this process: the only lock a run takes
	hub       *Hub
	log       *slog.Logger
	now       func() time.Time
	onExpired func(graphName string, questions int)
	watch     watches
	tracer    trace.Tracer
	notifier  *notify.Dispatcher

	life   context.Context // ends with Close
	stop   context.CancelFunc
	mu     sync.Mutex
	closed bool
	active *sync.WaitGroup // the watches, once started
}

// watches are the periods of the watches Start runs; 0 turns one off.
type watches struct {
	expiry, recovery, leases time.Duration
}

// Option configures New.
type Option func(*config)

type config struct {
	options.Problems

	graphs    []graph.Erased
	store     store.Store
	hub       *Hub
	log       *slog.Logger
	now       func() time.Time
	onExpired func(string, int)
	watch     watches
	tp        trace.TracerProvider
	notifier  *notify.Dispatcher
}

// WithGraph hosts g under its name (graph.WithName). Repeat it for each graph.
// All graphs must keep their threads in one store (graph.WithStore).
func WithGraph(g graph.Erased) Option {
	return func(c *config) { c.graphs = append(c.graphs, g) }
}

// WithStore names the store the graphs keep their threads in; New refuses a
// graph compiled with another. Without it the host uses the graphs' store.
func WithStore(s store.Store) Option { return func(c *config) { c.store = s } }

// WithHub gives the host the hub its graphs publish their events to
// (graph.WithEvents(hub.Publish)): the host's listeners subscribe to it
// (Host.Events), and the host announces there what it learns of threads
// without a run to tell it: the end of a run that died with its process (see
// WithLeaseWatch).
func WithHub(hub *Hub) Option { return func(c *config) { c.hub = hub } }

// WithLogger sets the logger of what the watches do (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.log, l, l != nil, "host.WithLogger", "the logger is nil; leave the option out for slog.Default()")
	}
}

// WithClock sets the clock the host judges expiries by (default time.Now). The
// graphs judge them by theirs (graph.WithClock), so give both the same.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.now, now, now != nil, "host.WithClock", "the clock is nil; leave the option out for time.Now")
	}
}

// WithExpiredHook calls fn each time the host closes expired questions of a
// thread, with the thread's graph and how many it closed, so that an adapter
// can count them (package server's metrics do).
func WithExpiredHook(fn func(graphName string, questions int)) Option {
	return func(c *config) { c.onExpired = fn }
}

// WithTracerProvider makes the host trace what its watches do through tp (by
// default the global provider, otel.GetTracerProvider): a span per thread whose
// expired questions it closes ("interlude.expire") and per run it finishes
// ("interlude.recover"), parents of the runs that follow. The graphs trace
// their runs through their own (graph.WithTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// New returns a host over the given graphs. Its watches run once Start is
// called.
func New(opts ...Option) (*Host, error) {
	cfg := config{now: time.Now, watch: watches{expiry: time.Second, recovery: time.Second, leases: time.Second}}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Err(); err != nil {
		return nil, err
	}
	if len(cfg.graphs) == 0 {
		return nil, errors.New("host: no graphs; pass WithGraph(g.Erase()) for each graph to host")
	}
	h := &Host{graphs: map[string]graph.Erased{}, inputs: map[string]inputRules{}, store: cfg.store, threads: keylock.New(), hub: cfg.hub,
		log: cfg.log, now: cfg.now, onExpired: cfg.onExpired, watch: cfg.watch, tracer: tracing.Tracer(cfg.tp), notifier: cfg.notifier}
	if h.log == nil {
		h.log = slog.Default()
	}
	for _, g := range cfg.graphs {
		if g == nil {
			return nil, errors.New("host: WithGraph got a nil graph")
		}
		name := g.Name()
		switch {
		case name == "":
			return nil, errors.New("host: a graph has no name; compile it with graph.WithName")
		case h.graphs[name] != nil:
			return nil, fmt.Errorf("host: two graphs are named %q", name)
		case h.store == nil:
			h.store = g.Store()
		case !sameStore(h.store, g.Store()):
			return nil, fmt.Errorf("host: graph %q keeps its threads in another store than the host's; compile every graph with the same graph.WithStore", name)
		}
		h.graphs[name] = g
		h.inputs[name] = rulesOf(g.InputSchema())
		h.names = append(h.names, name)
	}
	slices.Sort(h.names)
	h.opener = h.graphs[h.names[0]]
	h.life, h.stop = context.WithCancel(context.Background())
	return h, nil
}

// sameStore reports whether a and b are the same store (false for stores whose
// type cannot be compared).
func sameStore(a, b store.Store) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// Graph returns the hosted graph of that name, or nil.
func (h *Host) Graph(name string) graph.Erased { return h.graphs[name] }

// Graphs returns the names of the hosted graphs, sorted.
func (h *Host) Graphs() []string { return slices.Clone(h.names) }

// Events returns the hub the host's graphs publish to (WithHub), or nil.
func (h *Host) Events() *Hub { return h.hub }

// Store returns the store the graphs share.
func (h *Host) Store() store.Store { return h.store }

// GraphFor returns the graph that runs an existing thread: the one stored with
// it. It fails with interlude.ErrNotFound for a thread that does not exist or
// whose graph this host does not host.
func (h *Host) GraphFor(ctx context.Context, threadID string) (graph.Erased, error) {
	m, err := h.store.Meta(ctx, threadID)
	if err != nil {
		if errors.Is(err, interlude.ErrNotFound) {
			return nil, noThread(threadID)
		}
		return nil, err
	}
	return h.pick(threadID, m.Graph, "", false)
}

// State returns the thread as it is now, read by its graph.
func (h *Host) State(ctx context.Context, threadID string) (*graph.Snapshot[json.RawMessage], error) {
	g, err := h.GraphFor(ctx, threadID)
	if err != nil {
		return nil, err
	}
	return g.State(ctx, threadID)
}

// History returns checkpoints of the thread, newest first (see
// graph.HistoryOptions).
func (h *Host) History(ctx context.Context, threadID string, opt graph.HistoryOptions) ([]graph.Checkpoint[json.RawMessage], error) {
	g, err := h.GraphFor(ctx, threadID)
	if err != nil {
		return nil, err
	}
	return g.History(ctx, threadID, opt)
}

// List returns a page of the threads of the store, as store.Store.List.
func (h *Host) List(ctx context.Context, q store.Query) (*store.Page, error) {
	return h.store.List(ctx, q)
}

// Invoke runs cmd on the thread and waits for the run's result, holding the
// thread for the run (see Hold). graphName names the graph of a thread that
// does not exist yet; it may be empty when the host has one graph or the
// thread exists, and must otherwise match the thread's.
func (h *Host) Invoke(ctx context.Context, threadID, graphName string, cmd graph.Command) (*graph.Result[json.RawMessage], error) {
	held, err := h.Hold(ctx, threadID, graphName, true)
	if err != nil {
		return nil, err
	}
	defer held.Release()
	return held.Invoke(ctx, cmd)
}

// Stream is Invoke with the run's events as they happen; the thread is held
// until the iteration ends.
func (h *Host) Stream(ctx context.Context, threadID, graphName string, cmd graph.Command) iter.Seq2[graph.Event, error] {
	return func(yield func(graph.Event, error) bool) {
		held, err := h.Hold(ctx, threadID, graphName, true)
		if err != nil {
			yield(graph.Event{}, err)
			return
		}
		defer held.Release()
		for ev, err := range held.Stream(ctx, cmd) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// noThread is the error for a thread that does not exist.
func noThread(threadID string) error {
	return &interlude.Error{Code: interlude.CodeNotFound, Message: fmt.Sprintf("thread %q does not exist; start it with input", threadID)}
}

// invalid is the error for a graph name that does not fit the thread.
func invalid(format string, args ...any) error {
	return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// pick returns the graph to run the thread stored with graph stored ("" for a
// thread not written yet): that one, which named (if given) must match, or for
// a new thread with create set, named or the only graph hosted.
func (h *Host) pick(threadID, stored, named string, create bool) (graph.Erased, error) {
	if named != "" && h.graphs[named] == nil {
		return nil, invalid("graph %q is not hosted here; hosted: %s", named, h.graphNames())
	}
	if stored == "" {
		switch {
		case !create:
			return nil, noThread(threadID)
		case named != "":
			return h.graphs[named], nil
		case len(h.graphs) == 1:
			return h.graphs[h.names[0]], nil
		}
		return nil, invalid("graph is required to start a thread; hosted: %s", h.graphNames())
	}
	g := h.graphs[stored]
	switch {
	case g == nil:
		return nil, &interlude.Error{Code: interlude.CodeNotFound, Message: fmt.Sprintf("thread %q runs graph %q, which is not hosted here", threadID, stored)}
	case named != "" && named != stored:
		return nil, invalid("thread %q runs graph %q, not %q; leave graph out or name %q", threadID, stored, named, stored)
	}
	return g, nil
}

// graphNames lists the hosted graphs, for messages.
func (h *Host) graphNames() string { return strings.Join(h.names, ", ") }

// Delete forgets the thread and its history, and the events the hub keeps
// for it, once no run of this process holds it. On a store shared by several
// processes it fails with an error matching interlude.ErrThreadBusy while
// another process runs the thread.
func (h *Host) Delete(ctx context.Context, threadID string) error {
	held, err := h.threads.Hold(ctx, threadID)
	if err != nil {
		return err
	}
	defer held.Unlock()
	m, err := h.store.Meta(ctx, threadID)
	if err != nil {
		if errors.Is(err, interlude.ErrNotFound) {
			return noThread(threadID)
		}
		return err
	}
	if g := h.graphs[m.Graph]; g != nil {
		err = g.Delete(ctx, threadID) // through the graph, which also drops its cached copy
	} else {
		err = h.store.Delete(ctx, threadID)
	}
	if err == nil && h.hub != nil {
		h.hub.Forget(threadID)
	}
	return err
}

// Held is a thread held for runs: this process's lock on the thread and the
// thread as opened for them (graph.Thread), with its lease on a store shared
// by several processes.
type Held struct {
	// Graph is the graph that runs the thread.
	Graph graph.Erased
	// Fresh reports that the thread is not stored yet: the run creates it.
	Fresh bool

	thread *graph.Thread
	lock   keylock.Held
	wake   func() // the notifier's, if any
	once   sync.Once
}

// Invoke runs cmd on the held thread and waits for the run's result.
func (hd *Held) Invoke(ctx context.Context, cmd graph.Command) (*graph.Result[json.RawMessage], error) {
	return hd.Graph.InvokeOn(ctx, hd.thread, cmd)
}

// Stream runs cmd on the held thread, yielding the run's events as they happen.
func (hd *Held) Stream(ctx context.Context, cmd graph.Command, opts ...graph.StreamOption) iter.Seq2[graph.Event, error] {
	return hd.Graph.StreamOn(ctx, hd.thread, cmd, opts...)
}

// Fork continues the held thread from its checkpoint, or with a namespace from
// the checkpoint of the subgraph waiting there (graph.Graph.ForkOn), and runs
// it from there.
func (hd *Held) Fork(ctx context.Context, checkpoint int64, namespace []string) (*graph.Result[json.RawMessage], error) {
	return hd.Graph.ForkOn(ctx, hd.thread, checkpoint, namespace)
}

// UpdateState edits the held thread's state (graph.Graph.UpdateStateOn),
// creating the thread if it is not stored yet.
func (hd *Held) UpdateState(ctx context.Context, u graph.StateUpdate) (*graph.Result[json.RawMessage], error) {
	return hd.Graph.UpdateStateOn(ctx, hd.thread, u)
}

// Pending returns the interrupts the held thread waits on and its breakpoint,
// if any, before a run on it (graph.Graph.PendingOn): what a command that
// answers them needs, without reading the thread again.
func (hd *Held) Pending(ctx context.Context) ([]interlude.Interruption, *graph.Breakpoint, error) {
	return hd.Graph.PendingOn(ctx, hd.thread)
}

// Release lets the thread go. Call it once the run has ended (and before its
// answer is sent, so that a caller acting on the answer finds the thread
// free); later calls do nothing.
func (hd *Held) Release() {
	if hd == nil {
		return
	}
	hd.once.Do(func() {
		hd.thread.Release(context.Background())
		hd.lock.Unlock()
		if hd.wake != nil {
			hd.wake()
		}
	})
}

// Hold returns the graph that runs the thread and holds the thread for its
// runs: named, if given, must be the thread's graph, and with create set a
// thread that does not exist yet is run by named or the only graph hosted. A
// wrong or missing graph name is an error matching interlude.ErrInvalidRequest,
// an unknown thread without create interlude.ErrNotFound. It takes this
// process's lock on the thread, the one lock a run takes, and then opens the
// thread (graph.Erased.Open): one round trip to the store that tells whose
// thread it is and reads it for the run, and on a store shared by several
// processes takes the thread's lease, failing with interlude.ErrThreadBusy if
// another process runs it.
func (h *Host) Hold(ctx context.Context, threadID, named string, create bool) (*Held, error) {
	return h.hold(ctx, threadID, named, create, true)
}

// hold is Hold; without wait it fails with interlude.ErrThreadBusy at once if
// a run of this process holds the thread.
func (h *Host) hold(ctx context.Context, threadID, named string, create, wait bool) (*Held, error) {
	if named != "" && h.graphs[named] == nil {
		_, err := h.pick(threadID, "", named, create)
		return nil, err
	}
	var lock keylock.Held
	if wait {
		var err error
		if lock, err = h.threads.Hold(ctx, threadID); err != nil {
			return nil, err
		}
	} else {
		var ok bool
		if lock, ok = h.threads.TryHold(threadID); !ok {
			return nil, &interlude.Error{Code: interlude.CodeThreadBusy,
				Message: fmt.Sprintf("thread %q is being run by this process; try again when that run ends", threadID)}
		}
	}
	opener := h.opener
	if named != "" {
		opener = h.graphs[named] // its cached copy may spare the read
	} else if len(h.names) > 1 {
		opener = h.cacher(threadID)
	}
	t, err := opener.Open(ctx, threadID)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	hd := &Held{thread: t, lock: lock, Fresh: t.Graph == "", wake: h.wake()}
	if hd.Graph, err = h.pick(threadID, t.Graph, named, create); err != nil {
		hd.Release()
		return nil, err
	}
	return hd, nil
}

// cacher returns the graph that caches the thread, which opens it without
// reading it whole, or the default opener if none does.
func (h *Host) cacher(threadID string) graph.Erased {
	for _, name := range h.names {
		if g := h.graphs[name]; g.Caches(threadID) {
			return g
		}
	}
	return h.opener
}

// wake returns the notifier's Wake, or nil.
func (h *Host) wake() func() {
	if h.notifier == nil {
		return nil
	}
	return h.notifier.Wake
}
