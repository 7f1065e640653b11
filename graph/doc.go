// Package graph builds and runs durable graphs whose nodes can stop to ask a
// person a question and continue, in any process, once it is answered.
//
// A graph is nodes (Go functions over a state struct S) joined by edges and
// routes. [New] returns a [Builder]; [Builder.Compile] checks it and returns a
// [Graph] that keeps its threads in a store ([WithStore]; memory by default).
// Each thread is one durable instance, named by its thread id.
//
// # Steps and state
//
// A run proceeds in steps. In each step every node that is due runs, in
// parallel; when all have finished, their updates are combined into the state in
// the order the nodes were added, the nodes due next are chosen by the edges and
// routes of the nodes that ran, and the step is committed to the store before the
// next one starts. A node returns an update, not a new state: the fields it sets
// to a non-zero value are written, each combined with the current value by the
// field's reducer (`graph:"append"`, `graph:"add"`, `graph:"merge"`; replace by
// default). Two nodes of one step may not both write a replace field. An
// update made in this process is applied as the node returned it, while a
// reload decodes the stored JSON: keep state types whose JSON says all of
// them (no unexported or `json:"-"` fields that matter).
//
// # Pauses
//
// A node (or a tool, or a hook, inside a node) calls interlude.Interrupt or
// interlude.Ask and returns the error it gets. The step is then committed with
// the question pending and [Graph.Invoke] returns a [Result] with status
// interlude.RunInterrupted and every pending question; it is not an error.
// Answers are commands: [Resume] gives one interlude.Resolution (made with
// interlude.Resolve, Reject, Cancel or Expire; .For names the question) and
// [Respond] several, by id. Each answer is validated against the question's
// response schema and committed, with who gave it (interlude.WithActor), before
// the node runs again from its top; the k-th Interrupt call of the node then
// returns the k-th answer. Nodes of the same step that finished are not run
// again: their updates were kept in the step's ledger. [Once] gives the same
// guarantee to parts of a node, such as each tool call of an agent. A node's
// update reaches the state only when its whole step completes, but what its
// finished parts returned is visible meanwhile: [Graph.Stream] reports each as
// an [EventSubTask] when it finishes, and [Snapshot].Finished lists them while
// the step waits.
//
// [InterruptBefore] and [InterruptAfter] pause at node boundaries without a
// question; [Continue] passes them.
//
// # Refusals and failures
//
// A command that cannot apply (input to a thread waiting for answers, an answer
// to a thread that is not waiting or for an unknown interrupt, an answer failing
// its schema) is refused with an *interlude.Error and changes nothing; match it
// with errors.Is against the interlude.Err values. Sending the same answer again
// for an interrupt already resolved returns the outcome of the run it started
// (except an expiry, which is refused the second time).
//
// A node that returns another error or panics, or a route that fails, fails the
// step: Invoke returns the error together with a Result of status [Failed], and
// the thread keeps the step's finished nodes in its ledger. [Continue] runs the
// step again; new input starts afresh from the last committed state. If another
// node of the failed step is waiting for an answer, the Result lists its
// question too: the step runs again once it is answered (Continue is refused
// until then).
//
// A commit that leaves the run more to do sets the thread's status to running
// (interlude.ThreadRunning): an answer that leaves no question pending (committed
// before any code runs because of it), and a step after which nodes are due.
// The run's last commit sets the status it ends with: idle when done,
// interrupted at a question or a breakpoint, failed. A run that stops before its
// end, because its process dies or its context is cancelled (a Stream whose
// consumer stops early, a server's Close), commits nothing more: the thread
// stays at its last checkpoint and, if that left the run more to do, reads as
// running, neither idle with nodes due nor interrupted without a question. New
// input is then refused with interlude.ErrThreadBusy until the run is finished:
// [Recover] finishes it from the last checkpoint (a server does so by itself
// for every such thread), as do [Continue] and the same answer sent again.
// Committed steps are not run again, the step that was in flight runs again
// (at least once, as after any crash), and an answered step's tasks receive the
// recorded answers. So cancelling a run stops it for now, not for good;
// whoever finishes it holds the thread (a lock in the process and, in a store
// several processes share, the thread's lease), so two runs of a thread never
// overlap.
//
// A question may have a time to live (interlude.Request.TTL). Once it passes,
// the question takes no answer but a cancellation, and it is closed with
// interlude.Expire, which a server does by itself; the node sees a cancelled
// answer whose Expired is set.
//
// # Durability
//
// Nothing a graph has told anyone about is lost: a commit is durable (on disk,
// or synchronously committed on Postgres) before it is acknowledged, which is
// before Invoke returns the run's result, a stream or a listener hears of a
// pause, an answer or the run's end, and before any answer a server builds
// from them. An answer heard of by nobody until its run returns
// ([WithListeners]) becomes durable with the run's next durable commit. With the default, [DurabilityAsync], the steps of a run between
// those points are committed in order without waiting for the disk: a crash of
// the process loses none of them, and a power loss or an operating system crash
// loses at most those steps, which then run again from the last durable
// checkpoint exactly as the step in flight does after a crash. Events that
// report progress within a run (updates, messages) and reads of a running
// thread may show such a step before it is durable. [WithDurability] chooses
// [DurabilitySync] (every step durable before the next starts) or
// [DurabilityExit] (only the end of a run); the store learns of each commit's
// choice through store.Append's NoSync.
//
// # Inspecting and steering
//
// [Graph.State] reads a thread, [Graph.History] lists its checkpoints with the
// questions raised and the answers given, [Graph.UpdateState] edits its state as
// if a node had written it, [Graph.Fork] continues it from an older checkpoint
// and [Graph.Delete] forgets it. [Graph.Stream] runs a command like Invoke and
// yields its events as they happen.
//
// # Storage and history
//
// A thread is stored as a log of records, one per commit, each holding only
// what its commit changed, and a snapshot of the whole state every so often: a
// snapshot is written once replaying the records since the last one would read
// more than twice the state's weight (the last snapshot's size plus what
// appends and merges added since), and at least 4 KiB. A state that only grows
// (a conversation) is rebuilt from its records about as cheaply as from a
// snapshot, so it is not snapshotted over and over as it grows: a turn costs
// the same on the thousandth turn as on the tenth. A state whose fields are
// replaced gets a snapshot every two states' weight of records. The store keeps
// every snapshot.
// Snapshots above 4 KiB are stored compressed. Loading a thread reads the newest
// snapshot and the records after it.
//
// [Graph.History] pages the log from the newest record back: a page of Limit
// checkpoints before the cursor Before reads those records, the newest snapshot
// older than the page, and the records between the two; it rebuilds the state
// before the page from them and applies the page's records, copying the values
// at each. The snapshot spacing bounds the records between by about twice the
// state's weight, so a page costs what the state weighs, not what the thread's
// length does. (What grows is the state itself: the
// values of a conversation's latest checkpoint hold the whole conversation.)
// [Graph.Fork] finds its checkpoint's state the same way. Pass the oldest ID of
// a page as the next page's Before: checkpoint ids never change, so paging is
// stable while the thread grows.
//
// A Graph is safe for concurrent use: runs of one thread are serialised, and in
// a store shared by several processes (store.Leaser) a lease keeps them apart.
//
// # Memory
//
// Between runs a graph keeps the states of recently used threads in memory, so
// that the next run on a thread need not load it: at most [DefaultCacheBytes]
// (64 MiB) of them by default, measured by the size of their stored form, least
// recently used evicted first; a state larger than an eighth of the budget is
// not kept. [WithCacheBytes] sets the budget (0 turns the cache off) and
// [WithCacheSize] also caps the number of states. A cached state is used only
// once the store confirms it is current, so the cache never changes what a run
// sees, only how fast it starts.
//
// # Subgraphs
//
// A compiled graph runs inside another's task as a node ([SubgraphNode]) or
// from a node's or tool's code ([Subgraph]), in the parent's thread under a
// namespace. Its questions are pending on the parent thread with their full
// path (["approval", "manager"]); on an answer it goes on from its own
// checkpoint, and its finished steps are not run again. [Snapshot.Subgraphs]
// lists waiting subgraphs by namespace, and [WithSubgraphs] makes a stream carry
// their events. A breakpoint names a subgraph's node by its path from the
// parent ([InterruptBefore]("approval/finance")), and [Graph.ForkSubgraph]
// continues a thread from a subgraph's kept checkpoint, by namespace. Each
// call of a subgraph starts with an empty [RunMemory], so sticky approvals stay
// within it. docs/ARCHITECTURE.md says where their checkpoints are kept.
//
// # Tracing
//
// Runs emit OpenTelemetry spans through [WithTracerProvider]'s provider, or the
// global one: "interlude.run <graph>", "interlude.step" and "interlude.node
// <node>". Each question is an "interlude.pause" event of the span that raised
// it (its node's, or a tool call's), whose span context is stored with it
// (interlude.Interruption's Trace); each commit to the store is an
// "interlude.append" span, a child of the step's span (or the run's). The run that
// acts on answers starts a new trace linked to each answered pause and to the
// answering request, with the attributes interlude.answer.by,
// interlude.answer.decision and interlude.answer.wait_seconds. Without a
// provider no span is started and no question carries a trace.
package graph
