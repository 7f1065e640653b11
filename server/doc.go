// Package server is Interlude's HTTP API: an http.Handler that users mount in
// their own program over their own compiled graphs and store.
//
//	hub, _ := server.NewEventHub()
//	st := storemetrics.Instrument(sqliteStore)
//	refund, _ := graphs.Refund(graph.WithStore(st), graph.WithEvents(hub.Publish))
//	srv, _ := server.New(server.WithGraph(refund.Erase()), server.WithEventHub(hub),
//		server.WithTokens(tokens))
//	err := srv.ListenAndServe(ctx, "127.0.0.1:8080")
//
// The server is an HTTP adapter over a host (package host), built from its
// options or given with WithHost: it adds routing, authentication (package
// server/auth), the wire encoding, metrics, live event streams and the inbox.
// The LangGraph Platform API (WithLangGraphAPI) and handlers given to Mount,
// such as server/mcpserver's, are served behind the same tokens. docs/API.md
// is the reference of the routes.
package server
