// Package langgraph serves the LangGraph Platform ("Agent Server") HTTP API
// over a host, so that LangGraph's clients (the JS and Python SDKs, useStream,
// agent-chat-ui, agent-inbox) run, stream, pause, list and resume Interlude
// graphs unchanged, with Interlude's rules behind every call: answers are
// validated against their schema, each question is resolved once, who
// answered is recorded, and a refused request changes nothing.
//
// Package server mounts it at the root, beside /v1/, behind the same tokens
// (server.WithLangGraphAPI); `interlude serve` turns it on unless
// --langgraph=false. Tokens are accepted from x-api-key as well as
// Authorization: Bearer, with the same roles: reading needs any token,
// creating, copying and updating threads and runs with input, command.update
// or command.goto to a node the run role, command.resume, command.goto
// "__end__" and agent-inbox's resolve the approve role, deleting a thread the
// admin role.
//
// # Objects
//
// Each hosted graph is one assistant, whose id is the one LangGraph derives:
// uuid5 of the graph's name in the URL namespace (AssistantID). The graph's
// name is accepted wherever an assistant id is. A thread's metadata carries
// graph_id and assistant_id once it has run, so that both UIs find it.
// The ids of the threads and runs the server makes are version 7 uuids (time
// first, then random bits), where LangGraph's dev server makes version 4:
// both are uuids to every client, and time-ordered ids keep a store's new
// threads together, which makes their commits cheaper.
//
// Thread status: idle, busy (a run holds it, or one stopped before its end),
// interrupted (waiting for answers, or at a breakpoint), error (its last step
// failed). Thread.interrupts is keyed by the id of the task (node) that asked,
// each a non-empty list. Checkpoint ids are uuid-shaped and sort by time: the
// commit's Unix milliseconds, then the thread version, which is what Interlude
// reads back from them. History is newest first, each state linked to the one
// before by parent_checkpoint. GET /threads/{id}/state?subgraphs=true sets the
// state of each task whose subgraph waits (tasks[].state, a ThreadState whose
// checkpoint_ns is the namespace joined with "|"), nested ones in theirs; it
// applies to the current state only.
//
// # Interrupts
//
//	Interlude                               LangGraph
//	a question (interlude.Interrupt)        one interrupt {"id", "value": {"message",
//	                                        "reason", "value", "response_schema",
//	                                        "interrupt_id"}}; answered by any JSON value
//	                                        (null cancels the question)
//	an agent's tool approvals of one        one interrupt in LangChain v1's format:
//	model turn (reason tool_approval,       {"action_requests": [{"name", "args",
//	one per gated tool call)                "description"}], "review_configs":
//	                                        [{"action_name", "allowed_decisions",
//	                                        "args_schema"}]}
//	  answered approve                      {"type": "approve"}
//	  answered edit (arguments validated    {"type": "edit", "edited_action":
//	  against the tool's schema; a name     {"name", "args"}}
//	  other than the asked tool's is
//	  refused with 422 invalid_response)
//	  answered reject with a message        {"type": "reject", "message"}
//	  answered respond in the tool's place  {"type": "respond", "message"}
//	                                        resumed by {"decisions": [...]}, one per
//	                                        action request, in order
//	the same, for an assistant set to       {"value": [{"action_request": {"action",
//	FormatAgentInbox (WithInterruptFormat)  "args"}, "config": {"allow_accept",
//	                                        "allow_edit", "allow_respond",
//	                                        "allow_ignore"}, "description"}]}
//	  approve / edit / respond / cancel     [{"type": "accept"}], [{"type": "edit",
//	                                        "args": {"action", "args"}}],
//	                                        [{"type": "response", "args": "text"}],
//	                                        [{"type": "ignore"}]; a list shorter than
//	                                        the calls answers the first ones, and the
//	                                        thread stays interrupted for the others
//	a breakpoint (graph.InterruptBefore)    status interrupted, next names the node,
//	                                        no interrupt; a run with neither input
//	                                        nor command continues it (command.resume
//	                                        is refused with not_interrupted)
//
// Both answer formats are accepted for approvals whatever the assistant's
// format. Interrupt ids are 32 lowercase hex digits, as LangGraph's, derived
// from the Interlude ids they stand for; Interlude's own ids ("int_...") are
// accepted as keys of a resume map too. command.resume is a map when every key
// has the shape of an interrupt id; it must then name pending interrupts, or
// interrupts already answered with the same value (among those of the
// thread's newest 1,000 checkpoints): such an answer sent again
// (a double click, a retried request) is a replay, which runs nothing and
// answers the output the first answer led to, and a different value for an
// answered interrupt is refused with 409 unknown_interrupt. Any other value
// answers the single pending interrupt.
//
// # Refusals
//
// Errors are JSON {"detail": message, "code": Interlude's code, "interrupts"
// (the 32-hex ids the thread shows), "violations"}, the shape LangGraph's Python server answers and its SDKs
// read, with statuses the SDKs do not retry: 400 for a malformed request (an
// if_exists, sort_by or sort_order other than LangGraph takes among them), 404
// for an unknown thread, run or assistant, 405 for a method the route does not
// take (with the route's Allow, which OPTIONS answers too; GET routes but a
// run's live stream answer HEAD), 409 for input to an interrupted
// thread (thread_interrupted), a resume of a thread that is not interrupted
// (not_interrupted), a stale or unknown interrupt id (unknown_interrupt), a
// bare resume while several interrupts are pending (ambiguous_resume) and a
// busy thread (thread_busy), 422 for an answer that fails its schema
// (invalid_response) and for what Interlude has no equivalent of
// (not_supported). A refused run starts nothing and leaves the thread as it was.
// The server's own refusals on these routes take the same shape: 401
// unauthenticated for a missing or wrong token, 403 forbidden for a
// cross-site request to a server without tokens.
//
// # State updates, goto and copies
//
// command.update (an object of fields, or [field, value] pairs) and POST
// /threads/{id}/state with values are written through the graph's reducers
// (graph.Graph.UpdateStateOn), as LangGraph writes them. A run with
// command.update then goes on from the nodes due; command.goto names the nodes
// that run next instead (a node, a list, or {"node"} objects). POST
// /threads/{id}/state writes as node as_node, whose successors then run next
// ("__start__": as input; no as_node: the nodes due stay due). A thread waiting
// for answers refuses both with 409 thread_interrupted and stays as it was:
// Interlude's questions are passed only by answering them, and neither SDK nor
// UI relies on an update that skips one (agent-chat-ui and agent-inbox answer,
// or resolve). command.goto "__end__" alone (agent-chat-ui's "mark as
// resolved") and POST /threads/{id}/state with {"values": null, "as_node":
// "__end__"} (agent-inbox's) cancel every pending question: the thread runs on
// as each asking node handles a cancellation.
//
// POST /threads/{id}/copy makes a thread with a new id, the same values,
// history, status and metadata (store.Copier); runs are not copied. A question
// pending on the original is asked again on the copy (its node runs again, as
// on a fork), under an id of the copy's own.
//
// multitask_strategy rollback cancels the running run and undoes what it
// committed: the thread's state becomes the one before the run (a fork of that
// checkpoint, so the abandoned steps stay in the history), or a thread the run
// created is emptied, keeping its metadata; the run is forgotten. Cancel with
// action=rollback does the same.
//
// Where Interlude has no equivalent, the request is refused with 422:
// command.goto with input (a Send) or to a node the graph does not have,
// interrupt_before/interrupt_after per run (they are compiled into a graph),
// an update of an earlier checkpoint, and a run from an earlier checkpoint with
// input or a command.
//
// # Runs and streams
//
// Every run executes in the background, holding its thread through the host;
// /runs/stream and /runs/wait follow it. multitask_strategy is reject by
// default (409 while a run of this server holds the thread), enqueue (the run
// waits its turn) or interrupt (the running run is cancelled first). A run
// naming the thread's latest checkpoint (useStream sends it every time) runs
// as usual; one naming an earlier checkpoint, without input, forks the thread
// from it (graph.Erased.Fork). A run's config and context are accepted and
// not used: an Interlude graph's settings are compiled into it. Stateless runs
// (POST /runs/...) get a thread deleted afterwards unless on_completion is
// keep; they cannot resume.
//
// SSE events are framed as LangGraph's: "event:", one line of JSON "data:",
// "id:" counting from 0, metadata first, and a ": heartbeat" comment while
// nothing happens. Modes: values (the state when the run starts and after
// every step, and when it paused the state with "__interrupt__", as
// LangGraph's Python runtime sends it),
// updates (each node's update, and {"__interrupt__": [...]} at a pause),
// custom (what nodes emit), tasks and debug (each node's result), checkpoints
// (the state committed at the end), events (on_chain_start and on_chain_end
// for the run and each node), messages-tuple (an agent's model output as it
// streams, as [AIMessageChunk, metadata] pairs with text and tool_call_chunks;
// the complete messages then arrive through values). A failed run ends with an error
// event {"error", "message"}, and /runs/wait answers 200 with {"__error__":
// {...}}. There is no end event: the stream closes. While a /runs/wait run
// goes on, a blank line is sent every heartbeat (WithHeartbeat) before the
// JSON; a refusal that comes after the first of them is answered as
// {"__error__": {"error": code, "message"}} too, as the status has gone out.
//
// An agent's messages are translated at the edge: values show them as
// LangChain messages (human, ai with tool_calls, tool), each with a stable id,
// and input messages given as LangChain's (type human, content) become user
// messages.
//
// # What is kept where
//
// The metadata clients set on threads (POST and PATCH /threads; at most 16 KiB
// of JSON a thread, so that a search reading it stays bounded), threads
// created empty (whose record keeps the created_at POST /threads answered
// once they have run), and every run's Run object and output are kept in the
// store's documents (store.Documents, which the memory, SQLite and Postgres
// stores have): they survive a restart and every replica sharing the store
// reads them. A run is recorded when it starts and when it ends, before its
// answer is sent (a /runs/wait run, which starts answering only once its graph
// has run, once, when it ends). A recorded run that was going when its process
// stopped reads as interrupted. The newest 100 runs of each thread are kept (a
// run's end forgets the older ones now and then, so a thread may list a few
// more for a while). A run's
// events live in the memory of the process that runs it:
// joining a run's stream (/runs/{id}/stream) and a resumable stream's replay
// from Last-Event-ID work on that replica, and its Location header points at
// that route; elsewhere, or after a restart, /join answers the run's output and
// its stream closes at once. A thread is busy while a run of this process holds
// it. Memory stays bounded: the newest 10,000 runs are kept (100 per thread),
// each with at most 10,000 events. A thread search reads at most 10,000 threads
// of the store.
//
// # Where LangGraph's servers differ
//
// The JS server refuses a busy thread with 422 and the Python server with 409;
// this package answers 409. /runs/wait and the final values event carry the
// whole state with "__interrupt__" (Python) rather than the interrupts alone
// (JS). ThreadState carries the top-level interrupts, checkpoint_id and
// parent_checkpoint_id of the Python server besides what the JS server sends.
package langgraph
