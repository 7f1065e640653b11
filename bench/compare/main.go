// Command compare runs Interlude and its LangGraph.js peer
// (bench/peers/langgraph) side by side on the same four workloads, and the
// agent approval cycle against its OpenAI Agents SDK peer
// (bench/peers/openai-agents), and prints one markdown table of medians, ratios
// and targets.
//
//	go run ./bench/compare                 # 3 rounds, growth at 200, 1000, 2000 turns
//	go run ./bench/compare -quick          # a smoke test: few iterations, 1 round
//	go run ./bench/compare -out bench/RESULTS.md
//
// Every workload × store runs in every round, interleaved: Interlude, then
// LangGraph (for SQLite twice: --synchronous full, which matches Interlude's
// durability, and the saver's default, synchronous=NORMAL). Each run is a fresh
// process: bench.mjs for LangGraph, this command's -worker mode for Interlude.
// The table shows, per metric, the median over rounds of each run's value.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/interludehq/interlude/bench/workloads"
)

const module = "github.com/interludehq/interlude"

func main() {
	log := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "compare: "+format+"\n", args...) }
	var (
		worker     = flag.Bool("worker", false, "internal: run one Interlude workload and print its JSON line")
		workload   = flag.String("workload", "", "with -worker: the workload")
		storeKind  = flag.String("store", "", "with -worker: memory or sqlite")
		iterations = flag.Int("iterations", 0, "with -worker: measured runs (0: the workload's default)")
		warmup     = flag.Int("warmup", -1, "with -worker: warm-up runs (-1: the default)")
		turns      = flag.Int("turns", 0, "with -worker: growth turns")

		rounds   = flag.Int("rounds", 3, "rounds of every workload × store, interleaved")
		quick    = flag.Bool("quick", false, "smoke test: few iterations on both sides, growth at 200 turns, 1 round unless -rounds is given")
		out      = flag.String("out", "", "also write the markdown report to this file")
		raw      = flag.String("raw", "", "also write every run's JSON line to this file")
		turnList = flag.String("growth-turns", "200,1000,2000", "growth turn counts, comma-separated")
		peerDir  = flag.String("peer", "", "the LangGraph peer's directory (default: bench/peers/langgraph in the module)")
		agentDir = flag.String("agents-peer", "", "the OpenAI Agents SDK peer's directory (default: bench/peers/openai-agents in the module)")
		only     = flag.String("only", "", "run only these workloads, comma-separated (e.g. agent_approval)")
		timeout  = flag.Duration("run-timeout", 30*time.Minute, "give up on a single run after this long")
	)
	flag.Parse()
	ctx := context.Background()

	if *worker {
		res, err := workloads.Run(ctx, workloads.Config{Workload: *workload, Store: *storeKind, Iterations: *iterations, Warmup: *warmup, Turns: *turns})
		if err != nil {
			fmt.Fprintln(os.Stderr, "compare -worker:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(res)
		return
	}

	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["rounds"] {
			*rounds = 1
		}
		if !set["growth-turns"] {
			*turnList = "200"
		}
	}
	if *rounds < 1 {
		log("-rounds must be at least 1")
		os.Exit(2)
	}
	growthTurns, err := parseTurns(*turnList)
	if err != nil {
		log("%v", err)
		os.Exit(2)
	}
	if *peerDir == "" || *agentDir == "" {
		root, err := moduleRoot()
		if err != nil {
			log("%v", err)
			os.Exit(1)
		}
		if *peerDir == "" {
			*peerDir = filepath.Join(root, "bench", "peers", "langgraph")
		}
		if *agentDir == "" {
			*agentDir = filepath.Join(root, "bench", "peers", "openai-agents")
		}
	}
	self, err := os.Executable()
	if err != nil {
		log("%v", err)
		os.Exit(1)
	}
	r := &runner{self: self, peerDir: *peerDir, agentDir: *agentDir, quick: *quick, timeout: *timeout, log: log}
	if *raw != "" {
		f, err := os.Create(*raw)
		if err != nil {
			log("%v", err)
			os.Exit(1)
		}
		defer f.Close()
		r.raw = f
	}
	if err := r.setupPeer(ctx); err != nil {
		log("peer setup: %v", err)
		os.Exit(1)
	}
	start := time.Now()
	env := environment(ctx)
	cases := Cases(growthTurns)
	if *only != "" {
		keep := strings.Split(*only, ",")
		cases = slices.DeleteFunc(cases, func(c Case) bool { return !slices.Contains(keep, c.Workload) })
		if len(cases) == 0 {
			log("-only %s: no such workload", *only)
			os.Exit(2)
		}
	}
	il, lg, err := r.runAll(ctx, cases, *rounds)
	if err != nil {
		log("%v", err)
		os.Exit(1)
	}
	env.loadEnd = loadavg()
	env.duration = time.Since(start)
	report := Report(env, r.describe(*rounds, growthTurns), Rows(cases, il, lg), il, lg)
	fmt.Print(report)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
			log("%v", err)
			os.Exit(1)
		}
		log("wrote %s", *out)
	}
}

