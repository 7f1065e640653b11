// Command load measures the server under load over loopback with SQLite: N clients
// each start a refund thread, read the pause, and answer it, for a fixed time. It
// reports cycles per second and the p50/p99 latency of each request at every client
// count, and the server's resident memory before and after a number of threads are
// left paused (a paused thread should cost no memory in the server).
//
//	go run ./bench/load [-clients 1,8,64] [-duration 10s] [-paused 100000]
//
// It builds cmd/interlude, starts `interlude serve` on a free loopback port with a
// fresh SQLite file, and drives it with the Go client.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/interludehq/interlude/client"
)

func main() {
	clients := flag.String("clients", "1,8,64", "comma-separated client counts")
	duration := flag.Duration("duration", 10*time.Second, "how long each client count runs")
	paused := flag.Int("paused", 100000, "threads to leave paused before reading the server's memory (0 skips)")
	flag.Parse()
	log.SetFlags(0)

	dir, err := os.MkdirTemp("", "interlude-load-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "interlude")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/interlude").CombinedOutput(); err != nil {
		log.Fatalf("build: %v\n%s", err, out)
	}
	addr := freeAddr()
	srv := exec.Command(bin, "serve", "--addr", addr, "--db", filepath.Join(dir, "load.db"))
	srv.Stdout, srv.Stderr = nil, nil // request logs are part of the server's work, but not of the report
	if err := srv.Start(); err != nil {
		log.Fatal(err)
	}
	defer srv.Process.Kill()
	c := client.New("http://" + addr)
	ctx := context.Background()
	if err := waitHealthy(ctx, c); err != nil {
		log.Fatal(err)
	}

	fmt.Printf("# load: refund cycles over loopback, SQLite (synchronous=FULL), %s per client count\n", *duration)
	fmt.Printf("# %s, %d cores, %s\n\n", cpuModel(), runtime.NumCPU(), runtime.Version())
	fmt.Println("| clients | cycles/s | start p50 | start p99 | answer p50 | answer p99 | errors |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|")
	var seq atomic.Int64
	for _, f := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			log.Fatalf("bad client count %q", f)
		}
		r := run(ctx, c, n, *duration, &seq)
		fmt.Printf("| %d | %.0f | %s | %s | %s | %s | %d |\n", n, float64(r.cycles)/r.elapsed.Seconds(),
			pct(r.start, 50), pct(r.start, 99), pct(r.answer, 50), pct(r.answer, 99), r.errors)
	}
	if *paused > 0 {
		before := rss(srv.Process.Pid)
		start := time.Now()
		pauseMany(ctx, c, *paused, 64, &seq)
		fmt.Printf("\nserver RSS: %s before, %s after %d more paused threads (started in %s)\n",
			mib(before), mib(rss(srv.Process.Pid)), *paused, time.Since(start).Round(time.Second))
	}
}

type result struct {
	cycles, errors int
	elapsed        time.Duration
	start, answer  []time.Duration
}

// run drives n clients for d: each starts a refund thread and answers its pause.
func run(ctx context.Context, c *client.Client, n int, d time.Duration, seq *atomic.Int64) result {
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
				if err != nil || res.Status != client.Interrupted {
					r.errors++
					continue
				}
				res, err = c.Resume(ctx, id, res.Interrupts[0].ID, map[string]any{"approved": true})
				t2 := time.Now()
				if err != nil || res.Status != client.Completed {
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
func pauseMany(ctx context.Context, c *client.Client, count, workers int, seq *atomic.Int64) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(count) {
				id := "paused-" + strconv.FormatInt(seq.Add(1), 10)
				if _, err := c.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: id, Input: map[string]any{"amount": 5}, Granularity: "low"}); err != nil {
					log.Fatal(err)
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

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
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
