// Command load measures the server under load over loopback: N clients each
// start a refund thread, read the pause, and answer it, for a fixed time. It
// reports cycles per second, the p50/p99 latency of each request, the CPU each
// part used and the machine's context switches per cycle at every client
// count, and the server's resident memory before and after a number of threads
// are left paused (a paused thread should cost no memory in the server). Before
// and after the runs it times a loopback round trip between two idle Go
// processes, which tells how fast a shared host is running at the time.
//
//	go run ./bench/load [-clients 1,8,64] [-duration 10s] [-paused 100000]
//	go run ./bench/load -postgres DSN [-replicas 3] [-clients 16,64,128] [-paused 0]
//	go run ./bench/load -trace [-clients 64] [-paused 0]
//	go run ./bench/load -trace=memory,otlp [-clients 64,64,64] [-paused 0]
//	go run ./bench/load -webhook [-clients 64] [-paused 0]
//
// It builds cmd/interlude, starts `interlude serve` on a free loopback port with a
// fresh SQLite file, and drives it with the Go client. With -postgres it starts
// -replicas servers instead, all on the database at DSN (in a fresh schema,
// dropped at the end), and sends the requests to them round robin, as a load
// balancer would: a thread's start and its answer usually reach different
// replicas. The DSN may set the servers' pool size (pool_max_conns=N).
//
// -trace=MODES lists how to trace, each mode with servers of its own (and a
// database or schema of their own), run one after the other at each client
// count, so that a shared host's drift touches them alike: off (untraced);
// memory (every request, run, step, node and append traced, always sampled,
// into the SDK's in-memory exporter, OTEL_TRACES_EXPORTER=memory); otlp (the
// same, exported by OTLP over HTTP to a sink in this process, which reads and
// drops them; its CPU counts as the load generator's). -trace alone is
// -trace=off,memory,otlp. With -webhook the servers
// deliver every notification (a question raised, answered, ...) to a webhook
// receiver in this process, which counts each notice's id: each client
// count's run then ends once no notice is left to deliver, so its CPU per
// cycle includes delivering the cycles' notices, and the report says how many
// notices arrived, more than once, or never. Compare with a run without
// -webhook for what delivery adds.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/cputime"
)

