package host_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/store/memory"
)

type shipment struct {
	Outcome string `json:"outcome,omitempty"`
}

// shipping compiles a graph, named name, that asks whether to ship an order,
// a question open for an hour.
func shipping(name string, opts ...graph.Option) (*graph.Graph[shipment], error) {
	g := graph.New[shipment]()
	g.AddNode("ask", func(ctx context.Context, s shipment) (shipment, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "Ship the order?", TTL: time.Hour})
		if err != nil {
			return s, err
		}
		if ans.Cancelled {
			return shipment{Outcome: "closed by " + ans.By}, nil
		}
		return shipment{Outcome: "shipped"}, nil
	})
	g.AddEdge(graph.Start, "ask")
	return g.Compile(append(opts, graph.WithName(name))...)
}

// A program without HTTP runs a host: its expiry watch closes a question
// nobody answered in time, by the host's clock, and runs the thread on.
func Example() {
	var now atomic.Pointer[time.Time]
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	now.Store(&start)
	clock := func() time.Time { return *now.Load() }

	ended := make(chan interlude.RunStatus, 8)
	app, err := shipping("ship", graph.WithStore(memory.New()), graph.WithClock(clock),
		graph.WithEvents(func(e graph.Event) {
			if e.Type == graph.EventEnd {
				ended <- e.Status
			}
		}))
	if err != nil {
		panic(err)
	}

	h, err := host.New(host.WithGraph(app.Erase()), host.WithClock(clock), host.WithExpiryWatch(time.Millisecond))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	h.Start(ctx)
	defer h.Close()

	res, err := h.Invoke(ctx, "order-1", "ship", graph.Input(shipment{}))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, <-ended)

	later := start.Add(2 * time.Hour) // past the question's time to live
	now.Store(&later)
	fmt.Println(<-ended)
	snap, err := h.State(ctx, "order-1")
	if err != nil {
		panic(err)
	}
	fmt.Println(snap.Status, string(snap.Values))
	// Output:
	// interrupted interrupted
	// completed
	// idle {"outcome":"closed by interlude"}
}
