package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/store/memory"
)

// Order is the state of the user's own graph in ExampleNew.
type Order struct {
	Item    string `json:"item"`
	Shipped bool   `json:"shipped,omitempty"`
}

// ExampleNew hosts a graph of one's own: compile it with a store and an event hub,
// pass it to New, and serve the result.
func ExampleNew() {
	b := graph.New[Order]()
	b.AddNode("ship", func(ctx context.Context, o Order) (Order, error) {
		ok, err := interlude.Ask[bool](ctx, interlude.Request{Message: "Ship the " + o.Item + "?"})
		if err != nil {
			return Order{}, err
		}
		return Order{Shipped: ok}, nil
	})
	b.AddEdge(graph.Start, "ship")
	hub, err := server.NewEventHub()
	if err != nil {
		panic(err)
	}
	orders, err := b.Compile(graph.WithName("orders"), graph.WithStore(memory.New()), graph.WithEvents(hub.Publish))
	if err != nil {
		panic(err)
	}
	srv, err := server.New(
		server.WithGraph(orders.Erase()),
		server.WithEventHub(hub),
		server.WithTokens([]auth.Token{{Name: "alice", Secret: "s3cret", Roles: []auth.Role{auth.RoleRun, auth.RoleApprove}}}),
		server.WithLogger(slog.New(slog.DiscardHandler)),
	)
	if err != nil {
		panic(err)
	}
	// A program would now call srv.ListenAndServe(ctx, "127.0.0.1:8080"), or mount
	// srv in its own mux. Here a test server stands in.
	hs := httptest.NewServer(srv)
	defer hs.Close()

	ctx := context.Background()
	c, err := client.New(hs.URL, client.WithToken("s3cret"))
	if err != nil {
		panic(err)
	}
	res, err := c.Invoke(ctx, client.InvokeRequest{Graph: "orders", ThreadID: "order-1", Input: map[string]any{"item": "books"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Interrupts[0].Message)
	res, err = c.Resume(ctx, "order-1", res.Interrupts[0].ID, true)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, string(res.Values))
	// Output:
	// interrupted Ship the books?
	// completed {"item":"books","shipped":true}
}
