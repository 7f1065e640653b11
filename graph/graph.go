package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/interludehq/interlude/internal/keylock"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/internal/task"
	"github.com/interludehq/interlude/internal/tracing"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Names of the virtual nodes where every run starts and ends.
const (
	// Start is the virtual node the first step follows: edges from Start choose the
	// nodes that run first.
	Start = "__start__"
	// End is the virtual node that ends a run: route to it to stop.
	End = "__end__"
	// All, given to InterruptBefore or InterruptAfter, names every node.
	All = "*"
)

// Node is a step of work. It receives the current state and returns an update: the
// fields it sets to a non-zero value are written, each combined with the current
// value by the field's reducer. Treat the received state as read-only.
//
// A node may call interlude.Interrupt to ask a person a question; it must then
// return the error Interrupt gives it. When answered, the node runs again from its
// top.
type Node[S any] func(ctx context.Context, state S) (S, error)

// Route chooses the nodes that run after a node, from the state after its step.
// Returning End, or nothing, stops that branch.
type Route[S any] func(ctx context.Context, state S) ([]string, error)

// Builder assembles a graph over the state type S, a struct whose exported fields
// are the state. A field's reducer is set with the struct tag `graph:"append"`,
// `graph:"add"` or `graph:"merge"`; the default replaces the value. Builder methods
// record mistakes and Compile reports them all.
type Builder[S any] struct {
	nodes   map[string]Node[S]
	order   []string
	edges   map[string][]string
	routes  map[string][]Route[S]
	onInput InputFunc[S]
	errs    []error
}

// New returns an empty graph builder.
func New[S any]() *Builder[S] {
	return &Builder[S]{nodes: make(map[string]Node[S]), edges: make(map[string][]string), routes: make(map[string][]Route[S])}
}

func (b *Builder[S]) fail(format string, args ...any) *Builder[S] {
	b.errs = append(b.errs, fmt.Errorf(format, args...))
	return b
}

// AddNode adds a node. Names must be unique and may not be Start, End or All.
func (b *Builder[S]) AddNode(name string, fn Node[S]) *Builder[S] {
	switch {
	case name == "" || name == Start || name == End || name == All:
		return b.fail("node name %q is reserved or empty", name)
	case fn == nil:
		return b.fail("node %q has a nil function", name)
	case b.nodes[name] != nil:
		return b.fail("node %q is added twice", name)
	}
	b.nodes[name] = fn
	b.order = append(b.order, name)
	return b
}

// AddEdge makes to run in the step after from. Several edges from one node run
// their targets in parallel, in the same step.
func (b *Builder[S]) AddEdge(from, to string) *Builder[S] {
	b.edges[from] = append(b.edges[from], to)
	return b
}

// AddRoute makes the nodes chosen by route run in the step after from.
func (b *Builder[S]) AddRoute(from string, route Route[S]) *Builder[S] {
	if route == nil {
		return b.fail("route from %q is nil", from)
	}
	b.routes[from] = append(b.routes[from], route)
	return b
}

// InputFunc checks an Input before it is applied. It receives the thread's current
// state (the zero S for a thread that does not exist yet), read-only, and the input
// as an update of S, which it may edit in the fields the input sets (to normalise
// or mark what was given; edits to other fields are ignored). It returns an update
// to apply along with the input (the zero S for none), or an error that refuses the
// command: nothing is applied or committed, and Invoke returns the error as it is.
// Refuse bad input with an *interlude.Error of code interlude.CodeInvalidRequest,
// whose message a server answers to its client.
//
// It runs under the thread's lock, before any node, for every Input; answers and
// Continue do not call it. It cannot pause: interlude.Interrupt returns an error.
type InputFunc[S any] func(ctx context.Context, current S, input *S) (S, error)

// OnInput makes fn check every Input, and add to it, before it is applied.
func (b *Builder[S]) OnInput(fn InputFunc[S]) *Builder[S] {
	switch {
	case fn == nil:
		return b.fail("OnInput was given a nil function")
	case b.onInput != nil:
		return b.fail("OnInput is called twice; check everything in one function")
	}
	b.onInput = fn
	return b
}

