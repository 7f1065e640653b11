package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/interludehq/interlude/bench/workloads"
)

// Sample is one run's JSON line, from either side: bench.mjs prints it for
// LangGraph, the worker mode of this command for Interlude. Both print the
// shape of workloads.Result.
type Sample = workloads.Result

// Peer synchronous settings for SQLite runs of LangGraph.
const (
	// SyncDefault leaves SqliteSaver as it is: WAL with better-sqlite3's
	// compiled-in synchronous=NORMAL (no fsync per commit).
	SyncDefault = "default"
	// SyncFull runs the peer with --synchronous full, like Interlude's store.
	SyncFull = "full"
)

// Case is one comparison: a workload on a store (growth: at a number of turns)
// against one configuration of the peer.
type Case struct {
	Workload string
	Store    string
	Turns    int    // growth only
	PeerSync string // SQLite only: SyncFull or SyncDefault
	Peer     string // "" for LangGraph.js, or PeerOpenAIAgents
}

// PeerOpenAIAgents is the OpenAI Agents SDK peer (bench/peers/openai-agents),
// which runs the agent workloads.
const PeerOpenAIAgents = "openai-agents"

// Side is the Interlude run a case compares against: the peer's synchronous
// setting does not change how Interlude runs.
func (c Case) Side() Case { c.PeerSync, c.Peer = "", ""; return c }

func (c Case) workloadLabel() string {
	switch c.Workload {
	case workloads.Growth:
		return fmt.Sprintf("growth (%d turns)", c.Turns)
	case workloads.AgentApproval:
		return "agent approval cycle"
	}
	return c.Workload
}

func (c Case) storeLabel() string {
	if c.Peer == PeerOpenAIAgents {
		return c.Store + " — vs OpenAI Agents JS (run state saved and restored as a string)"
	}
	switch c.PeerSync {
	case SyncFull:
		return "sqlite — LG synchronous=FULL (durability matched)"
	case SyncDefault:
		return "sqlite — LG synchronous=NORMAL (SqliteSaver default)"
	}
	return c.Store
}

