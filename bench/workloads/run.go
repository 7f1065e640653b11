package workloads

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"github.com/interludehq/interlude/graph"
)

// DefaultIterations is how many measured runs (chain10), cycles (hitl_cycle,
// parallel_resume) a workload does when Config.Iterations is 0, per store: each
// takes roughly 1-3 s on the 2-core dev box. growth ignores it.
var DefaultIterations = map[string]map[string]int{
	Chain10:        {Memory: 5000, SQLite: 200},
	HITLCycle:      {Memory: 10000, SQLite: 500},
	Growth:         {Memory: 1, SQLite: 1},
	ParallelResume: {Memory: 5000, SQLite: 500},
	AgentApproval:  {Memory: 5000, SQLite: 300},
}

// DefaultTurns is growth's number of turns when Config.Turns is 0, as bench.mjs.
const DefaultTurns = 200

// Config selects a workload run.
type Config struct {
	// Workload is one of Names.
	Workload string
	// Store is Memory or SQLite.
	Store string
	// Iterations is the number of measured runs or cycles; 0 means
	// DefaultIterations. growth ignores it.
	Iterations int
	// Warmup is the number of unmeasured runs or cycles before measuring (for
	// growth: turns on a separate store); negative means the default of bench.mjs:
	// max(20, Iterations/10), and 50 turns for growth.
	Warmup int
	// Turns is growth's number of turns; 0 means DefaultTurns.
	Turns int
	// Dir is where SQLite files go; "" means os.TempDir().
	Dir string
}

func (c Config) withDefaults() (Config, error) {
	if !slices.Contains(Names, c.Workload) && !slices.Contains(AgentNames, c.Workload) {
		return c, fmt.Errorf("unknown workload %q (want one of %v or %v)", c.Workload, Names, AgentNames)
	}
	if !slices.Contains(Stores, c.Store) {
		return c, fmt.Errorf("unknown store %q (want one of %v)", c.Store, Stores)
	}
	if c.Iterations <= 0 {
		c.Iterations = DefaultIterations[c.Workload][c.Store]
	}
	if c.Turns <= 0 {
		c.Turns = DefaultTurns
	}
	if c.Warmup < 0 {
		if c.Workload == Growth {
			c.Warmup = 50
		} else {
			c.Warmup = max(20, (c.Iterations+9)/10)
		}
	}
	return c, nil
}

// Result is one workload run, shaped like the JSON line bench.mjs prints.
type Result struct {
	// Peer names what ran: "interlude" here; the peer's lines name the peer.
	Peer string `json:"peer"`
	// Workload and Store say what ran.
	Workload string `json:"workload"`
	Store    string `json:"store"`
	// Metrics are the measurements, named as bench.mjs names them (µs, bytes).
	Metrics map[string]float64 `json:"metrics"`
	// N is the number of measured runs, cycles or turns.
	N int `json:"n"`
	// Warmup is the number of unmeasured ones before.
	Warmup int `json:"warmup"`
	// Config describes the store (journal mode, synchronous, ...).
	Config map[string]any `json:"config"`
	// WallS is the run's wall time in seconds, warm-up included.
	WallS float64 `json:"wall_s"`
	// Versions are the Go and SQLite versions.
	Versions map[string]string `json:"versions"`
}

// Run runs one workload on a fresh store and returns its measurements. Every run
// is checked (counter 10, outcome refunded, five answers, the transcript); a
// failed check is an error.
func Run(ctx context.Context, c Config) (*Result, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	st, err := OpenStore(c.Store, c.Dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var (
		m map[string]float64
		n int
	)
	switch c.Workload {
	case Chain10:
		m, n, err = runChain10(ctx, st, c)
	case HITLCycle:
		m, n, err = runHITL(ctx, st, c)
	case Growth:
		m, n, err = runGrowth(ctx, st, c)
	case ParallelResume:
		m, n, err = runParallel(ctx, st, c)
	case AgentApproval:
		m, n, err = runAgentApproval(ctx, st, c)
	}
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", c.Workload, c.Store, err)
	}
	cfg := map[string]any{"kind": c.Store}
	if c.Store == SQLite {
		cfg["journal_mode"] = "wal"
		cfg["synchronous"] = "full"
		cfg["sqlite_version"] = SQLiteVersion()
	}
	return &Result{
		Peer: "interlude", Workload: c.Workload, Store: c.Store, Metrics: m, N: n, Warmup: c.Warmup,
		Config: cfg, WallS: r3(time.Since(t0).Seconds()), Versions: Versions(),
	}, nil
}

var seq atomic.Int64

