package host_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/testclock"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// asking compiles a graph named name that asks one question open for an
// hour, by clock, over st.
func asking(t *testing.T, name string, st store.Store, clock func() time.Time) graph.Erased {
	t.Helper()
	app, err := shipping(name, graph.WithStore(st), graph.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	return app.Erase()
}

func newHost(t *testing.T, opts ...host.Option) *host.Host {
	t.Helper()
	h, err := host.New(append(opts, host.WithExpiryWatch(0), host.WithRecoveryWatch(0))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestExpireQuestionsClosesOnlyQuestionsWhoseTimeHasCome(t *testing.T) {
	clock := testclock.New(t0)
	counted := map[string]int{}
	h := newHost(t, host.WithGraph(asking(t, "ship", memory.New(), clock.Now)), host.WithClock(clock.Now),
		host.WithExpiredHook(func(g string, n int) { counted[g] += n }))
	ctx := context.Background()
	if _, err := h.Invoke(ctx, "order-1", "ship", graph.Input(shipment{})); err != nil {
		t.Fatal(err)
	}
	clock.Set(t0.Add(59 * time.Minute))
	if n, err := h.ExpireQuestions(ctx); err != nil || n != 0 {
		t.Fatalf("before the question's time: closed %d (%v), want 0", n, err)
	}
	clock.Set(t0.Add(time.Hour))
	if n, err := h.ExpireQuestions(ctx); err != nil || n != 1 {
		t.Fatalf("at the question's time: closed %d (%v), want 1", n, err)
	}
	snap, err := h.State(ctx, "order-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"outcome":"closed by ` + host.ExpiryActor + `"}`; string(snap.Values) != want || snap.Status != interlude.ThreadIdle {
		t.Fatalf("thread = %s %s, want idle %s", snap.Status, snap.Values, want)
	}
	if counted["ship"] != 1 {
		t.Fatalf("the expired hook counted %v, want ship: 1", counted)
	}
	if n, err := h.ExpireQuestions(ctx); err != nil || n != 0 {
		t.Fatalf("a second look closed %d (%v), want 0", n, err)
	}
}

// packing compiles a graph named order of two steps, pack and ship, whose
// first ship step, counted by runs, closes stopped and waits until its run is
// cancelled, as a step does whose process stops.
func packing(t *testing.T, st store.Store, runs *atomic.Int32, stopped chan struct{}, opts ...graph.Option) graph.Erased {
	t.Helper()
	g := graph.New[shipment]()
	g.AddNode("pack", func(ctx context.Context, s shipment) (shipment, error) { return shipment{Outcome: "packed"}, nil })
	g.AddNode("ship", func(ctx context.Context, s shipment) (shipment, error) {
		if runs.Add(1) == 1 {
			close(stopped)
			<-ctx.Done()
			return s, ctx.Err()
		}
		return shipment{Outcome: s.Outcome + ", shipped"}, nil
	})
	g.AddEdge(graph.Start, "pack")
	g.AddEdge("pack", "ship")
	app, err := g.Compile(append(opts, graph.WithName("order"), graph.WithStore(st))...)
	if err != nil {
		t.Fatal(err)
	}
	return app.Erase()
}

func TestRecoverThreadsFinishesARunStoppedBetweenSteps(t *testing.T) {
	stopped := make(chan struct{})
	h := newHost(t, host.WithGraph(packing(t, memory.New(), new(atomic.Int32), stopped)))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-stopped; cancel() }()
	if _, err := h.Invoke(ctx, "order-1", "", graph.Input(shipment{})); !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped run's error = %v, want context.Canceled", err)
	}
	if snap, err := h.State(context.Background(), "order-1"); err != nil || snap.Status != interlude.ThreadRunning {
		t.Fatalf("the stopped thread reads %v (%v), want running", snap.Status, err)
	}
	if n, err := h.RecoverThreads(context.Background()); err != nil || n != 1 {
		t.Fatalf("RecoverThreads = %d, %v; want 1", n, err)
	}
	snap, err := h.State(context.Background(), "order-1")
	if err != nil || snap.Status != interlude.ThreadIdle || string(snap.Values) != `{"outcome":"packed, shipped"}` {
		t.Fatalf("the finished thread reads %v %s (%v), want idle, packed and shipped once", snap.Status, snap.Values, err)
	}
	if n, err := h.RecoverThreads(context.Background()); err != nil || n != 0 {
		t.Fatalf("a second RecoverThreads = %d, %v; want 0", n, err)
	}
}

func TestTheRecoveryWatchFinishesAStoppedRunWhenTheHostStarts(t *testing.T) {
	st := memory.New()
	stopped, done := make(chan struct{}), make(chan struct{})
	ended := graph.WithEvents(func(e graph.Event) {
		if e.Type == graph.EventEnd && e.Status == interlude.RunCompleted {
			close(done)
		}
	})
	var runs atomic.Int32
	build := func() graph.Erased { return packing(t, st, &runs, stopped, ended) }
	first := newHost(t, host.WithGraph(build()))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-stopped; cancel() }()
	first.Invoke(ctx, "order-1", "", graph.Input(shipment{}))
	first.Close()

	next, err := host.New(host.WithGraph(build()), host.WithRecoveryWatch(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	next.Start(context.Background())
	defer next.Close()
	<-done // the watch looks once at start, not an hour later
	if snap, err := next.State(context.Background(), "order-1"); err != nil || string(snap.Values) != `{"outcome":"packed, shipped"}` {
		t.Fatalf("the thread reads %s (%v), want packed and shipped", snap.Values, err)
	}
}

func TestTheHostRefusesAGraphThatDoesNotFitTheThread(t *testing.T) {
	st := memory.New()
	h := newHost(t, host.WithGraph(asking(t, "ship", st, time.Now)), host.WithGraph(asking(t, "return", st, time.Now)))
	ctx := context.Background()
	if _, err := h.Invoke(ctx, "order-1", "ship", graph.Input(shipment{})); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, thread, graph string
		create              bool
		want                error
		says                string
	}{
		{"a graph not hosted", "order-1", "refund", true, interlude.ErrInvalidRequest, `graph "refund" is not hosted here; hosted: return, ship`},
		{"another graph than the thread's", "order-1", "return", true, interlude.ErrInvalidRequest, `runs graph "ship", not "return"`},
		{"no graph for a new thread among several", "order-2", "", true, interlude.ErrInvalidRequest, "graph is required to start a thread"},
		{"a thread that does not exist", "order-3", "ship", false, interlude.ErrNotFound, `thread "order-3" does not exist`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			held, err := h.Hold(ctx, c.thread, c.graph, c.create)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("Hold = %v, %v; want %v saying %q", held, err, c.want, c.says)
			}
		})
	}
	if g, err := h.GraphFor(ctx, "order-1"); err != nil || g.Name() != "ship" {
		t.Fatalf("GraphFor = %v, %v; want ship", g, err)
	}
}