// Compile checks the graph and returns it ready to run. Without WithStore the graph
// keeps its threads in memory.
func (b *Builder[S]) Compile(opts ...Option) (*Graph[S], error) {
	cfg := config{limit: 100, now: func() time.Time { return time.Now().UTC() }, cacheBytes: DefaultCacheBytes, leaseTTL: 30 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Err(); err != nil {
		return nil, err
	}
	errs := slices.Clone(b.errs)
	fs, err := describe(reflect.TypeFor[S]())
	if err != nil {
		errs = append(errs, err)
	}
	known := func(n string) bool { return b.nodes[n] != nil }
	for from, tos := range b.edges {
		if from != Start && !known(from) {
			errs = append(errs, fmt.Errorf("edge from unknown node %q", from))
		}
		for _, to := range tos {
			if to != End && !known(to) {
				errs = append(errs, fmt.Errorf("edge from %q to unknown node %q", from, to))
			}
		}
	}
	for from := range b.routes {
		if from != Start && !known(from) {
			errs = append(errs, fmt.Errorf("route from unknown node %q", from))
		}
	}
	if len(b.edges[Start]) == 0 && len(b.routes[Start]) == 0 {
		errs = append(errs, errors.New("no edge from Start: add one to choose the first node"))
	}
	for _, set := range [][]string{cfg.before, cfg.after} {
		for _, n := range set {
			if first, rest, inner := strings.Cut(n, "/"); inner {
				// A node of a subgraph, by its path: the first element is the
				// subgraph's node here; the rest is checked as the subgraph runs.
				if !known(first) || rest == "" || strings.HasSuffix(rest, "/") {
					errs = append(errs, fmt.Errorf("breakpoint on %q: a subgraph's node is named by a path from a node of this graph, as \"approval/finance\"", n))
				}
				continue
			}
			if n != All && !known(n) {
				errs = append(errs, fmt.Errorf("breakpoint on unknown node %q", n))
			}
		}
	}
	if cfg.observer != nil {
		if _, ok := cfg.observer.(Observer[S]); !ok {
			errs = append(errs, fmt.Errorf("observer is for another state type than %s", reflect.TypeFor[S]()))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("graph: %w", errors.Join(errs...))
	}
	if cfg.store == nil {
		cfg.store = memory.New()
	}
	cfg.tracer = tracing.Tracer(cfg.tracerProvider)
	if _, ok := store.As[store.Outbox](cfg.store); cfg.outbox && !ok {
		return nil, fmt.Errorf("graph: WithOutbox needs a store with an outbox (store.Outbox); %T has none", cfg.store)
	}
	if cfg.owner == "" {
		cfg.owner = defaultOwner()
	}
	g := &Graph[S]{
		name:    cfg.name,
		nodes:   maps.Clone(b.nodes),
		order:   make(map[string]int, len(b.order)),
		hops:    make(map[string]hop[S], len(b.edges)+len(b.routes)),
		cfg:     cfg,
		codec:   codec[S]{fs: fs},
		locks:   keylock.New(),
		cache:   newCache[S](cfg.cacheBytes, cfg.cacheEntries),
		onInput: b.onInput,
	}
	g.runSpan = "interlude.run"
	if g.name != "" {
		g.runSpan += " " + g.name
	}
	g.labels = make(map[string]*nodeLabels[S], len(b.order))
	for i, n := range b.order {
		g.order[n] = i
		g.labels[n] = &nodeLabels[S]{fn: g.nodes[n], span: "interlude.node " + n, who: fmt.Sprintf("node %q", n), nodes: tracing.Nodes.StringSlice([]string{n})}
	}
	g.nodeNames = slices.Clone(b.order)
	for from, tos := range b.edges {
		h := g.hops[from]
		for _, to := range tos {
			if to != End && !slices.Contains(h.next, to) {
				h.next = append(h.next, to)
			}
		}
		slices.SortFunc(h.next, func(a, b string) int { return g.order[a] - g.order[b] })
		g.hops[from] = h
	}
	for from, rs := range b.routes {
		h := g.hops[from]
		h.routes = slices.Clone(rs)
		g.hops[from] = h
	}
	if cfg.observer != nil {
		obs := cfg.observer.(Observer[S])
		g.observer = &obs
	}
	return g, nil
}

// Option configures Compile.
type Option func(*config)

type config struct {
	options.Problems

	name     string
	store    store.Store
	before   []string
	after    []string
	limit    int
	now      func() time.Time
	observer any
	events   func(Event)
	// listening reports whether events of a thread reach anyone (WithListeners).
	listening func(threadID string) bool
	leaseTTL  time.Duration
	owner     string
	outbox    bool // write notices (WithOutbox)

	durability Durability // which commits wait for the disk

	tracerProvider trace.TracerProvider
	tracer         trace.Tracer

	cacheBytes   int64 // the state cache's budget
	cacheEntries int   // and its cap on states, 0 for none
}

// WithStore keeps threads in s.
func WithStore(s store.Store) Option { return func(c *config) { c.store = s } }

// WithName names the graph; the name is stored with each thread and shown in
// listings.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// InterruptBefore pauses the thread before any of the named nodes runs (All for
// every node). The pause has no interrupt id; continue past it with Continue.
// A node of a subgraph is named by its path from this graph, the namespace and
// the node joined with "/" ("approval/finance" for node finance of the subgraph
// run by node approval), as a Breakpoint inside a subgraph reports it.
func InterruptBefore(nodes ...string) Option {
	return func(c *config) { c.before = append(c.before, nodes...) }
}

// InterruptAfter pauses the thread after any of the named nodes ran (All for every
// node), before the next step. Subgraphs' nodes are named as for InterruptBefore.
func InterruptAfter(nodes ...string) Option {
	return func(c *config) { c.after = append(c.after, nodes...) }
}

// WithRecursionLimit caps the number of steps one invocation may run (default 100).
// Compile refuses a limit below 1.
func WithRecursionLimit(n int) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.limit, n, n >= 1, "graph.WithRecursionLimit", "%d steps: a run needs at least 1", n)
	}
}