func parseTurns(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad growth turn count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// Cases lists every comparison: each workload on each store (growth at each turn
// count), against the peer with synchronous=FULL and with its default for SQLite;
// then the agent approval cycle in memory against the OpenAI Agents SDK.
func Cases(growthTurns []int) []Case {
	var out []Case
	for _, w := range workloads.Names {
		ts := []int{0}
		if w == workloads.Growth {
			ts = growthTurns
		}
		for _, t := range ts {
			for _, s := range workloads.Stores {
				if s == workloads.SQLite {
					out = append(out,
						Case{Workload: w, Store: s, Turns: t, PeerSync: SyncFull},
						Case{Workload: w, Store: s, Turns: t, PeerSync: SyncDefault})
				} else {
					out = append(out, Case{Workload: w, Store: s, Turns: t})
				}
			}
		}
	}
	return append(out, Case{Workload: workloads.AgentApproval, Store: workloads.Memory, Peer: PeerOpenAIAgents})
}

// moduleRoot finds the Interlude module's directory from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(data)), "module "+module) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the Interlude module (go run ./bench/compare), or pass -peer")
		}
		dir = parent
	}
}

type runner struct {
	self     string
	peerDir  string
	agentDir string
	quick    bool
	timeout  time.Duration
	raw      io.Writer
	log      func(string, ...any)
}

// setupPeer installs the peers: LangGraph's with its setup.sh and the OpenAI
// Agents SDK's with npm ci, each if its node_modules is missing.
func (r *runner) setupPeer(ctx context.Context) error {
	if err := r.setupLangGraph(ctx); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(r.agentDir, "bench.mjs")); err != nil {
		return fmt.Errorf("no peer at %s: %w", r.agentDir, err)
	}
	if _, err := os.Stat(filepath.Join(r.agentDir, "node_modules")); err == nil {
		return nil
	}
	r.log("node_modules missing: running npm ci in %s", r.agentDir)
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = r.agentDir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func (r *runner) setupLangGraph(ctx context.Context) error {
	if _, err := exec.LookPath("node"); err != nil {
		return errors.New("node is not on PATH; the LangGraph.js peer needs Node >= 20")
	}
	if _, err := os.Stat(filepath.Join(r.peerDir, "bench.mjs")); err != nil {
		return fmt.Errorf("no peer at %s: %w", r.peerDir, err)
	}
	if _, err := os.Stat(filepath.Join(r.peerDir, "node_modules")); err == nil {
		return nil
	}
	r.log("node_modules missing: running %s/setup.sh", r.peerDir)
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(r.peerDir, "setup.sh"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// quick-mode sizes: enough to exercise every path, not to measure.
const (
	quickIterations = 30
	quickWarmup     = 5
)

func (r *runner) interludeArgs(c Case) []string {
	args := []string{"-worker", "-workload", c.Workload, "-store", c.Store}
	if c.Workload == workloads.Growth {
		args = append(args, "-turns", strconv.Itoa(c.Turns))
	}
	if r.quick {
		args = append(args, "-iterations", strconv.Itoa(quickIterations), "-warmup", strconv.Itoa(quickWarmup))
	}
	return args
}

// peer is the directory and the name the peer of c reports.
func (r *runner) peer(c Case) (dir, name string) {
	if c.Peer == PeerOpenAIAgents {
		return r.agentDir, PeerOpenAIAgents
	}
	return r.peerDir, "langgraph"
}

func (r *runner) peerArgs(c Case) []string {
	args := []string{"bench.mjs", "--workload", c.Workload, "--store", c.Store}
	if c.Workload == workloads.Growth {
		args = append(args, "--turns", strconv.Itoa(c.Turns))
	}
	if c.PeerSync == SyncFull {
		args = append(args, "--synchronous", "full")
	}
	if r.quick {
		args = append(args, "--iterations", strconv.Itoa(quickIterations), "--warmup", strconv.Itoa(quickWarmup))
	}
	return args
}

// run runs one process and parses the last line of its stdout as a Sample.
func (r *runner) run(ctx context.Context, dir, name string, args ...string) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return Sample{}, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, lastLines(stderr.String(), 20))
	}
	var line string
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			line = t
		}
	}
	var s Sample
	if err := json.Unmarshal([]byte(line), &s); err != nil {
		return Sample{}, fmt.Errorf("%s %s printed %.200q, not a JSON result: %w", name, strings.Join(args, " "), line, err)
	}
	return s, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (r *runner) record(round int, c Case, s Sample) {
	if r.raw == nil {
		return
	}
	json.NewEncoder(r.raw).Encode(struct {
		Round    int    `json:"round"`
		PeerSync string `json:"peer_sync,omitempty"`
		Sample
	}{round, c.PeerSync, s})
}