func main() {
	if os.Getenv(echoEnv) != "" {
		serveEcho()
		return
	}
	clients := flag.String("clients", "1,8,64", "comma-separated client counts")
	duration := flag.Duration("duration", 10*time.Second, "how long each client count runs")
	paused := flag.Int("paused", 100000, "threads to leave paused before reading the server's memory (0 skips)")
	dsn := flag.String("postgres", "", "run the servers on the Postgres database at `DSN` instead of SQLite")
	replicas := flag.Int("replicas", 1, "with -postgres, how many servers share the database")
	procs := flag.Int("server-procs", 0, "run each server with GOMAXPROCS=`N` (0: Go's default, every core)")
	var modes traceModes
	flag.Var(&modes, "trace", "how to trace, a comma-separated list of `MODES` each run with servers of its own: off, memory (every span sampled into the in-memory exporter), otlp (every span sampled and sent by OTLP/HTTP to a sink in this process); alone: off,memory,otlp")
	webhook := flag.Bool("webhook", false, "deliver every notification to a webhook receiver in this process, which checks that each arrives once")
	flag.Parse()
	log.SetFlags(0)
	if flag.NArg() > 0 {
		// -trace stands alone as a boolean flag: its modes follow an "=",
		// and a word after it would end the flags, the rest unread.
		log.Fatalf("unexpected argument %q: give the tracing modes as -trace=%s", flag.Arg(0), flag.Arg(0))
	}
	if *replicas < 1 || (*replicas > 1 && *dsn == "") {
		log.Fatal("-replicas needs -postgres, and at least 1")
	}
	if len(modes) == 0 {
		modes = traceModes{"off"}
	}
	if *webhook && len(modes) > 1 {
		log.Fatal("-webhook takes a single -trace mode")
	}
	header := "SQLite (synchronous=FULL)"
	if *dsn != "" {
		header = fmt.Sprintf("Postgres %s, %d replica(s) round robin", pgVersion(*dsn), *replicas)
	}

	exitOnSignal()
	dir, err := os.MkdirTemp("", "interlude-load-")
	if err != nil {
		log.Fatal(err)
	}
	atExit(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "interlude")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/interlude").CombinedOutput(); err != nil {
		fatalf("build: %v\n%s", err, out)
	}
	ctx := context.Background()
	// Enough idle connections for every client to every server.
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}
	var env []string
	if *procs > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(*procs))
	}
	var sink *traceSink
	if slices.Contains(modes, "otlp") {
		sink = startTraceSink()
	}
	if len(modes) > 1 || modes[0] != "off" {
		header += ", tracing " + strings.Join(modes, " / ") + " (memory: always_on into the in-memory exporter; otlp: always_on, OTLP/HTTP to a local sink)"
	}
	var rcv *receiver
	if *webhook {
		rcv = startReceiver()
		header += ", every notification delivered to a local webhook receiver"
	}
	var fleets []*fleet
	for _, mode := range modes {
		f := &fleet{mode: mode}
		fenv := env
		switch mode {
		case "memory":
			fenv = append(slices.Clip(env), "OTEL_TRACES_EXPORTER=memory", "OTEL_TRACES_SAMPLER=always_on")
		case "otlp":
			fenv = append(slices.Clip(env), "OTEL_EXPORTER_OTLP_ENDPOINT="+sink.url, "OTEL_TRACES_SAMPLER=always_on")
		}
		if *dsn != "" {
			b := make([]byte, 6)
			rand.Read(b)
			f.schema = "interlude_load_" + hex.EncodeToString(b)
			atExit(func() { dropSchema(*dsn, f.schema) })
		}
		var cs []*client.Client
		for range *replicas {
			addr := freeAddr()
			args := []string{"serve", "--addr", addr, "--db", filepath.Join(dir, "load-"+mode+".db")}
			if *dsn != "" {
				args = []string{"serve", "--addr", addr, "--postgres", withAppName(*dsn, f.schema), "--postgres-schema", f.schema}
			}
			if rcv != nil {
				args = append(args, "--webhook", rcv.url, "--webhook-secret", rcv.secret)
			}
			srv := exec.Command(bin, args...)
			if len(fenv) > 0 {
				srv.Env = append(os.Environ(), fenv...)
			}
			srv.Stdout, srv.Stderr = nil, nil // request logs are part of the server's work, but not of the report
			if err := srv.Start(); err != nil {
				fatalf("%v", err)
			}
			atExit(func() { srv.Process.Kill(); srv.Wait() })
			f.srvs = append(f.srvs, srv)
			c, err := client.New("http://"+addr, client.WithHTTPClient(hc))
			if err != nil {
				fatalf("%v", err)
			}
			cs = append(cs, c)
		}
		for _, c := range cs {
			if err := waitHealthy(ctx, c); err != nil {
				fatalf("%v", err)
			}
		}
		f.c = &roundRobin{cs: cs}
		fleets = append(fleets, f)
	}

	if *procs > 0 {
		header += fmt.Sprintf(", GOMAXPROCS=%d per server", *procs)
	}
	fmt.Printf("# load: refund cycles over loopback, %s, %s per client count\n", header, *duration)
	fmt.Printf("# %s, %d cores, %s, load average %s at start\n", cpuModel(), runtime.NumCPU(), runtime.Version(), loadAvg())
	fmt.Printf("# host speed: a loopback TCP round trip between two idle Go processes took %s before the runs\n", hostLine())
	fmt.Printf("# CPU per cycle: what the servers, their database backends and this load generator used, divided by the cycles;\n")
	fmt.Printf("# commits per cycle: the transactions the database committed (pg_stat_database), divided by the cycles;\n")
	fmt.Printf("# machine: every process's CPU per cycle, this load generator's included (/proc/stat): on a shared host\n")
	fmt.Printf("# whose speed drifts, the same build's cycles per second move with it;\n")
	fmt.Printf("# switches per cycle: the machine's context switches (/proc/stat ctxt), divided by the cycles\n\n")
	modeCol, modeSep := "", ""
	if len(modes) > 1 || modes[0] != "off" {
		modeCol, modeSep = " tracing |", "---|"
	}
	fmt.Println("|" + modeCol + " clients | cycles/s | start p50 | start p99 | answer p50 | answer p99 | CPU/cycle servers | CPU/cycle database | CPU/cycle load generator | CPU/cycle machine | commits/cycle | switches/cycle | errors |")
	fmt.Println("|" + modeSep + "---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	var seq atomic.Int64
	var drained []string
	for _, field := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			fatalf("bad client count %q", field)
		}
		for _, f := range fleets {
			before := measure(f.srvs, *dsn, f.schema)
			r := run(ctx, f.c, n, *duration, &seq)
			if rcv != nil {
				// The cycles' cost includes delivering their notices.
				d, err := drain(ctx, f.c, time.Minute)
				if err != nil {
					fatalf("%d clients: %v", n, err)
				}
				drained = append(drained, fmt.Sprintf("%d clients: the last notices were delivered %s after the run", n, d.Round(time.Millisecond)))
			}
			u := measure(f.srvs, *dsn, f.schema).since(before)
			cycles := float64(r.cycles)
			ms := func(d time.Duration) string { return perCycle(float64(d.Microseconds())/1000, cycles, "%.2f ms") }
			count := func(n int64) string { return perCycle(float64(n), cycles, "%.2f") }
			mode := ""
			if modeCol != "" {
				mode = " " + f.mode + " |"
			}
			fmt.Printf("|%s %d | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", mode, n, cycles/r.elapsed.Seconds(),
				pct(r.start, 50), pct(r.start, 99), pct(r.answer, 50), pct(r.answer, 99), ms(u.servers), ms(u.database),
				ms(u.generator), ms(u.machine), count(u.commits), count(u.switches), r.errors)
		}
	}
	if rcv != nil {
		fmt.Println()
		for _, l := range drained {
			fmt.Println("webhook: " + l)
		}
		got, err := rcv.check(ctx, fleets[0].c)
		if err != nil {
			fatalf("reading the delivery log: %v", err)
		}
		fmt.Println("webhook: " + got)
	}
	fmt.Printf("\nhost speed: the loopback round trip took %s after the runs\n", hostLine())
	if sink != nil {
		fmt.Printf("trace sink: %d OTLP exports, %s received\n", sink.exports.Load(), mib(sink.bytes.Load()))
	}
	if *paused > 0 {
		f := fleets[0]
		before := rssAll(f.srvs)
		start := time.Now()
		pauseMany(ctx, f.c, *paused, 64, &seq)
		fmt.Printf("\nserver RSS (all replicas, tracing %s): %s before, %s after %d more paused threads (started in %s)\n",
			f.mode, mib(before), mib(rssAll(f.srvs)), *paused, time.Since(start).Round(time.Second))
	}
	exit(0)
}