// threadID returns a new thread id, unique in the process.
func threadID(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), seq.Add(1))
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

func runChain10(ctx context.Context, st *Store, c Config) (map[string]float64, int, error) {
	g, err := NewChain10(st)
	if err != nil {
		return nil, 0, err
	}
	for range c.Warmup {
		if err := RunChain10(ctx, g, threadID("chain10")); err != nil {
			return nil, 0, err
		}
	}
	runs := make([]float64, 0, c.Iterations)
	for range c.Iterations {
		t0 := time.Now()
		if err := RunChain10(ctx, g, threadID("chain10")); err != nil {
			return nil, 0, err
		}
		runs = append(runs, us(time.Since(t0)))
	}
	run := Mean(runs)
	return map[string]float64{
		"step_us": r3(run / 10), "run_us": r3(run),
		"run_us_p50": r3(Pct(runs, 50)), "run_us_p99": r3(Pct(runs, 99)),
	}, len(runs), nil
}

func runHITL(ctx context.Context, st *Store, c Config) (map[string]float64, int, error) {
	g, err := NewHITL(st)
	if err != nil {
		return nil, 0, err
	}
	return c.pauseResume("hitl",
		func(id string) error { return Pause(ctx, g, id) },
		func(id string) error { return Approve(ctx, g, id) })
}

// pauseResume times pause then resume on a fresh thread per run, and reports
// the mean pause, resume and cycle times with their p50s and the cycle's p99.
func (c Config) pauseResume(prefix string, pause, resume func(id string) error) (map[string]float64, int, error) {
	var paused, resumed, cycle []float64
	once := func(measure bool) error {
		id := threadID(prefix)
		t0 := time.Now()
		if err := pause(id); err != nil {
			return err
		}
		t1 := time.Now()
		if err := resume(id); err != nil {
			return err
		}
		t2 := time.Now()
		if measure {
			paused = append(paused, us(t1.Sub(t0)))
			resumed = append(resumed, us(t2.Sub(t1)))
			cycle = append(cycle, us(t2.Sub(t0)))
		}
		return nil
	}
	if err := c.repeat(once); err != nil {
		return nil, 0, err
	}
	return map[string]float64{
		"pause_us": r3(Mean(paused)), "resume_us": r3(Mean(resumed)), "cycle_us": r3(Mean(cycle)),
		"pause_us_p50": r3(Pct(paused, 50)), "resume_us_p50": r3(Pct(resumed, 50)), "cycle_us_p99": r3(Pct(cycle, 99)),
	}, len(cycle), nil
}

func runParallel(ctx context.Context, st *Store, c Config) (map[string]float64, int, error) {
	g, err := NewParallel(st)
	if err != nil {
		return nil, 0, err
	}
	var pause, finish []float64
	once := func(measure bool) error {
		id := threadID("par")
		t0 := time.Now()
		answers, err := PauseAll(ctx, g, id)
		if err != nil {
			return err
		}
		t1 := time.Now()
		if err := FinishAll(ctx, g, id, answers); err != nil {
			return err
		}
		t2 := time.Now()
		if measure {
			pause = append(pause, us(t1.Sub(t0)))
			finish = append(finish, us(t2.Sub(t1)))
		}
		return nil
	}
	if err := c.repeat(once); err != nil {
		return nil, 0, err
	}
	return map[string]float64{
		"pause_us": r3(Mean(pause)), "finish_us": r3(Mean(finish)), "cycle_us": r3(Mean(pause) + Mean(finish)),
		"pause_us_p50": r3(Pct(pause, 50)), "finish_us_p50": r3(Pct(finish, 50)),
	}, len(finish), nil
}

// GrowthRun is one measured growth thread.
type GrowthRun struct {
	// ThreadID is the thread.
	ThreadID string
	// TurnUS is the time of each turn's Invoke, in µs.
	TurnUS []float64
	// TranscriptBytes is the JSON length of the final message list.
	TranscriptBytes int
}

// RunGrowth runs turns turns of growth on a new thread of g, timing each Invoke,
// and checks the final transcript.
func RunGrowth(ctx context.Context, g *graph.Graph[TranscriptState], turns int) (*GrowthRun, error) {
	run := &GrowthRun{ThreadID: threadID("growth"), TurnUS: make([]float64, 0, turns)}
	var msgs []string
	for t := range turns {
		t0 := time.Now()
		var err error
		msgs, err = Turn(ctx, g, run.ThreadID, t)
		if err != nil {
			return nil, err
		}
		run.TurnUS = append(run.TurnUS, us(time.Since(t0)))
	}
	var err error
	run.TranscriptBytes, err = CheckTranscript(msgs, turns)
	return run, err
}