// runAll runs every case rounds times, interleaved: per workload × store (×
// turns), Interlude once and then each peer configuration once.
func (r *runner) runAll(ctx context.Context, cases []Case, rounds int) (il, lg map[Case][]Sample, err error) {
	il, lg = map[Case][]Sample{}, map[Case][]Sample{}
	t0 := time.Now()
	for round := 1; round <= rounds; round++ {
		for i, c := range cases {
			side := c.Side()
			if i == 0 || cases[i-1].Side() != side {
				s, err := r.run(ctx, "", r.self, r.interludeArgs(side)...)
				if err != nil {
					return nil, nil, err
				}
				if s.Workload != side.Workload || s.Store != side.Store {
					return nil, nil, fmt.Errorf("interlude worker answered %s/%s for %s/%s", s.Workload, s.Store, side.Workload, side.Store)
				}
				il[side] = append(il[side], s)
				r.record(round, side, s)
				r.log("[%d/%d %5.0fs] interlude %-15s %-6s %s", round, rounds, time.Since(t0).Seconds(), side.workloadLabel(), side.Store, headline(side, s))
			}
			dir, name := r.peer(c)
			s, err := r.run(ctx, dir, "node", r.peerArgs(c)...)
			if err != nil {
				return nil, nil, err
			}
			if s.Peer != name || s.Workload != c.Workload || s.Store != c.Store {
				return nil, nil, fmt.Errorf("peer answered %s %s/%s for %s/%s", s.Peer, s.Workload, s.Store, c.Workload, c.Store)
			}
			if c.PeerSync == SyncFull && fmt.Sprint(s.Config["synchronous"]) != "full" {
				return nil, nil, fmt.Errorf("peer run with --synchronous full reports synchronous=%v", s.Config["synchronous"])
			}
			lg[c] = append(lg[c], s)
			r.record(round, c, s)
			r.log("[%d/%d %5.0fs] %s %-15s %-6s %-8s %s", round, rounds, time.Since(t0).Seconds(), name, c.workloadLabel(), c.Store, c.PeerSync, headline(c, s))
		}
	}
	return il, lg, nil
}

