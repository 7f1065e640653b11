package mcpserver_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkElicitationRoundTrip is one call of the refund graph through /mcp
// on loopback, with a bearer token: the run starts, pauses, its question is
// elicited from the client, answered at once, and the run finishes, all in the
// one call.
func BenchmarkElicitationRoundTrip(b *testing.B) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		b.Run(version, func(b *testing.B) {
			ctx := context.Background()
			h := newHost(b)
			srv, err := server.New(server.WithHost(h), server.WithLogger(slog.New(slog.DiscardHandler)), server.WithMetrics(false),
				server.WithTokens([]auth.Token{{Name: "alice", Secret: "a", Roles: []auth.Role{auth.RoleAdmin}}}))
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			srv.Mount("/mcp", mustMCP(b, h).Handler())
			hs := httptest.NewServer(srv)
			defer hs.Close()
			e := &elicitor{result: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approved": true}}}
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, &sdk.ClientOptions{ElicitationHandler: e.handle}).Connect(ctx,
				&sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: headers{"a"}}, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "refund", Arguments: map[string]any{"amount": 5}})
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
			if e.asked.Load() == 0 {
				b.Fatal("nothing was elicited")
			}
		})
	}
}
