// Package workloads is Interlude's side of the side-by-side benchmark against
// LangGraph.js (bench/peers/langgraph/bench.mjs): the same four workloads, built
// with package graph, run on a store/memory or store/sqlite store.
//
//   - chain10: ten nodes in a line, each adding 1 to a counter; a new thread per
//     run. Metrics step_us, run_us.
//   - hitl_cycle: one node interrupting with {"amount":150}; resumed with
//     {"approved": true} it sets outcome "refunded"; a new thread per cycle.
//     Metrics pause_us, resume_us, cycle_us.
//   - growth: one thread; each turn one Invoke whose input appends one 200-byte
//     message (Message) to a list with the append reducer. Metrics: turn time
//     (mean, first and last decile), transcript bytes, bytes stored and, for
//     SQLite, bytes on disk after a TRUNCATE checkpoint.
//   - parallel_resume: five parallel branches from Start, each interrupting; all
//     five answered in one graph.Respond. Metrics pause_us, finish_us.
//
// SQLite stores are opened with synchronous=FULL, so every step is on disk before
// the next runs. Run runs one workload and returns a Result shaped like the JSON
// line bench.mjs prints; bench/compare runs both sides and tabulates them. Every
// run checks its result (counter 10, outcome refunded, five answers, the
// transcript), so a wrong answer fails instead of being timed.
package workloads