func headline(c Case, s Sample) string {
	var keys []string
	switch c.Workload {
	case workloads.Chain10:
		keys = []string{"step_us", "run_us"}
	case workloads.HITLCycle, workloads.AgentApproval:
		keys = []string{"pause_us", "resume_us", "cycle_us"}
	case workloads.ParallelResume:
		keys = []string{"pause_us", "finish_us"}
	case workloads.Growth:
		keys = []string{"turn_us_mean", "turn_us_first_decile", "turn_us_last_decile", "bytes_on_disk", "bytes_in_memory"}
	}
	var parts []string
	for _, k := range keys {
		if v, ok := s.Metrics[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%g", k, v))
		}
	}
	return fmt.Sprintf("n=%d %s (%.1fs)", s.N, strings.Join(parts, " "), s.WallS)
}

// describe states how the runs were sized, for the report.
func (r *runner) describe(rounds int, growthTurns []int) string {
	var b strings.Builder
	if r.quick {
		fmt.Fprintf(&b, "- **QUICK smoke run** (`-quick`): %d iterations and %d warm-up runs per run on both sides. Not a measurement.\n", quickIterations, quickWarmup)
	} else {
		fmt.Fprintf(&b, "- Iterations per run: LangGraph uses bench.mjs's defaults; Interlude uses workloads.DefaultIterations")
		var parts []string
		for _, w := range workloads.Names {
			if w == workloads.Growth {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %d/%d", w, workloads.DefaultIterations[w][workloads.Memory], workloads.DefaultIterations[w][workloads.SQLite]))
		}
		parts = append(parts, fmt.Sprintf("%s %d (memory; the OpenAI Agents peer uses its bench.mjs default)", workloads.AgentApproval, workloads.DefaultIterations[workloads.AgentApproval][workloads.Memory]))
		fmt.Fprintf(&b, " (memory/sqlite: %s). Warm-up on both sides: max(20, iterations/10) runs; growth warms up 50 turns on a separate store. Exact counts are in the n column of the `-raw` output.\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, "- Rounds: %d. Growth turns: %v.\n", rounds, growthTurns)
	return b.String()
}

// env is what the report says about the machine.
type env struct {
	date      time.Time
	cpu       string
	cores     int
	kernel    string
	goVersion string
	node      string
	loadStart string
	loadEnd   string
	tmp       string
	command   string
	tree      string
	duration  time.Duration
}

func environment(ctx context.Context) *env {
	e := &env{date: time.Now().UTC(), cpu: cpuModel(), cores: runtime.NumCPU(), goVersion: runtime.Version(), loadStart: loadavg(), tmp: os.TempDir()}
	if k, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.kernel = "Linux " + strings.TrimSpace(string(k))
	} else {
		e.kernel = runtime.GOOS
	}
	if out, err := exec.CommandContext(ctx, "node", "--version").Output(); err == nil {
		e.node = strings.TrimSpace(string(out))
	}
	e.command = strings.TrimSpace("go run ./bench/compare " + strings.Join(os.Args[1:], " "))
	e.tree = gitTree(ctx)
	return e
}

// gitTree describes the source the Interlude side was built from: HEAD, and the
// paths outside bench/ that differ from it (go run builds the working tree).
func gitTree(ctx context.Context) string {
	root, err := moduleRoot()
	if err != nil {
		return "unknown"
	}
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		return strings.TrimRight(string(out), "\n"), err // keep the leading blanks of porcelain lines
	}
	head, err := git("log", "-1", "--format=%h %cd %s", "--date=format:%Y-%m-%d %H:%M")
	if err != nil {
		return "unknown (not a git checkout)"
	}
	status, _ := git("status", "--porcelain", "--", ".", ":(exclude)bench")
	var paths []string
	for _, line := range strings.Split(status, "\n") {
		if len(line) > 3 {
			paths = append(paths, line[3:])
		}
	}
	if len(paths) == 0 {
		return "`" + head + "`, clean outside bench/"
	}
	n := len(paths)
	if n > 5 {
		paths = append(paths[:5], "...")
	}
	return fmt.Sprintf("`%s`, plus %s uncommitted outside bench/ (%s)", head, plural(n, "path"), strings.Join(paths, ", "))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown (" + runtime.GOARCH + ")"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown (" + runtime.GOARCH + ")"
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}
