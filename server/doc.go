// Package server is Interlude's HTTP API: an http.Handler that users mount in
// their own program over their own compiled graphs and store.
//
//	hub := server.NewEventHub()
//	st := storemetrics.Instrument(sqliteStore)
//	refund, _ := graphs.Refund(graph.WithStore(st), graph.WithEvents(hub.Publish))
//	srv, _ := server.New(server.WithGraph(refund.Erase()), server.WithEventHub(hub),
//		server.WithTokens(tokens))
//	err := srv.ListenAndServe(ctx, "127.0.0.1:8080")
//
// The server is an HTTP adapter over a host (package host), which runs the
// graphs one run per thread, closes expired questions and finishes stopped
// runs; the server adds routing, authentication, the wire encoding, metrics,
// live event streams and the inbox. It builds its host from its options, or
// serves one given with WithHost.
//
// Other protocols are mounted beside these routes behind the same tokens: the
// LangGraph Platform API of package server/langgraph (WithLangGraphAPI), and
// any handler given to Mount, such as the MCP endpoint of package
// server/mcpserver that `interlude serve` mounts at /mcp. Mounted handlers learn
// who calls with auth.FromContext (package server/auth).
//
// docs/API.md in the repository is the reference of the routes, their bodies
// and answers, the streams and the live events.
package server
