package server_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store/memory"
)

func TestAServerServesTheHostItIsGiven(t *testing.T) {
	b := graph.New[Order]()
	b.AddNode("ship", func(ctx context.Context, o Order) (Order, error) {
		ok, err := interlude.Ask[bool](ctx, interlude.Request{Message: "Ship the " + o.Item + "?"})
		if err != nil {
			return Order{}, err
		}
		return Order{Item: o.Item, Shipped: ok}, nil
	})
	b.AddEdge(graph.Start, "ship")
	orders, err := b.Compile(graph.WithName("orders"), graph.WithStore(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(host.WithGraph(orders.Erase()), host.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := server.New(server.WithHost(h), server.WithGraph(orders.Erase())); err == nil {
		t.Fatal("New took both a host and a graph to host beside it")
	}
	srv, err := server.New(server.WithHost(h), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	// A thread started through the host is answered over HTTP, and the host
	// reads the answer.
	ctx := context.Background()
	if _, err := h.Invoke(ctx, "order-1", "orders", graph.Input(Order{Item: "books"})); err != nil {
		t.Fatal(err)
	}
	c := clienttest.New(t, hs.URL)
	th, err := c.Thread(ctx, "order-1")
	if err != nil || len(th.Interrupts) != 1 {
		t.Fatalf("the server reads the host's thread as %+v (%v), want one question", th, err)
	}
	if _, err := c.Resume(ctx, "order-1", th.Interrupts[0].ID, true); err != nil {
		t.Fatal(err)
	}
	snap, err := h.State(ctx, "order-1")
	if err != nil || string(snap.Values) != `{"item":"books","shipped":true}` {
		t.Fatalf("the host reads %s (%v), want the books shipped", snap.Values, err)
	}
}