// WithClock sets the clock used for timestamps (for deterministic tests).
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.now, now, now != nil, "graph.WithClock", "the clock is nil; leave the option out for the system clock")
	}
}

// WithCacheBytes sets how many bytes of threads' states a compiled graph keeps
// in memory between invocations (default DefaultCacheBytes, 64 MiB; 0 disables
// the cache). A state's size is estimated from its stored form; the least
// recently used states are evicted first, and a state larger than an eighth of
// the budget is not kept. A cached state is used only after checking with the
// store that it is current.
func WithCacheBytes(n int64) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.cacheBytes, n, n >= 0, "graph.WithCacheBytes", "%d bytes is negative; give 0 to turn the cache off", n)
	}
}

// WithCacheSize caps how many threads' states a compiled graph keeps in memory
// between invocations, within the byte budget of WithCacheBytes (by default only
// the budget bounds them). 0 disables the cache.
func WithCacheSize(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.Refuse("graph.WithCacheSize", "%d states is negative; give 0 to turn the cache off", n)
			return
		}
		if n == 0 {
			c.cacheBytes = 0
		}
		c.cacheEntries = n
	}
}

// WithLease sets how long a run's lease on its thread lasts without renewal when
// the store is shared by several processes (a store.Leaser, such as Postgres); the
// default is 30 seconds. A running thread renews its lease every third of that. If
// the process dies, the thread can be taken over once the lease expires. owner
// names this process in leases ("" picks host, pid and a random suffix).
func WithLease(ttl time.Duration, owner string) Option {
	return func(c *config) {
		if ttl <= 0 {
			c.Refuse("graph.WithLease", "a lease of %v never holds; give a positive duration (the default is 30s)", ttl)
			return
		}
		c.leaseTTL, c.owner = ttl, owner
	}
}

// WithEvents sends every event of every run (Invoke and Stream alike) to sink, for
// example to fan them out to live listeners. sink is called from the run's
// goroutines and must not block for long.
func WithEvents(sink func(Event)) Option { return func(c *config) { c.events = sink } }

// WithListeners tells the graph whether anyone hears a thread's events as they
// happen (host.Hub.Listening does). Under DurabilityAsync, an answer that
// nobody hears of until its run's next durable commit does not wait for the
// disk on its own. Without it, a graph with WithEvents assumes someone always
// listens.
func WithListeners(listening func(threadID string) bool) Option {
	return func(c *config) { c.listening = listening }
}

