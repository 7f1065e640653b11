package client_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/server"
)

// Example starts the refund example graph over HTTP, watches its stream until it
// pauses, and approves the refund.
func Example() {
	refund, _ := graphs.Refund()
	srv, _ := server.New(server.WithGraph(refund.Erase()), server.WithLogger(slog.New(slog.DiscardHandler)))
	hs := httptest.NewServer(srv)
	defer hs.Close()

	ctx := context.Background()
	c, err := client.New(hs.URL) // with tokens: client.WithToken(secret)
	if err != nil {
		panic(err)
	}
	var question *interlude.Interruption
	for ev, err := range c.Stream(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "order-42", Input: map[string]any{"amount": 150}}) {
		if err != nil {
			panic(err)
		}
		fmt.Println("event:", ev.Event)
		if p, ok := ev.Pause(); ok {
			question = p.Interrupt
		}
	}
	fmt.Println("question:", question.Message)

	_, err = c.Invoke(ctx, client.InvokeRequest{ThreadID: "order-42", Input: map[string]any{"amount": 1}})
	fmt.Println("new input refused:", errors.Is(err, interlude.ErrThreadInterrupted))

	res, err := c.Resume(ctx, "order-42", question.ID, map[string]any{"approved": true})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, string(res.Values))
	// Output:
	// event: metadata
	// event: updates
	// event: end
	// question: Approve a refund of $150?
	// new input refused: true
	// completed {"amount":150,"attempts":2,"outcome":"refunded"}
}