func runGrowth(ctx context.Context, st *Store, c Config) (map[string]float64, int, error) {
	// Warm up on a separate store, so the measured file holds only the measured thread.
	if c.Warmup > 0 {
		ws, err := OpenStore(c.Store, c.Dir)
		if err != nil {
			return nil, 0, err
		}
		wg, err := NewGrowth(ws)
		if err == nil {
			_, err = RunGrowth(ctx, wg, c.Warmup)
		}
		ws.Close()
		if err != nil {
			return nil, 0, err
		}
	}
	g, err := NewGrowth(st)
	if err != nil {
		return nil, 0, err
	}
	run, err := RunGrowth(ctx, g, c.Turns)
	if err != nil {
		return nil, 0, err
	}
	m, err := GrowthMetrics(ctx, st, run)
	return m, len(run.TurnUS), err
}

// GrowthMetrics measures a finished growth run on st: turn times (mean, first and
// last decile, median), the transcript, the payload the store holds for the
// thread and, for SQLite, the files after a checkpoint (TRUNCATE).
func GrowthMetrics(ctx context.Context, st *Store, run *GrowthRun) (map[string]float64, error) {
	tr := float64(run.TranscriptBytes)
	dec := max(1, len(run.TurnUS)/10)
	m := map[string]float64{
		"turns":                float64(len(run.TurnUS)),
		"transcript_bytes":     tr,
		"turn_us_mean":         r3(Mean(run.TurnUS)),
		"turn_us_first_decile": r3(Mean(run.TurnUS[:dec])),
		"turn_us_last_decile":  r3(Mean(run.TurnUS[len(run.TurnUS)-dec:])),
		"turn_us_p50":          r3(Pct(run.TurnUS, 50)),
	}
	p, err := ThreadPayload(ctx, st, run.ThreadID)
	if err != nil {
		return nil, err
	}
	m["payload_bytes"] = float64(p.Total())
	m["payload_ratio"] = r3(float64(p.Total()) / tr)
	m["payload_records_bytes"] = float64(p.Records)
	m["payload_snapshot_bytes"] = float64(p.Snapshot)
	m["n_records"] = float64(p.NRecords)
	if st.Kind == SQLite {
		d, err := st.Disk()
		if err != nil {
			return nil, err
		}
		m["bytes_on_disk"] = float64(d.After.Total())
		m["bytes_on_disk_db"] = float64(d.After.DB)
		m["bytes_on_disk_wal"] = float64(d.After.WAL)
		m["bytes_on_disk_shm"] = float64(d.After.SHM)
		m["bytes_on_disk_raw"] = float64(d.Raw.Total())
		m["bytes_on_disk_raw_db"] = float64(d.Raw.DB)
		m["bytes_on_disk_raw_wal"] = float64(d.Raw.WAL)
		m["bytes_on_disk_raw_shm"] = float64(d.Raw.SHM)
		m["store_size"] = float64(d.Size)
		m["ratio"] = r3(float64(d.After.Total()) / tr)
		m["ratio_raw"] = r3(float64(d.Raw.Total()) / tr)
	} else {
		m["bytes_in_memory"] = float64(p.Total())
		m["ratio"] = r3(float64(p.Total()) / tr)
	}
	return m, nil
}

// Mean is the arithmetic mean of xs (NaN for none).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Pct is the p-th percentile of xs as bench.mjs computes it: the element at
// floor(p/100*n) of the sorted values (the last for p = 100).
func Pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(math.Floor(p/100*float64(len(s)))))]
}

func r3(x float64) float64 { return math.Round(x*1000) / 1000 }

// Versions reports the Go toolchain and the SQLite driver this binary was built
// with.
func Versions() map[string]string {
	v := map[string]string{"go": runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "modernc.org/sqlite" {
				v["modernc.org/sqlite"] = d.Version
			}
		}
	}
	if s := SQLiteVersion(); s != "" {
		v["sqlite"] = s
	}
	return v
}

// SQLiteVersion is the version of the SQLite library linked in (modernc.org/sqlite),
// or "" if it cannot be asked.
func SQLiteVersion() string {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return ""
	}
	defer db.Close()
	var v string
	if db.QueryRow("select sqlite_version()").Scan(&v) != nil {
		return ""
	}
	return v
}

// repeat runs once c.Warmup times unmeasured, then c.Iterations times measured.
func (c Config) repeat(once func(measure bool) error) error {
	for range c.Warmup {
		if err := once(false); err != nil {
			return err
		}
	}
	for range c.Iterations {
		if err := once(true); err != nil {
			return err
		}
	}
	return nil
}