// WithTracerProvider makes the graph's runs emit OpenTelemetry spans through tp
// (by default the global provider, otel.GetTracerProvider): a span per run, per
// step, per node and per append to the store, and an event per question; the
// span context of the node that asked is stored with its question, and the run
// that answers it starts a new trace linked to it (see "Tracing" in the package
// doc).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// Observer watches nodes run, for logs, metrics and input checks. It cannot pause a
// node: Interrupt called from its functions returns an error.
type Observer[S any] struct {
	// BeforeNode runs before a node; an error fails the node without running it.
	BeforeNode func(ctx context.Context, info NodeInfo, state S) error
	// AfterNode runs after a node with its update and error (an error matching
	// interlude.ErrPaused when it paused).
	AfterNode func(ctx context.Context, info NodeInfo, update S, err error)
}

// NodeInfo identifies a node run for an Observer.
type NodeInfo struct {
	// ThreadID is the thread.
	ThreadID string
	// Node is the node.
	Node string
	// Step counts the thread's completed steps before this one.
	Step int
}

// WithObserver installs an observer; its state type must be the graph's.
func WithObserver[S any](o Observer[S]) Option { return func(c *config) { c.observer = o } }

// Graph is a compiled graph. It is safe for concurrent use; runs on the same thread
// are serialised.
type Graph[S any] struct {
	name      string
	nodes     map[string]Node[S]
	nodeNames []string
	order     map[string]int
	// hops holds what follows each node (and Start) that has edges or
	// routes.
	hops     map[string]hop[S]
	cfg      config
	codec    codec[S]
	locks    *keylock.Locks
	cache    *cache[S]
	observer *Observer[S]
	onInput  InputFunc[S]
	labels   map[string]*nodeLabels[S]
	runSpan  string // the name of a run's span, made once
}

// hop is what follows a node: the nodes its edges lead to, without End, in
// the order nodes were added, and its routes. A step after a node without
// routes takes next as its next nodes: nothing changes a state's next nodes in
// place.
type hop[S any] struct {
	next   []string
	routes []Route[S]
}

// nodeLabels are the strings a node's runs are named by, made once, with the
// node itself: a task finds both with one lookup.
type nodeLabels[S any] struct {
	fn   Node[S]
	span string // its tracing span's name
	who  string // how errors about its updates name it
	// nodes is the interlude.nodes attribute of a step that runs it alone.
	nodes attribute.KeyValue
}

// Name returns the graph's name (WithName).
func (g *Graph[S]) Name() string { return g.name }

// Nodes returns the node names in the order they were added.
func (g *Graph[S]) Nodes() []string { return slices.Clone(g.nodeNames) }

// Store returns the store the graph keeps its threads in.
func (g *Graph[S]) Store() store.Store { return g.cfg.store }

func (g *Graph[S]) breakpoint(set []string, node string) bool {
	return slices.Contains(set, All) || slices.Contains(set, node)
}

// successors returns the nodes due after the given nodes ran, given the new state,
// in the order the nodes were added. Routes get ctx without its task, so that
// they cannot pause it.
func (g *Graph[S]) successors(ctx context.Context, ran []string, s S) ([]string, error) {
	if len(ran) == 1 {
		if h := g.hops[ran[0]]; len(h.routes) == 0 {
			return h.next, nil
		}
	}
	var next []string
	add := func(n string) {
		if n != End && n != "" && !slices.Contains(next, n) {
			next = append(next, n)
		}
	}
	var quiet context.Context // ctx without the task, made for the first route
	for _, from := range ran {
		h := g.hops[from]
		for _, to := range h.next {
			add(to)
		}
		for _, r := range h.routes {
			if quiet == nil {
				quiet = ctx
				if task.From(ctx) != nil {
					quiet = task.Without(ctx)
				}
			}
			tos, err := r(quiet, s)
			if err != nil {
				return nil, fmt.Errorf("route from %q: %w", from, err)
			}
			for _, to := range tos {
				if to != End && g.nodes[to] == nil {
					return nil, fmt.Errorf("route from %q chose unknown node %q", from, to)
				}
				add(to)
			}
		}
	}
	slices.SortFunc(next, func(a, b string) int { return g.order[a] - g.order[b] })
	return next, nil
}