// Median is the median of xs (the mean of the middle two for an even count), NaN
// for none. NaNs in xs are ignored.
func Median(xs []float64) float64 {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// metricOf returns a metric of a sample, including derived ones:
// turn_decile_ratio (last decile over first decile of turn time), db_wal_bytes
// (the database file and its -wal after the checkpoint, without the -shm) and
// db_wal_ratio (that over the transcript bytes).
func metricOf(s Sample, key string) float64 {
	get := func(k string) float64 {
		if v, ok := s.Metrics[k]; ok {
			return v
		}
		return math.NaN()
	}
	switch key {
	case "turn_decile_ratio":
		return get("turn_us_last_decile") / get("turn_us_first_decile")
	case "db_wal_bytes":
		return get("bytes_on_disk_db") + get("bytes_on_disk_wal")
	case "db_wal_ratio":
		return (get("bytes_on_disk_db") + get("bytes_on_disk_wal")) / get("transcript_bytes")
	}
	v, ok := s.Metrics[key]
	if !ok {
		return math.NaN()
	}
	return v
}

// MedianMetric is the median over samples of one metric.
func MedianMetric(samples []Sample, key string) float64 {
	xs := make([]float64, len(samples))
	for i, s := range samples {
		xs[i] = metricOf(s, key)
	}
	return Median(xs)
}

// Unit kinds of a metric, which decide how values and ratios read.
type unit int

const (
	micros    unit = iota // time in µs: smaller is better, ratio reads "faster"
	sizeBytes             // storage: smaller is better, ratio reads "less"
	factor                // a dimensionless ratio (bytes per transcript byte, decile ratio)
)

// Target is what a metric must reach.
type Target struct {
	// Text is how the table states it.
	Text string
	// Met reports whether the medians reach it.
	Met func(interlude, langgraph float64) bool
	// InterludeOnly is set when only Interlude's value matters.
	InterludeOnly bool
}

// Faster requires peer/Interlude >= x.
func Faster(x float64) *Target {
	return &Target{Text: fmt.Sprintf("≥ %g× faster", x), Met: func(il, lg float64) bool { return lg/il >= x }}
}

// LessStorage requires LangGraph/Interlude >= x for bytes.
func LessStorage(x float64) *Target {
	return &Target{Text: fmt.Sprintf("≥ %g× less", x), Met: func(il, lg float64) bool { return lg/il >= x }}
}

// Flat requires Interlude's value (last decile over first decile) <= x.
func Flat(x float64) *Target {
	return &Target{Text: fmt.Sprintf("Interlude ≤ %g (flat)", x), Met: func(il, _ float64) bool { return il <= x }, InterludeOnly: true}
}

type metricSpec struct {
	key    string
	label  string
	unit   unit
	target func(c Case) *Target
	ratio  bool // show LangGraph/Interlude
}

// Targets of the comparison. In memory, Interlude is at least 100× faster
// than LangGraph.js per chain10 step and per pause-and-resume cycle. On SQLite,
// against LangGraph at its default (synchronous=NORMAL), at least 20× per step
// and 8× per cycle; against LangGraph with every commit fsynced, at least 5×
// for both. Besides these: at least 20× faster than the OpenAI Agents SDK per
// approval cycle, at least 100× less storage at 200 turns, and flat time per
// turn.
func speedTarget(c Case) *Target {
	switch {
	case c.Store == workloads.Memory:
		return Faster(100)
	case c.PeerSync == SyncFull:
		return Faster(5)
	case c.Workload == workloads.Chain10:
		return Faster(20)
	}
	return Faster(8)
}

func specs(c Case) []metricSpec {
	switch c.Workload {
	case workloads.Chain10:
		return []metricSpec{
			{key: "step_us", label: "step µs (mean)", unit: micros, target: speedTarget, ratio: true},
			{key: "run_us", label: "run µs (mean)", unit: micros, ratio: true},
			{key: "run_us_p99", label: "run µs (p99)", unit: micros, ratio: true},
		}
	case workloads.HITLCycle:
		return []metricSpec{
			{key: "pause_us", label: "pause µs (mean)", unit: micros, ratio: true},
			{key: "resume_us", label: "resume µs (mean)", unit: micros, ratio: true},
			{key: "cycle_us", label: "cycle µs (mean)", unit: micros, target: speedTarget, ratio: true},
		}
	case workloads.ParallelResume:
		return []metricSpec{
			{key: "pause_us", label: "pause µs (mean)", unit: micros, ratio: true},
			{key: "finish_us", label: "finish µs (mean)", unit: micros, ratio: true},
		}
	case workloads.AgentApproval:
		return []metricSpec{
			{key: "pause_us", label: "pause µs (mean)", unit: micros, ratio: true},
			{key: "resume_us", label: "resume µs (mean)", unit: micros, ratio: true},
			{key: "cycle_us", label: "cycle µs (mean)", unit: micros, target: func(Case) *Target { return Faster(20) }, ratio: true},
		}
	case workloads.Growth:
		flat := func(Case) *Target { return Flat(1.2) }
		var out []metricSpec
		if c.Store == workloads.SQLite {
			out = append(out,
				metricSpec{key: "db_wal_bytes", label: "bytes on disk (db + wal after checkpoint)", unit: sizeBytes, ratio: true,
					target: func(c Case) *Target {
						if c.Turns == 200 {
							return LessStorage(100)
						}
						return nil
					}},
				metricSpec{key: "db_wal_ratio", label: "bytes on disk / transcript byte", unit: factor},
				metricSpec{key: "bytes_on_disk", label: "bytes on disk incl. the 32 KiB -shm", unit: sizeBytes, ratio: true})
		} else {
			out = append(out,
				metricSpec{key: "bytes_in_memory", label: "bytes held (serialized)", unit: sizeBytes, ratio: true},
				metricSpec{key: "ratio", label: "bytes held / transcript byte", unit: factor})
		}
		return append(out,
			metricSpec{key: "turn_us_mean", label: "turn µs (mean)", unit: micros, ratio: true},
			metricSpec{key: "turn_us_p50", label: "turn µs (median)", unit: micros, ratio: true},
			metricSpec{key: "turn_us_first_decile", label: "turn µs (first decile)", unit: micros, ratio: true},
			metricSpec{key: "turn_us_last_decile", label: "turn µs (last decile)", unit: micros, ratio: true},
			metricSpec{key: "turn_decile_ratio", label: "turn time last/first decile", unit: factor, target: flat},
		)
	}
	return nil
}

// Row is one line of the results table. LangGraph holds the peer's value,
// whichever peer the row compares with.
type Row struct {
	Workload, Store, Metric string
	Interlude, LangGraph    float64
	Unit                    unit
	ShowRatio               bool
	Target                  *Target
}

// Ratio is the peer's value over Interlude's.
func (r Row) Ratio() float64 { return r.LangGraph / r.Interlude }

// Verdict is "met", "missed", or "" without a target (or without numbers).
func (r Row) Verdict() string {
	if r.Target == nil {
		return ""
	}
	if math.IsNaN(r.Interlude) || (math.IsNaN(r.LangGraph) && !r.Target.InterludeOnly) {
		return "no data"
	}
	if r.Target.Met(r.Interlude, r.LangGraph) {
		return "met"
	}
	return "**missed**"
}

// Rows builds the table rows of the cases, in order, from the samples of each
// side: interlude is keyed by Case.Side(), langgraph by the case itself.
func Rows(cases []Case, interlude, langgraph map[Case][]Sample) []Row {
	var rows []Row
	for _, c := range cases {
		il, lg := interlude[c.Side()], langgraph[c]
		for _, m := range specs(c) {
			r := Row{
				Workload: c.workloadLabel(), Store: c.storeLabel(), Metric: m.label,
				Interlude: MedianMetric(il, m.key), LangGraph: MedianMetric(lg, m.key),
				Unit: m.unit, ShowRatio: m.ratio,
			}
			if m.target != nil {
				r.Target = m.target(c)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// FormatValue renders a median in its unit.
func FormatValue(v float64, u unit) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	switch u {
	case sizeBytes:
		return humanBytes(v)
	case factor:
		return trimFloat(v, 2)
	}
	switch {
	case v >= 1000:
		return groupThousands(fmt.Sprintf("%.0f", v))
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func trimFloat(v float64, prec int) string {
	return fmt.Sprintf("%.*f", prec, v)
}

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func humanBytes(v float64) string {
	exact := groupThousands(fmt.Sprintf("%.0f", v))
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%s (%.2f GiB)", exact, v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%s (%.1f MiB)", exact, v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%s (%.1f KiB)", exact, v/(1<<10))
	}
	return exact
}

// FormatRatio renders LangGraph/Interlude as "×N faster" (time) or "×N less"
// (storage), or "×N slower"/"×N more" when Interlude is behind.
func FormatRatio(r float64, u unit) string {
	if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
		return "n/a"
	}
	better, worse := "faster", "slower"
	if u == sizeBytes {
		better, worse = "less", "more"
	}
	if r >= 1 {
		return "×" + ratioNumber(r) + " " + better
	}
	return "×" + ratioNumber(1/r) + " " + worse
}

func ratioNumber(r float64) string {
	switch {
	case r >= 100:
		return groupThousands(fmt.Sprintf("%.0f", r))
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// Table renders rows as one markdown table.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| workload | store | metric | Interlude | peer | ratio (peer/Interlude) | target | met/missed |\n")
	b.WriteString("|---|---|---|---:|---:|---|---|---|\n")
	for _, r := range rows {
		ratio, target := "—", "—"
		if r.ShowRatio {
			ratio = FormatRatio(r.Ratio(), r.Unit)
		}
		if r.Target != nil {
			target = r.Target.Text
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Workload, r.Store, r.Metric, FormatValue(r.Interlude, r.Unit), FormatValue(r.LangGraph, r.Unit), ratio, target, r.Verdict())
	}
	return b.String()
}