// traceModes are the -trace flag's modes: off, memory, otlp.
type traceModes []string

func (m *traceModes) String() string { return strings.Join(*m, ",") }

// IsBoolFlag lets -trace stand alone, for every mode.
func (m *traceModes) IsBoolFlag() bool { return true }

func (m *traceModes) Set(v string) error {
	switch v {
	case "true":
		v = "off,memory,otlp"
	case "false":
		v = "off"
	}
	*m = nil
	for _, mode := range strings.Split(v, ",") {
		mode = strings.TrimSpace(mode)
		if mode != "off" && mode != "memory" && mode != "otlp" {
			return fmt.Errorf("unknown tracing mode %q: use off, memory or otlp", mode)
		}
		if !slices.Contains(*m, mode) {
			*m = append(*m, mode)
		}
	}
	return nil
}

// fleet is the servers of one tracing mode, with their own database (a
// Postgres schema, or a SQLite file).
type fleet struct {
	mode   string
	schema string
	srvs   []*exec.Cmd
	c      *roundRobin
}

// roundRobin sends each request to the next server in turn.
type roundRobin struct {
	cs   []*client.Client
	next atomic.Uint64
}

func (r *roundRobin) pick() *client.Client { return r.cs[(r.next.Add(1)-1)%uint64(len(r.cs))] }

