package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/interludehq/interlude/bench/workloads"
)

// Report renders the whole markdown report: the machine, how the runs were made,
// the one results table, and how to read it.
func Report(e *env, sizing string, rows []Row, il, lg map[Case][]Sample) string {
	var b strings.Builder
	b.WriteString("# Interlude vs LangGraph.js and the OpenAI Agents SDK: side-by-side benchmark\n\n")
	fmt.Fprintf(&b, "- Date: %s\n", e.date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- Command: `%s` (from the repository root)\n", e.command)
	if e.tree != "" {
		fmt.Fprintf(&b, "- Source: %s\n", e.tree)
	}
	fmt.Fprintf(&b, "- Machine: %s, %d cores, %s; SQLite files in %s\n", e.cpu, e.cores, e.kernel, e.tmp)
	fmt.Fprintf(&b, "- Load average (1/5/15 min): %s at start, %s at end (the machine is shared; the median over rounds damps, not removes, the noise)\n", e.loadStart, e.loadEnd)
	fmt.Fprintf(&b, "- Interlude: Go %s, %s\n", e.goVersion, versionsOf(il, "modernc.org/sqlite", "sqlite"))
	fmt.Fprintf(&b, "- LangGraph.js: Node %s, %s\n", e.node, versionsOf(lg, "@langchain/langgraph", "@langchain/core", "@langchain/langgraph-checkpoint", "@langchain/langgraph-checkpoint-sqlite", "better-sqlite3", "sqlite"))
	fmt.Fprintf(&b, "- OpenAI Agents SDK: Node %s, %s\n", e.node, versionsOf(lg, "@openai/agents-core", "zod"))
	if e.duration > 0 {
		fmt.Fprintf(&b, "- Wall time: %s\n", e.duration.Round(time.Second))
	}
	b.WriteString(sizing)
	b.WriteString("- Each run is a fresh process (bench.mjs for LangGraph, `compare -worker` for Interlude); in each round every case runs Interlude first, then LangGraph. A cell is the median over rounds of the run's mean (or decile mean, or size); \"turn time last/first decile\" is computed per run, then the median taken, so it need not equal the quotient of the two decile cells above it. The ratio is LangGraph's median over Interlude's.\n")
	b.WriteString("- Durability: Interlude runs at its default durability (at acknowledgement): every step is committed before the next, and the commits a caller is told of (a pause returned, a run's end) are fsynced before they are returned (WAL, **one fdatasync of the log** after those commits, as synchronous=FULL does), while the steps between them are committed to the WAL without an fsync. LangGraph runs with `durability: \"sync\"` (every step committed before the next); its SqliteSaver is WAL with better-sqlite3's default **synchronous=NORMAL** (no fsync, not even for the commit a caller is told of) unless run with `--synchronous full` (every step fsynced). SQLite rows are shown against both; Interlude's numbers are the same in both rows.\n")
	b.WriteString("- Memory: Interlude store/memory vs LangGraph MemorySaver. For growth in memory, \"bytes held\" is the serialized bytes each keeps for the thread (Interlude: record and snapshot data; LangGraph: checkpoints, metadata and writes in MemorySaver).\n")
	b.WriteString("- Storage (growth, SQLite): the database file plus its -wal after `PRAGMA wal_checkpoint(TRUNCATE)`, read with stat on both sides; the target is judged on that. The -shm file (the WAL's shared-memory index, 32 KiB on both sides, removed when the last connection closes) is shown in a separate row.\n")
	b.WriteString("- Agent approval cycle (memory, against the OpenAI Agents SDK for JavaScript): an agent with lookup_order and issue_refund (approval required) over a scripted model with no network (Interlude: model/scripted; the SDK: a Model implementation in bench.mjs); one turn calls lookup_order twice and issue_refund once, the run pauses on the refund's approval with both lookups done, the approval resumes it, the refund runs and the model answers. Interlude keeps the paused thread in store/memory; the SDK's paused run is saved with `RunState.toString()` and restored with `RunState.fromString` before the approval.\n")
	var ts []string
	seen := map[int]bool{}
	for _, c := range keysOf(il) {
		if c.Workload == workloads.Growth && !seen[c.Turns] {
			seen[c.Turns] = true
			ts = append(ts, fmt.Sprintf("%d turns: %s bytes", c.Turns, groupThousands(fmt.Sprint(workloads.TranscriptBytes(c.Turns)))))
		}
	}
	if len(ts) > 0 {
		fmt.Fprintf(&b, "- growth transcript (JSON of the final message list, identical on both sides): %s.\n", strings.Join(ts, "; "))
	}
	b.WriteString("\n")
	b.WriteString(Table(rows))
	met, missed := 0, 0
	var missedRows []string
	for _, r := range rows {
		switch r.Verdict() {
		case "met":
			met++
		case "**missed**":
			missed++
			missedRows = append(missedRows, fmt.Sprintf("%s / %s / %s", r.Workload, r.Store, r.Metric))
		}
	}
	fmt.Fprintf(&b, "\nTargets: %d met, %d missed.", met, missed)
	if missed > 0 {
		fmt.Fprintf(&b, " Missed: %s.", strings.Join(missedRows, "; "))
	}
	b.WriteString("\n")
	return b.String()
}

func keysOf(m map[Case][]Sample) []Case {
	var out []Case
	for c := range m {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Case) int {
		if a.Workload != b.Workload {
			return strings.Compare(a.Workload, b.Workload)
		}
		return a.Turns - b.Turns
	})
	return out
}

// versionsOf lists the named versions reported by the samples (the first sample
// that has each; "sqlite" also looks in the config's sqlite_version).
func versionsOf(m map[Case][]Sample, names ...string) string {
	var parts []string
	for _, n := range names {
		var v string
		for _, c := range keysOf(m) {
			for _, s := range m[c] {
				if v == "" {
					v = s.Versions[n]
				}
				if v == "" && n == "sqlite" {
					if sv, ok := s.Config["sqlite_version"].(string); ok {
						v = sv
					}
				}
			}
		}
		if v != "" {
			label := n
			if n == "sqlite" {
				label = "SQLite"
			}
			parts = append(parts, label+" "+v)
		}
	}
	return strings.Join(parts, ", ")
}
