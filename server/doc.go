// Package server is Interlude's HTTP API: an http.Handler that users mount in
// their own program over their own compiled graphs and store.
//
//	hub := server.NewEventHub()
//	st := server.InstrumentStore(sqliteStore)
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
// # Routes
//
//	POST   /v1/graph/invoke             run, answer or continue a thread and wait
//	POST   /v1/graph/stream             the same as NDJSON, or SSE with Accept: text/event-stream
//	GET    /v1/graphs                   the hosted graphs: name, nodes, input_schema
//	GET    /v1/threads                  the inbox listing (?status=&graph=&limit=&cursor=)
//	GET    /v1/threads/{id}             status, values, pending interrupts, next nodes
//	GET    /v1/threads/{id}/history     a page of checkpoints, newest first (?limit=&before=;
//	                                    20 by default, 100 at most), the page's tool calls'
//	                                    interrupts, and next_before for the older page
//	POST   /v1/threads/{id}/resume      {"interrupt_id", "response"} or {"responses": [...]}
//	POST   /v1/threads/{id}/reject      {"interrupt_id", "error": {"name", "message"}}
//	POST   /v1/threads/{id}/cancel      {"interrupt_id"}
//	GET    /v1/threads/{id}/events      live events of the thread as SSE (Last-Event-ID resumes)
//	GET    /v1/events                   live events of every thread as SSE
//	GET    /v1/me                       the caller: {"name", "roles"}
//	DELETE /v1/threads/{id}             forget the thread (admin)
//	GET    /healthz, /metrics           liveness; Prometheus text metrics
//	GET    /inbox/                      the web inbox (package server/inbox; WithInbox replaces it)
//
// The invoke body has exactly one of input (or messages, which becomes the input
// {"messages": [...]}), resume (the single pending interrupt; null cancels it) and
// responses; with none of them it continues the thread (past a breakpoint). The
// thread is config.thread_id; one named thr_<random> is made for new input without
// one. An existing thread runs the graph stored with it, which graph, if given,
// must name. Input is checked against the graph's input_schema: unknown fields
// are refused, and input that creates a thread must carry the required ones;
// input to a thread that exists updates the fields it names.
//
// # Choices
//
// Bodies are decoded strictly: unknown fields, wrong types and malformed ids are
// refused with 400 and the field's path (details {"path": "responses[0].status"});
// field names match exactly. Ids (threads and interrupts) are 1 to 256 letters,
// digits or -_.:@~+=, but not "." or "..". An empty body counts as {}. Nothing is
// written before a request is fully validated, and the graphs refuse their own
// errors (409, 422) without writing, so every refused request leaves the thread
// as it was.
//
// Error answers are {"error": {"code", "message", "details"}}: 400
// invalid_request, 401 unauthenticated, 403 forbidden, 404 not_found, 405
// method_not_allowed, 409 thread_interrupted, not_interrupted, unknown_interrupt,
// ambiguous_resume, conflict or thread_busy (details {"interrupts": [...]} when
// interrupts are concerned; thread_busy comes with Retry-After: 1), 413 too_large, 422 invalid_response (details
// {"violations": [{"path", "message"}], "total", "interrupts"}: the first 20
// violations ordered by path and how many there are in all), 501 not_implemented (events without a hub),
// 503 unavailable (the run was stopped by Close) and 500 internal. Every GET route
// but the two live event streams also answers HEAD.
//
// A run whose node fails is not a request error: invoke answers 200 with status
// "failed" and the failure as "error"; a stream sends an error event
// {"code": "run_failed", "message"} before end.
//
// Runs do not stop when their client disconnects: an accepted answer is always
// acted on, and a stream whose reader went away runs to its end. Server.Close
// cancels the runs still going (their unfinished steps are not committed), and
// the next server to start, or another replica, finishes them from their last
// checkpoint.
//
// Sending again an answer identical to the recorded one for an already resolved
// interrupt, by id, is a replay: it answers 200 with the outcome of the run the
// first answer started, plus "replays": [{"interrupt_id", "status", "by", "at",
// ...}], the resolutions as first recorded, and "replayed": true when every
// answer of the request was one, so that a second person sending the same
// answer knows who decided and that theirs was not applied again. (A stream's
// answer does not carry them.) A bare resume (no id) to a thread no longer
// interrupted is 409 not_interrupted.
//
// In resume and in the /resume route, a null response cancels (a bare null is
// how clients withdraw a question); to answer with the JSON value null, use
// responses with status resolved.
// "input": null counts as no input (a continue).
//
// Interrupts are interlude.Interruption as it encodes itself: {"id", "name",
// "node", "path", "tool_call_id", "message", "reason", "value",
// "response_schema", "created_at", "expires_at"}, with null for what is not set.
// The interrupting code's private state ("state") appears only in a thread's
// history. Answers are interlude.Resolution: {"interrupt_id", "status",
// "response" or "error", "by", "at"}, the same in requests (without by and at),
// in replays and in history.
//
// Thread statuses are idle, running, interrupted and failed
// (interlude.ThreadStatus); a run ends completed, interrupted or failed
// (interlude.RunStatus), and a thread whose run completed is idle. The listing
// takes status=completed for the idle threads.
//
// Run responses (invoke, the answer routes and a stream's end event) are
// {"thread_id", "status", "interrupts", "values"} plus "messages" when the values
// have a messages field, "breakpoint" at a breakpoint and "error" when failed.
// response_granularity low leaves values and messages out; full adds "state":
// {"values", "next", "checkpoint", "execution_meta"}, where execution_meta has the
// status (completed, failed, interrupted_before or interrupted_after),
// interrupt_reason (the first pending interrupt's reason, or "interrupt"),
// interrupted_node and interrupt_data {"interrupt": <the first pending interrupt>}
// (and "breakpoint" at a breakpoint).
//
// GET /v1/threads/{id} responds {"thread_id", "graph", "status", "values",
// "interrupts", "next", "checkpoint", "created_at", "updated_at"}, plus
// "messages" when the values have a messages field, "breakpoint" at a
// breakpoint and "error" when failed. While an agent's turn waits (one tool
// call for an answer, say), the results of the turn's calls that have already
// finished are not in messages yet: "finished_tool_results" lists them, as the
// tool_result content blocks the turn's tool-result message will hold, in the
// order the model made the calls. It is left out when there are none.
//
// Stream events are {"event", "data"} lines (or SSE event/data/id blocks):
// metadata {"thread_id", "graph", "run_id", "checkpoint"} first; updates
// {"<node>": <its writes>} per finished node; messages and custom with what nodes
// emit; subtask {"node", "path", "tool_call_id", "result"} as soon as a sub-task
// of a node finishes (for an agent, a tool call: result is its tool_result
// block), once, even if the step then waits; an updates event {"status":
// "interrupted", "node", "interrupt"} per pending interrupt (or {"status", "node",
// "breakpoint"}) when the run pauses; error on failure; end last with the run
// answer. Every event is flushed. The tools node's updates event, sent when the
// whole turn completes, carries each result again: a client that shows subtask
// results skips, in the update, those whose tool_call_id it has shown. The live
// thread events carry subtask events too.
//
// # Security
//
// Tokens (WithTokens, LoadTokens) are bearer tokens with roles: run (start and
// continue threads), approve (answer interrupts, including invoke and stream
// carrying resume or responses), admin (everything, including DELETE). Any valid
// token may read, /metrics included. Secrets are compared in constant time against
// every token. The answering token's name is recorded as the resolution's "by".
// Without tokens the API is open, and Serve and ListenAndServe refuse addresses
// other than loopback; and since any web page a local browser visits could then
// reach it, it answers only requests addressed to localhost or a loopback address
// (against DNS rebinding) and refuses state-changing cross-origin browser requests
// (http.CrossOriginProtection, against CSRF), with 403. /healthz and /inbox/ need
// no token. GET /v1/me tells a caller its token's name and roles ({"name":
// "alice", "roles": ["approve"]}), so that a user interface can offer only what
// the token may do; without tokens it answers {"name": "", "roles": ["admin"]}.
//
// # Live events
//
// GET /v1/threads/{id}/events streams the thread's events as SSE from an
// EventHub the graphs publish to (graph.WithEvents(hub.Publish)). Without
// Last-Event-ID (header, or last_event_id query parameter) it starts with the next
// event, and first sends, as an SSE id with no event, the position to reconnect
// from, so that a listener whose stream ends before any event misses nothing;
// with one it first replays the kept events after it. The hub keeps the
// newest events of the most recently active threads within a budget of bytes
// (32 MiB by default; see NewEventHub). Live events carry no values: end is
// {"thread_id", "status", "checkpoint"}.
//
// # Slow clients
//
// No client, however slow, holds up a run or the server. A run's events never
// wait for their readers: a run stream (POST /v1/graph/stream) whose client
// falls more than 4 MiB behind (WithStreamBuffer), or an event listener that
// falls behind the hub, is cut off, its stream ending with an error event of
// code slow_consumer; the run goes on. Reading a request's headers and body,
// and writing each answer or stream event, have timeouts (WithTimeouts), and
// so does a graceful shutdown: past it, Serve closes the connections left and
// cancels the runs still going, which continue later from their last
// checkpoint.
//
// Several replicas of a server share events through an EventLog (WithHubLog;
// store/postgres provides one): every replica's listeners get the events of the
// runs on all of them, with the log's ids, the same on every replica; each
// thread's events arrive in order. A listener may then reconnect to any replica
// with Last-Event-ID and catches up from the log (Last-Event-ID 0 replays all
// the log keeps of the thread). If a replica's log may have missed events (its
// connection to the database broke), the replica ends every stream, so that
// listeners reconnect and catch up.
//
// On a store that several replicas share (a store.Leaser, such as Postgres), a
// request that runs a thread first claims it (graph.Claim): one round trip that
// takes the thread's lease, answering 409 thread_busy if another replica runs
// it, and tells which graph the thread belongs to, so the server reads nothing
// else before the run. A run that dies with its replica ends too: once its lease
// expires, one replica sends its thread's listeners an end of status failed, or
// interrupted if the run had committed its pause, whose questions stay pending
// (WithLeaseWatch).
//
// A commit that leaves the run more to do (an answer that leaves no question
// pending, or a step after which nodes are due) sets the thread's status to
// running, and the run's last commit sets the status it ends with. A thread
// still running by its last record while no run holds it was left by a run
// that stopped before its end (its process died, or Close cancelled it): the
// server's host finishes that run by itself from its last checkpoint
// (WithRecoveryWatch, RecoverThreads), when it starts and every second, with
// replicas on one of them under the thread's lease once the stopped run's lease
// has expired or been given up. Committed steps are not run again; an answered
// step's tasks run again and receive the recorded answers, so the answer's
// effect is applied once. Until then, new input to the thread is refused with
// 409 thread_busy; a continue (no input) finishes the run at once.
//
// A question with a time to live (interlude.Request.TTL) is closed by the server
// once it passes: every second (WithExpiryWatch) the server's host resolves the questions
// whose expires_at has passed as expired, by the actor "interlude" (ExpiryActor),
// and runs their threads on; with replicas, whichever gets to a thread first. An
// answer that comes after expires_at is refused with 409 unknown_interrupt; a
// cancel is still taken.
//
// GET /v1/events streams the live events of every thread, for dashboards and the
// web inbox: the same event names, each data wrapped as {"thread_id", "data"}. It
// has no replay (Last-Event-ID is ignored): a listener that connects or
// reconnects reads the listing (GET /v1/threads) once subscribed, then updates it
// from the events; a pause is an updates event with status interrupted, and every
// run ends with end. Any valid token may listen.
//
// # Web inbox
//
// /inbox/ serves the web inbox of package server/inbox, embedded in the binary:
// the people who answer questions sign in with their token (unless the server has
// none), see the pending questions live, and answer them with forms built from
// the response schemas. WithInbox replaces it or, with nil, turns it off.
//
// # Metrics
//
// /metrics (WithMetrics, on by default) has interlude_http_requests_total,
// interlude_http_request_duration_seconds, interlude_runs_total{graph,outcome},
// interlude_run_duration_seconds, interlude_pauses_total,
// interlude_resolutions_total{graph,kind}, the event listeners, and with
// InstrumentStore interlude_store_operation_duration_seconds{op} and
// interlude_store_errors_total.
//
// Requests are logged with log/slog: method, path, status, duration and token
// name.
package server