func (r *roundRobin) Invoke(ctx context.Context, req client.InvokeRequest) (*graph.Result[json.RawMessage], error) {
	return r.pick().Invoke(ctx, req)
}

func (r *roundRobin) Resume(ctx context.Context, threadID, interruptID string, response any) (*graph.Result[json.RawMessage], error) {
	return r.pick().Resume(ctx, threadID, interruptID, response)
}

func rssAll(srvs []*exec.Cmd) int64 {
	var n int64
	for _, s := range srvs {
		n += rss(s.Process.Pid)
	}
	return n
}

// onDB runs fn on a connection of its own to dsn (which may carry pool
// settings), and returns fn's error or the failure to connect.
func onDB(dsn string, fn func(ctx context.Context, conn *pgx.Conn) error) error {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return fn(ctx, conn)
}

func pgVersion(dsn string) string {
	var v string
	if err := onDB(dsn, func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, "SHOW server_version").Scan(&v)
	}); err != nil {
		log.Fatal(err)
	}
	return v
}

func dropSchema(dsn, schema string) {
	if err := onDB(dsn, func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		return err
	}); err != nil {
		log.Print(err)
	}
}

type result struct {
	cycles, errors int
	elapsed        time.Duration
	start, answer  []time.Duration
}

// run drives n clients for d: each starts a refund thread and answers its pause.
func run(ctx context.Context, c *roundRobin, n int, d time.Duration, seq *atomic.Int64) result {
	var mu sync.Mutex
	var total result
	deadline := time.Now().Add(d)
	began := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			var r result
			for time.Now().Before(deadline) {
				id := "load-" + strconv.FormatInt(seq.Add(1), 10)
				t0 := time.Now()
				res, err := c.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: id, Input: map[string]any{"amount": 150}, Granularity: "low"})
				t1 := time.Now()
				if err != nil || res.Status != interlude.RunInterrupted {
					r.errors++
					continue
				}
				res, err = c.Resume(ctx, id, res.Interrupts[0].ID, map[string]any{"approved": true})
				t2 := time.Now()
				if err != nil || res.Status != interlude.RunCompleted {
					r.errors++
					continue
				}
				r.cycles++
				r.start = append(r.start, t1.Sub(t0))
				r.answer = append(r.answer, t2.Sub(t1))
			}
			mu.Lock()
			total.cycles += r.cycles
			total.errors += r.errors
			total.start = append(total.start, r.start...)
			total.answer = append(total.answer, r.answer...)
			mu.Unlock()
		})
	}
	wg.Wait()
	total.elapsed = time.Since(began)
	return total
}

// pauseMany starts count refund threads and leaves them paused.
func pauseMany(ctx context.Context, c *roundRobin, count, workers int, seq *atomic.Int64) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(count) {
				id := "paused-" + strconv.FormatInt(seq.Add(1), 10)
				if _, err := c.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: id, Input: map[string]any{"amount": 5}, Granularity: "low"}); err != nil {
					fatalf("%v", err)
				}
			}
		})
	}
	wg.Wait()
}

func pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	d := s[min(len(s)-1, len(s)*p/100)]
	return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
}

func waitHealthy(ctx context.Context, c *client.Client) error {
	var err error
	for i := 0; i < 200; i++ {
		if err = c.Health(ctx); err == nil {
			return nil
		}
		time.Sleep(25 * time.Millisecond) // the server process is starting; nothing to wait on but its port
	}
	return fmt.Errorf("server did not become healthy: %w", err)
}

// cleanups run, newest first, when the program ends (exit, fatalf, or an
// interrupt or termination signal): the servers must not outlive it, nor their
// schema.
var (
	cleanupMu sync.Mutex
	cleanups  []func()
)

func atExit(f func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, f)
}

// exitOnSignal runs the cleanups when the program is interrupted or told to
// terminate.
func exitOnSignal() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	go func() {
		log.Printf("%v: stopping the servers", <-stop)
		exit(1)
	}()
}

