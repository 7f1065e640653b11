package mcp_test

import (
	"context"
	"log"
	"net/http"

	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/mcp"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/store/memory"
)

// An agent on the tools of two MCP servers: one started as a subprocess, one
// reached over streamable HTTP with a token. The refund needs approval; a
// question either server asks mid-call waits as an interrupt.
func ExampleConnect() {
	ctx := context.Background()
	tools, err := mcp.Connect(ctx,
		mcp.Server{Name: "orders", Command: "orders-mcp-server"},
		mcp.Server{Name: "crm", URL: "https://crm.example.com/mcp", Header: http.Header{"Authorization": {"Bearer secret"}}},
	)
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close()
	a, err := agent.New(scripted.New(scripted.Text("Hello")), tools.Tools(),
		agent.RequireApproval("issue_refund"),
		agent.WithGraphOptions(graph.WithStore(memory.New())))
	if err != nil {
		log.Fatal(err)
	}
	res, err := a.Invoke(ctx, "conv-1", agent.Ask("Please refund order A-1001"))
	if err != nil {
		log.Fatal(err)
	}
	for _, q := range res.Interrupts {
		log.Printf("%s asks: %s", q.Reason, q.Message)
	}
}