func TestAThreadIsHeldForOneRunAtATime(t *testing.T) {
	h := newHost(t, host.WithGraph(asking(t, "ship", memory.New(), time.Now)))
	ctx := context.Background()
	first, err := h.Hold(ctx, "order-1", "ship", true)
	if err != nil || !first.Fresh {
		t.Fatalf("Hold = %v, %v; want a fresh thread", first, err)
	}
	waiting, cancel := context.WithCancel(ctx)
	got := make(chan error, 1)
	go func() {
		_, err := h.Hold(waiting, "order-1", "ship", true)
		got <- err
	}()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("a second Hold while the first holds = %v, want it to wait until cancelled", err)
	}
	first.Release()
	second, err := h.Hold(ctx, "order-1", "ship", true)
	if err != nil {
		t.Fatalf("Hold after Release = %v", err)
	}
	second.Release()
}

func TestNewRefusesGraphsThatDoNotShareTheHostsStore(t *testing.T) {
	a, b := memory.New(), memory.New()
	for _, c := range []struct {
		name string
		opts []host.Option
	}{
		{"two stores", []host.Option{host.WithGraph(asking(t, "ship", a, time.Now)), host.WithGraph(asking(t, "return", b, time.Now))}},
		{"a store other than WithStore's", []host.Option{host.WithStore(b), host.WithGraph(asking(t, "ship", a, time.Now))}},
		{"no graphs", nil},
	} {
		if _, err := host.New(c.opts...); err == nil {
			t.Errorf("%s: New succeeded", c.name)
		}
	}
}

// loadCounter counts the whole-thread reads (Load) of the store it wraps.
type loadCounter struct {
	store.Store
	loads atomic.Int64
}

func (c *loadCounter) Load(ctx context.Context, threadID string) (*store.Loaded, error) {
	c.loads.Add(1)
	return c.Store.Load(ctx, threadID)
}

func TestAnAnswerWithoutAGraphNameOpensTheThreadThroughTheGraphThatCachesIt(t *testing.T) {
	st := &loadCounter{Store: memory.New()}
	clock := testclock.New(t0)
	// "a-first" sorts before "ship": a host that opened every thread through
	// its first graph would read the thread whole, its cache knowing nothing.
	h := newHost(t, host.WithGraph(asking(t, "a-first", st, clock.Now)), host.WithGraph(asking(t, "ship", st, clock.Now)), host.WithClock(clock.Now))
	ctx := context.Background()
	if _, err := h.Invoke(ctx, "order-1", "ship", graph.Input(shipment{})); err != nil {
		t.Fatal(err)
	}
	before := st.loads.Load()
	res, err := h.Invoke(ctx, "order-1", "", graph.Resume(interlude.Cancel()))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("the answer ran to %v (%v), want completed", res, err)
	}
	if n := st.loads.Load() - before; n != 0 {
		t.Fatalf("the answer read the thread whole %d times; its graph's cache holds it", n)
	}
	snap, err := h.State(ctx, "order-1")
	if err != nil || !strings.Contains(string(snap.Values), "closed by") {
		t.Fatalf("the thread after the answer: %+v (%v)", snap, err)
	}
}