// exit runs the cleanups and ends the program. The first call holds the lock
// until the program ends, so a second (a signal during the first) waits.
func exit(code int) {
	cleanupMu.Lock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	os.Exit(code)
}

func fatalf(format string, args ...any) {
	log.Printf(format, args...)
	exit(1)
}

// usage is what the parts of the benchmark have used so far, or, from since,
// during a run.
type usage struct {
	servers, database, generator, machine time.Duration // CPU time
	commits, switches                     int64         // the database's commits, the machine's context switches
}

// measure reads the usage of the servers srvs, their database backends (those
// whose application_name starts with schema), this load generator and the
// machine.
func measure(srvs []*exec.Cmd, dsn, schema string) usage {
	u := usage{servers: cpuOf(srvs), database: backendsCPU(dsn, schema), commits: commitCount(dsn), generator: cputime.OfPid(os.Getpid())}
	u.machine, u.switches = machineStat()
	return u
}

// since is what was used between the measures before and u.
func (u usage) since(before usage) usage {
	return usage{servers: u.servers - before.servers, database: u.database - before.database, generator: u.generator - before.generator,
		machine: u.machine - before.machine, commits: u.commits - before.commits, switches: u.switches - before.switches}
}

// perCycle formats total divided by cycles, or "-" if either is 0.
func perCycle(total, cycles float64, format string) string {
	if cycles == 0 || total == 0 {
		return "-"
	}
	return fmt.Sprintf(format, total/cycles)
}

// machineStat returns what every process on the machine used so far: CPU time,
// the busy time of /proc/stat (all but idle and iowait), and context switches
// (its ctxt line): processes that sleep and wake often pay for it in switches.
func machineStat() (busy time.Duration, switches int64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 8 && f[0] == "cpu":
			for i, v := range f[1:] {
				if i == 3 || i == 4 { // idle, iowait
					continue
				}
				if i >= 8 { // guest time is already counted in user time
					break
				}
				n, _ := strconv.ParseInt(v, 10, 64)
				busy += time.Duration(n) * cputime.ClockTick
			}
		case len(f) == 2 && f[0] == "ctxt":
			switches, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	return busy, switches
}

func cpuOf(srvs []*exec.Cmd) time.Duration {
	var d time.Duration
	for _, s := range srvs {
		d += cputime.OfPid(s.Process.Pid)
	}
	return d
}

// withAppName sets the servers' application_name to tag, so that their
// database backends can be told from others'.
func withAppName(dsn, tag string) string {
	if strings.Contains(dsn, "://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "application_name=" + tag
	}
	return dsn + " application_name=" + tag
}

// backendsCPU sums the CPU time of the database backends serving the servers
// (found by their application_name, tag), if the database runs on this
// machine. Backends that ended are missed; the servers keep theirs open.
func backendsCPU(dsn, tag string) time.Duration {
	if dsn == "" {
		return 0
	}
	var d time.Duration
	onDB(dsn, func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name LIKE $1 || '%'`, tag)
		if err != nil {
			return err
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		for _, pid := range pids {
			d += cputime.OfPid(int(pid))
		}
		return err
	})
	return d
}

// commitCount is how many transactions the database at dsn has committed
// (pg_stat_database.xact_commit), or 0 without one. Backends report it about
// once a second, so a run of ten seconds reads it to within a few percent.
func commitCount(dsn string) int64 {
	if dsn == "" {
		return 0
	}
	var n int64
	onDB(dsn, func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
	})
	return n
}

func loadAvg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("%v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// rss returns the resident set size of process pid in bytes.
func rss(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
		}
	}
	return "unknown CPU"
}

// traceSink is an OTLP/HTTP receiver that reads and drops what it is sent.
type traceSink struct {
	url            string
	exports, bytes atomic.Int64
}

func startTraceSink() *traceSink {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("%v", err)
	}
	s := &traceSink{url: "http://" + ln.Addr().String()}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		s.exports.Add(1)
		s.bytes.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	return s
}
