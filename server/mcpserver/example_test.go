package mcpserver_test

import (
	"context"
	"log"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/server/mcpserver"
)

// Serving a host's graphs to MCP clients at /mcp, beside the HTTP API and
// behind its tokens.
func ExampleNew() {
	refund, err := graphs.Refund()
	if err != nil {
		log.Fatal(err)
	}
	h, err := host.New(host.WithGraph(refund.Erase()))
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.New(server.WithHost(h),
		server.WithTokens([]auth.Token{{Name: "alice", Secret: "s3cret", Roles: []auth.Role{auth.RoleRun, auth.RoleApprove}}}))
	if err != nil {
		log.Fatal(err)
	}
	mcp, err := mcpserver.New(h, mcpserver.WithInboxURL("https://interlude.example.com/inbox/"))
	if err != nil {
		log.Fatal(err)
	}
	srv.Mount("/mcp", mcp.Handler())
	log.Fatal(srv.ListenAndServe(context.Background(), ":8000"))
}
