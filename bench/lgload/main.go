// Command lgload drives the LangGraph Platform API with C clients, each doing
// create → wait (the refund graph pauses) → wait (resumed, it ends) cycles, and
// reports cycles per second and the p50 and p99 of a cycle, and of each of its
// requests (as bench/load reports its requests), and the CPU time the server
// and this load generator used per cycle, for each client count. The same tool
// measures Interlude (`interlude serve`, SQLite) and
// LangGraph's own dev server (@langchain/langgraph-api in
// bench/peers/langgraph-api, hosting the same refund graph) in one run:
//
//	go run ./bench/lgload -clients 1,8,64 -duration 10s
//
// -only interlude or -only langgraph runs one side; -url measures a server
// already running instead of starting them (its CPU is then not reported).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/interludehq/interlude/internal/cputime"
)

func main() {
	clients := flag.String("clients", "1,8,64", "comma-separated client counts")
	duration := flag.Duration("duration", 10*time.Second, "how long each client count runs")
	only := flag.String("only", "", "measure only interlude or langgraph")
	url := flag.String("url", "", "measure the server at this URL instead of starting them")
	peerDir := flag.String("peer", "bench/peers/langgraph-api", "the directory of the LangGraph dev server peer (npm ci there first)")
	flag.Parse()
	var counts []int
	for _, s := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fatalf("bad client count %q", s)
		}
		counts = append(counts, n)
	}
	type target struct {
		name  string
		start func() (string, int, func(), error) // the server's pid, 0 if unknown
	}
	var targets []target
	if *url != "" {
		targets = append(targets, target{"server", func() (string, int, func(), error) { return *url, 0, func() {}, nil }})
	} else {
		if *only == "" || *only == "interlude" {
			targets = append(targets, target{"interlude (SQLite)", startInterlude})
		}
		if *only == "" || *only == "langgraph" {
			targets = append(targets, target{"langgraph-api dev server", func() (string, int, func(), error) { return startLangGraph(*peerDir) }})
		}
	}
	fmt.Printf("%-26s %8s %12s %10s %10s %10s %10s %12s %12s %8s\n", "server", "clients", "cycles/s", "p50", "p99", "req p50", "req p99", "CPU/c server", "CPU/c load", "errors")
	for _, tg := range targets {
		base, pid, stop, err := tg.start()
		if err != nil {
			fatalf("start %s: %v", tg.name, err)
		}
		for _, n := range counts {
			srv0, gen0 := cputime.OfPid(pid), cputime.OfPid(os.Getpid())
			r := run(base, n, *duration)
			srv, gen := cputime.OfPid(pid)-srv0, cputime.OfPid(os.Getpid())-gen0
			fmt.Printf("%-26s %8d %12.1f %10s %10s %10s %10s %12s %12s %8d\n", tg.name, n, r.rate, pct(r.lat, 50), pct(r.lat, 99), pct(r.reqLat, 50), pct(r.reqLat, 99),
				perCycle(srv, len(r.lat)), perCycle(gen, len(r.lat)), r.errors)
			if r.firstErr != nil {
				fmt.Printf("  first error: %v\n", r.firstErr)
			}
		}
		stop()
	}
}

type result struct {
	rate     float64
	lat      []time.Duration // of whole cycles
	reqLat   []time.Duration // of each request of the cycles, as bench/load reports them
	errors   int
	firstErr error
}

var httpc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 0}, Timeout: time.Minute}

// post sends a request and decodes its answer, adding its duration to lat.
func post(lat *[]time.Duration, base, path string, body any, out any) error {
	t := time.Now()
	defer func() { *lat = append(*lat, time.Since(t)) }()
	data, _ := json.Marshal(body)
	resp, err := httpc.Post(base+path, "application/json", bytes.NewReader(data))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d: %s", path, resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

// cycle creates a thread, pauses the refund graph on it and resumes it.
func cycle(lat *[]time.Duration, base string) error {
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if err := post(lat, base, "/threads", map[string]any{"metadata": map[string]any{}}, &th); err != nil {
		return err
	}
	var paused struct {
		Interrupt []json.RawMessage `json:"__interrupt__"`
	}
	if err := post(lat, base, "/threads/"+th.ThreadID+"/runs/wait", map[string]any{"input": map[string]any{"amount": 150}, "assistant_id": "refund"}, &paused); err != nil {
		return err
	}
	if len(paused.Interrupt) != 1 {
		return errors.New("the first wait did not pause")
	}
	var done struct {
		Outcome string `json:"outcome"`
	}
	if err := post(lat, base, "/threads/"+th.ThreadID+"/runs/wait", map[string]any{"command": map[string]any{"resume": map[string]any{"approved": true}}, "assistant_id": "refund"}, &done); err != nil {
		return err
	}
	if done.Outcome != "refunded" {
		return fmt.Errorf("the resumed run ended with outcome %q", done.Outcome)
	}
	return nil
}

func run(base string, clients int, d time.Duration) result {
	var mu sync.Mutex
	var r result
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			var lat, reqLat []time.Duration
			errs := 0
			var first error
			for time.Now().Before(deadline) {
				t := time.Now()
				if err := cycle(&reqLat, base); err != nil {
					errs++
					if first == nil {
						first = err
					}
					continue
				}
				lat = append(lat, time.Since(t))
			}
			mu.Lock()
			r.lat = append(r.lat, lat...)
			r.reqLat = append(r.reqLat, reqLat...)
			r.errors += errs
			if r.firstErr == nil {
				r.firstErr = first
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	r.rate = float64(len(r.lat)) / time.Since(start).Seconds()
	return r
}

func pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "-"
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, len(ds)*p/100)].Round(10 * time.Microsecond).String()
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitUp waits for GET /ok to answer, polling: the server is another process.
func waitUp(base string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if resp, err := httpc.Get(base + "/ok"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer /ok within %s", base, within)
}

func startInterlude() (string, int, func(), error) {
	dir, err := os.MkdirTemp("", "lgload-")
	if err != nil {
		return "", 0, nil, err
	}
	bin := filepath.Join(dir, "interlude")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/interlude").CombinedOutput(); err != nil {
		return "", 0, nil, fmt.Errorf("build interlude (run lgload from the module root): %v\n%s", err, out)
	}
	addr := freeAddr()
	cmd := exec.Command(bin, "serve", "--addr", addr, "--db", filepath.Join(dir, "threads.db"), "--log-level", "error")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait(); os.RemoveAll(dir) }
	base := "http://" + addr
	if err := waitUp(base, 30*time.Second); err != nil {
		stop()
		return "", 0, nil, err
	}
	return base, cmd.Process.Pid, stop, nil
}

func startLangGraph(peer string) (string, int, func(), error) {
	if _, err := os.Stat(filepath.Join(peer, "node_modules", "@langchain", "langgraph-api")); err != nil {
		return "", 0, nil, fmt.Errorf("the peer is not installed: run npm ci in %s", peer)
	}
	_, port, _ := net.SplitHostPort(freeAddr())
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", "server.mjs", "--port", port)
	cmd.Dir = peer
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return "", 0, nil, err
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait(); cancel() }
	base := "http://127.0.0.1:" + port
	if err := waitUp(base, 2*time.Minute); err != nil {
		stop()
		return "", 0, nil, err
	}
	return base, cmd.Process.Pid, stop, nil
}

// perCycle formats a CPU time divided by the cycles, or "-" if either is 0.
func perCycle(cpu time.Duration, cycles int) string {
	if cpu == 0 || cycles == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f ms", cpu.Seconds()*1000/float64(cycles))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "lgload: "+format+"\n", args...)
	os.Exit(1)
}
