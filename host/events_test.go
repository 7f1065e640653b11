package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

func TestAProgramWithoutHTTPGetsTheEventsOfItsThreads(t *testing.T) {
	hub, err := host.NewHub()
	if err != nil {
		t.Fatal(err)
	}
	app, err := shipping("ship", graph.WithStore(memory.New()), graph.WithEvents(hub.Publish))
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, host.WithGraph(app.Erase()), host.WithHub(hub))
	ctx := context.Background()
	one, err := h.Events().Subscribe(ctx, "order-1", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	all, err := hub.SubscribeAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	if _, err := h.Invoke(ctx, "order-2", "ship", graph.Input(shipment{})); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Invoke(ctx, "order-1", "ship", graph.Input(shipment{})); err != nil {
		t.Fatal(err)
	}
	var names []string
	var last int64
	for {
		ev, err := one.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.ThreadID != "order-1" || ev.ID <= last || ev.ID <= one.Position() {
			t.Fatalf("event %+v: another thread's, or not numbered after %d", ev, max(last, one.Position()))
		}
		last = ev.ID
		names = append(names, ev.Name)
		if ev.Name == string(graph.EventEnd) {
			var end graph.Event
			if err := json.Unmarshal(ev.Data, &end); err != nil || end.Status != interlude.RunInterrupted {
				t.Fatalf("end event %s (%v), want the run interrupted", ev.Data, err)
			}
			break
		}
	}
	if !strings.Contains(strings.Join(names, " "), string(graph.EventInterrupt)) {
		t.Fatalf("the thread's events %v lack its question", names)
	}
	// The listener of every thread saw both, order-2's first.
	ev, err := all.Next(ctx)
	if err != nil || ev.ThreadID != "order-2" {
		t.Fatalf("first event of every thread: %+v, %v; want order-2's", ev, err)
	}
	// A listener that resumes after the first event gets the thread's next ones again.
	again, err := hub.Subscribe(ctx, "order-1", true, last-1)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if ev, err := again.Next(ctx); err != nil || ev.ID != last {
		t.Fatalf("resumed after %d: %+v, %v; want event %d", last-1, ev, err, last)
	}
	hub.Close()
	if _, err := one.Next(ctx); !errors.Is(err, host.ErrStreamEnded) {
		t.Fatalf("after Close: %v, want ErrStreamEnded", err)
	}
	if _, err := hub.Subscribe(ctx, "order-1", false, 0); !errors.Is(err, host.ErrHubClosed) {
		t.Fatalf("subscribing to a closed hub: %v, want ErrHubClosed", err)
	}
}

func TestAListenerThatFallsBehindIsToldToResume(t *testing.T) {
	hub, err := host.NewHub(host.WithHubBuffer(2))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sub, err := hub.Subscribe(ctx, "t", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for range 3 {
		hub.Publish(graph.Event{Type: graph.EventCustom, ThreadID: "t", Data: "x"})
	}
	var err2 error
	for err2 == nil {
		_, err2 = sub.Next(ctx)
	}
	if !errors.Is(err2, host.ErrFellBehind) || hub.Dropped() != 1 {
		t.Fatalf("a listener 3 events behind with room for 2: %v (dropped %d), want ErrFellBehind", err2, hub.Dropped())
	}
}

// reads counts the reads that find or load a thread.
type reads struct {
	store.Store
	n atomic.Int64
}

func (r *reads) Meta(ctx context.Context, id string) (*store.Meta, error) {
	r.n.Add(1)
	return r.Store.Meta(ctx, id)
}

func (r *reads) Version(ctx context.Context, id string) (int64, error) {
	r.n.Add(1)
	return r.Store.Version(ctx, id)
}

func (r *reads) Load(ctx context.Context, id string) (*store.Loaded, error) {
	r.n.Add(1)
	return r.Store.Load(ctx, id)
}

func TestARunThroughTheHostReadsTheThreadOnce(t *testing.T) {
	st := &reads{Store: memory.New()}
	a, b := asking(t, "a", st, time.Now), asking(t, "b", st, time.Now)
	h := newHost(t, host.WithGraph(a), host.WithGraph(b))
	ctx := context.Background()
	for _, step := range []struct {
		name  string
		graph string
		cmd   graph.Command
	}{
		{"start", "b", graph.Input(shipment{})},
		{"answer", "", graph.Respond(map[string]interlude.Resolution{"": interlude.Cancel()})},
		{"start again", "", graph.Input(shipment{})},
	} {
		before := st.n.Load()
		if _, err := h.Invoke(ctx, "order-1", step.graph, step.cmd); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if n := st.n.Load() - before; n != 1 {
			t.Errorf("%s read the thread %d times, want once", step.name, n)
		}
	}
}
