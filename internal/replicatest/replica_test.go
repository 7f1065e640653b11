package replicatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/internal/proctest"
	"github.com/interludehq/interlude/store/postgres"
)

// envDSN names the environment variable with the test database's connection
// string.
const envDSN = "INTERLUDE_TEST_POSTGRES"

// bin is the interlude binary, built once by TestMain when a database is set.
var bin string

func TestMain(m *testing.M) {
	if os.Getenv(envDSN) == "" {
		os.Exit(m.Run()) // every test skips
	}
	proctest.Main(m, &bin)
}

// testDSN returns the database's connection string, or skips the test.
func testDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(envDSN)
	if dsn == "" {
		t.Skip("replica tests are off: set " + envDSN + " to a Postgres connection string to run them, e.g. " + envDSN + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	}
	return dsn
}

// freshSchema returns the name of a schema that does not exist yet, dropped
// when the test ends (after its replicas stopped).
func freshSchema(t *testing.T, dsn string) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	name := "interlude_replicas_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop test schema %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop test schema %s: %v", name, err)
		}
	})
	return name
}

// connect opens a connection to the test database for the rest of the test.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// pauseRefund starts a refund thread on r, which pauses for approval.
func pauseRefund(t *testing.T, r *replica, threadID string) *graph.Result[json.RawMessage] {
	t.Helper()
	res, err := r.client.Invoke(context.Background(), client.InvokeRequest{Graph: "refund", ThreadID: threadID, Input: map[string]any{"amount": 5}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// httpClient is shared by every client of the tests: many streams and requests
// at once to a few hosts.
var httpClient = &http.Client{Transport: &http.Transport{
	MaxIdleConnsPerHost: 256,
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
}}

// replica is one `interlude serve` process.
type replica struct {
	name   string
	url    string
	cmd    *exec.Cmd
	out    *proctest.Buffer
	done   chan struct{}
	client *client.Client
	dead   atomic.Bool
}

// launch starts a replica without waiting for it.
func launch(t *testing.T, name, dsn, schema string, leaseTTL time.Duration) *replica {
	t.Helper()
	return launchWith(t, name, dsn, schema, leaseTTL, nil)
}

// launchWith starts a replica like launch, with extra environment variables
// and flags.
func launchWith(t *testing.T, name, dsn, schema string, leaseTTL time.Duration, extraEnv []string, extraArgs ...string) *replica {
	t.Helper()
	addr := proctest.FreeAddr(t)
	r := &replica{name: name, url: "http://" + addr, out: &proctest.Buffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr, "--postgres", dsn, "--postgres-schema", schema,
		"--lease-ttl", leaseTTL.String(), "--log-format", "json"}, extraArgs...)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "INTERLUDE_") {
			env = append(env, kv)
		}
	}
	r.cmd.Env = append(env, extraEnv...)
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			r.cmd.Process.Kill()
			<-r.done
		}
		if t.Failed() {
			out := r.out.String()
			if len(out) > 4000 {
				out = "..." + out[len(out)-4000:]
			}
			t.Logf("replica %s output (tail):\n%s", r.name, out)
		}
	})
	r.client = clienttest.New(t, r.url, client.WithHTTPClient(httpClient))
	return r
}

// waitUp polls the replica's /healthz until it answers, or fails the test if
// the process exits or does not answer within 30 seconds.
func (r *replica) waitUp(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		select {
		case <-r.done:
			t.Fatalf("replica %s exited: %v\n%s", r.name, r.cmd.ProcessState, r.out.String())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := r.client.Health(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s did not answer /healthz: %v\n%s", r.name, err, r.out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the process's port
	}
}

// kill ends the replica with SIGKILL: no graceful anything.
func (r *replica) kill(t *testing.T) {
	t.Helper()
	r.dead.Store(true)
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-r.done
}

// startReplicas starts n replicas at once on schema and waits for all.
func startReplicas(t *testing.T, n int, dsn, schema string, leaseTTL time.Duration) []*replica {
	t.Helper()
	rs := make([]*replica, n)
	for i := range rs {
		rs[i] = launch(t, string(rune('a'+i)), dsn, schema, leaseTTL)
	}
	for _, r := range rs {
		r.waitUp(t)
	}
	return rs
}

// cluster is the replicas of a test, as a client with retries sees them.
type cluster struct {
	rs  []*replica
	mu  sync.Mutex
	rnd *mrand.Rand
}

func (c *cluster) intn(n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rnd.IntN(n)
}

// pick returns a random replica other than those in not, dead or alive: a
// client behind a load balancer does not know which replica just died.
func (c *cluster) pick(not ...*replica) *replica {
	for {
		r := c.rs[c.intn(len(c.rs))]
		if !contains(not, r) || len(not) >= len(c.rs) {
			return r
		}
	}
}

// pickLive returns a random live replica other than those in not, if any.
func (c *cluster) pickLive(not ...*replica) *replica {
	var live []*replica
	for _, r := range c.rs {
		if !r.dead.Load() && !contains(not, r) {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return c.pick()
	}
	return live[c.intn(len(live))]
}

func contains(rs []*replica, r *replica) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// retryable reports whether a request should be tried again on another
// replica: it did not reach a live one, or the thread's lease is held by a run
// (perhaps of a dead replica, until the lease expires).
func retryable(err error) bool {
	var ce *client.Error
	return errors.Is(err, client.ErrUnreachable) || (errors.As(err, &ce) && (ce.Code == "thread_busy" || ce.Status >= 500))
}

// outcome counts what the clients had to do.
type outcome struct {
	unreachable, busy, continued, replayed atomic.Int64
}

func (o *outcome) note(err error) {
	var ce *client.Error
	switch {
	case errors.Is(err, client.ErrUnreachable):
		o.unreachable.Add(1)
	case errors.As(err, &ce) && ce.Code == "thread_busy":
		o.busy.Add(1)
	}
}

// backoff waits a little before the next try: the lease of a dead replica's
// run expires on its own schedule, which the client cannot observe sooner.
func backoff(try int) { time.Sleep(time.Duration(min(try+1, 10)) * 10 * time.Millisecond) }

const opDeadline = 30 * time.Second

// start starts the refund thread id and returns its pending interrupt's id,
// retrying as a client behind a load balancer does. A start whose answer was
// lost may have committed: the retry then finds the thread interrupted.
func (c *cluster) start(ctx context.Context, o *outcome, first *replica, id string) (string, error) {
	var last error
	var prev *replica
	deadline := time.Now().Add(opDeadline)
	for try := 0; time.Now().Before(deadline); try++ {
		r := first
		if try > 0 {
			r = c.pick(prev)
		}
		prev = r
		res, err := r.client.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: id, Input: map[string]any{"amount": 150}, Granularity: "low"})
		if err == nil {
			if res.Status != "interrupted" || len(res.Interrupts) != 1 {
				return "", fmt.Errorf("start %s on %s: status %s with %d interrupts", id, r.name, res.Status, len(res.Interrupts))
			}
			return res.Interrupts[0].ID, nil
		}
		var ce *client.Error
		if errors.As(err, &ce) && ce.Code == "thread_interrupted" {
			// An earlier try committed the pause; its answer was lost.
			th, err := c.pickLive().client.Thread(ctx, id)
			if err != nil {
				last = err
				continue
			}
			if len(th.Interrupts) != 1 {
				return "", fmt.Errorf("start %s: after a lost answer the thread has %d interrupts", id, len(th.Interrupts))
			}
			o.replayed.Add(1)
			return th.Interrupts[0].ID, nil
		}
		if !retryable(err) {
			return "", fmt.Errorf("start %s on %s: %w", id, r.name, err)
		}
		o.note(err)
		last = err
		backoff(try)
	}
	return "", fmt.Errorf("start %s: gave up: %w", id, last)
}

// answer approves the thread's interrupt and returns once the thread
// completed. After a request that may have died mid-run it either retries the
// same answer (an idempotent replay, which also finishes a step its run left
// unfinished) or, with viaContinue, sends a plain continue, which resumes a
// thread whose answer was committed, and falls back to the answer if the
// thread still waits for it.
func (c *cluster) answer(ctx context.Context, o *outcome, first *replica, id, interruptID string, viaContinue bool) error {
	var last error
	var prev *replica
	lost := false
	deadline := time.Now().Add(opDeadline)
	for try := 0; time.Now().Before(deadline); try++ {
		r := first
		if try > 0 {
			r = c.pick(prev)
		}
		prev = r
		var res *graph.Result[json.RawMessage]
		var err error
		if lost && viaContinue {
			res, err = r.client.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: id, Granularity: "low"})
			var ce *client.Error
			if errors.As(err, &ce) && ce.Code == "thread_interrupted" {
				viaContinue = false // the answer never landed: send it again
				continue
			}
			if err == nil {
				o.continued.Add(1)
			}
		} else {
			res, err = r.client.Resume(ctx, id, interruptID, map[string]any{"approved": true})
		}
		if err == nil {
			if res.Status != "completed" {
				return fmt.Errorf("answer %s on %s: status %s (%s)", id, r.name, res.Status, res.Error)
			}
			return nil
		}
		if !retryable(err) {
			return fmt.Errorf("answer %s on %s: %w", id, r.name, err)
		}
		o.note(err)
		if errors.Is(err, client.ErrUnreachable) {
			lost = true
		}
		last = err
		backoff(try)
	}
	return fmt.Errorf("answer %s: gave up: %w", id, last)
}

// watch follows the thread's events from the replica it is given, reconnecting
// to another with Last-Event-ID when its stream breaks, until an end event with
// status completed. It checks that ids only increase.
func (c *cluster) watch(ctx context.Context, id string, sub *client.Subscription, from *replica) ([]client.Event, error) {
	var got []client.Event
	var lastID int64
	for try := 0; ; try++ {
		for ev, err := range sub.Events() {
			if err != nil {
				break
			}
			n, perr := strconv.ParseInt(ev.ID, 10, 64)
			if perr != nil || n <= lastID {
				sub.Close()
				return got, fmt.Errorf("thread %s: event id %q after %d", id, ev.ID, lastID)
			}
			lastID = n
			got = append(got, ev)
			if ev.Event == "end" {
				var end struct {
					Status string `json:"status"`
				}
				json.Unmarshal(ev.Data, &end)
				if end.Status == "completed" {
					sub.Close()
					return got, nil
				}
			}
		}
		sub.Close()
		if ctx.Err() != nil || try > 200 {
			return got, fmt.Errorf("thread %s: the event stream did not reach completion (%d events)", id, len(got))
		}
		// The stream broke (its replica died): reconnect elsewhere and catch up.
		for {
			from = c.pickLive(from)
			var err error
			if sub, err = from.client.Subscribe(ctx, id, strconv.FormatInt(lastID, 10)); err == nil {
				break
			}
			if ctx.Err() != nil {
				return got, err
			}
			backoff(try)
		}
	}
}

// verify checks every thread's final state through random replicas: completed
// with attempts 2, its one answer in history once, and none left running or
// failed in the listings.
func (c *cluster) verify(t *testing.T, ids []string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		r := c.pickLive()
		th, err := r.client.Thread(ctx, id)
		if err != nil {
			t.Errorf("thread %s: %v", id, err)
			continue
		}
		var v struct {
			Attempts int    `json:"attempts"`
			Outcome  string `json:"outcome"`
		}
		json.Unmarshal(th.Values, &v)
		if th.Status != "idle" || v.Attempts != 2 || v.Outcome != "refunded" || len(th.Interrupts) != 0 {
			t.Errorf("thread %s on %s: status %s, values %s; want idle with attempts 2, refunded", id, r.name, th.Status, th.Values)
		}
		h, err := c.pickLive().client.History(ctx, id, client.HistoryOptions{})
		if err != nil {
			t.Errorf("history of %s: %v", id, err)
			continue
		}
		answers := 0
		for _, cp := range h.Checkpoints {
			answers += len(cp.Resolved)
		}
		if answers != 1 {
			t.Errorf("thread %s: %d answers in history, want 1", id, answers)
		}
	}
	for _, status := range []interlude.ThreadStatus{"running", "failed", "interrupted"} {
		page, err := c.pickLive().client.Threads(ctx, client.ListOptions{Status: status, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Threads) != 0 {
			t.Errorf("%d threads are listed as %s, e.g. %+v", len(page.Threads), status, page.Threads[0])
		}
	}
}

// checkEvents checks one thread's stream, which watch followed to its end
// with status completed. Without failures it holds exactly the two runs'
// events: the start's pause and the answer's update, each run opened by
// metadata and closed by end. (A run that died may have logged some of its
// events, and a retried answer that finds the work done logs only metadata and
// end, so with failures only the completion is certain.)
func checkEvents(id string, evs []client.Event, strict bool) error {
	var names []string
	for _, e := range evs {
		names = append(names, e.Event)
	}
	got := strings.Join(names, ",")
	if strict && got != "metadata,updates,end,metadata,updates,end" {
		return fmt.Errorf("thread %s: events %s, want metadata,updates,end twice", id, got)
	}
	if strict && !strings.Contains(string(evs[4].Data), `"outcome":"refunded"`) {
		return fmt.Errorf("thread %s: the answer's update is %s", id, evs[4].Data)
	}
	return nil
}

// cycles runs n refund threads over the cluster with the given concurrency:
// each is watched from one replica, started on another and answered on a third
// (random, as a load balancer would spread them). during, if set, runs once
// after n/3 threads completed, while the others are in flight.
func (c *cluster) cycles(t *testing.T, n, workers int, o *outcome, strict bool, during func()) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Second)
	defer cancel()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("refund-%03d", i)
	}
	var next, completed atomic.Int64
	var once sync.Once
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := c.cycle(ctx, o, ids[i], i%2 == 1, strict); err != nil {
					errs <- err
				}
				if completed.Add(1) == int64(n/3) && during != nil {
					once.Do(during)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	return ids
}

// cycle runs one thread: started on one replica, answered on another, its
// events followed from the third (the first tries; retries go anywhere).
func (c *cluster) cycle(ctx context.Context, o *outcome, id string, viaContinue, strict bool) error {
	order := make([]*replica, len(c.rs))
	c.mu.Lock()
	for i, j := range c.rnd.Perm(len(c.rs)) {
		order[i] = c.rs[j]
	}
	c.mu.Unlock()
	starter, answerer, watcher := order[0], order[1], order[2%len(order)]
	if watcher.dead.Load() {
		watcher = c.pickLive()
	}
	var sub *client.Subscription
	for try := 0; ; try++ {
		var err error
		if sub, err = watcher.client.Subscribe(ctx, id, ""); err == nil {
			break
		}
		if try > 100 || ctx.Err() != nil {
			return fmt.Errorf("subscribe to %s: %w", id, err)
		}
		watcher = c.pickLive(watcher)
		backoff(try)
	}
	watched := make(chan error, 1)
	go func() {
		evs, err := c.watch(ctx, id, sub, watcher)
		if err == nil {
			err = checkEvents(id, evs, strict)
		}
		watched <- err
	}()
	intID, err := c.start(ctx, o, starter, id)
	if err == nil {
		err = c.answer(ctx, o, answerer, id, intID, viaContinue)
	}
	if err != nil {
		sub.Close()
		<-watched
		return err
	}
	return <-watched
}

func TestThreeReplicasRunEveryThreadOnce(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	c := &cluster{rs: startReplicas(t, 3, dsn, schema, 30*time.Second), rnd: mrand.New(mrand.NewPCG(1, 2))}
	o := &outcome{}
	ids := c.cycles(t, 200, 24, o, true, nil)
	if t.Failed() {
		return
	}
	c.verify(t, ids)
	if n := o.busy.Load() + o.unreachable.Load(); n != 0 {
		t.Errorf("with every replica up, %d requests were refused as busy or unreachable", n)
	}
}

func TestReplicaKilledMidRunLosesNothing(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	c := &cluster{rs: startReplicas(t, 3, dsn, schema, 2*time.Second), rnd: mrand.New(mrand.NewPCG(3, 4))}
	o := &outcome{}
	victim := c.rs[0]
	ids := c.cycles(t, 200, 24, o, false, func() { victim.kill(t) })
	if t.Failed() {
		return
	}
	c.verify(t, ids)
	t.Logf("after the kill: %d requests hit the dead replica, %d found the thread busy, %d threads were continued, %d starts had committed unseen",
		o.unreachable.Load(), o.busy.Load(), o.continued.Load(), o.replayed.Load())
	if o.unreachable.Load() == 0 {
		t.Errorf("no request hit the dead replica: the test did not test the kill")
	}
}

func TestTwoReplicasStartTogetherOnAnEmptyDatabase(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	rs := startReplicas(t, 2, dsn, schema, 30*time.Second)
	ctx := context.Background()
	res := pauseRefund(t, rs[0], "t")
	res, err := rs[1].client.Resume(ctx, "t", res.Interrupts[0].ID, map[string]any{"approved": false})
	if err != nil || res.Status != "completed" {
		t.Fatalf("the second replica answered %+v, %v", res, err)
	}
	conn := connect(t, dsn)
	var migrations int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{schema}.Sanitize()+`.schema_migrations`).Scan(&migrations); err != nil {
		t.Fatal(err)
	}
	if migrations != postgres.SchemaVersion {
		t.Fatalf("%d migrations recorded, want %d, each once", migrations, postgres.SchemaVersion)
	}
}

// TestAStreamsEndFindsTheThreadFree checks that a replica gives a thread up
// before a stream's end event leaves it: a client that answers on another
// replica as soon as the end event arrives never finds the thread busy.
func TestAStreamsEndFindsTheThreadFree(t *testing.T) {
	dsn := testDSN(t)
	rs := startReplicas(t, 2, dsn, freshSchema(t, dsn), 30*time.Second)
	ctx := context.Background()
	for i := range 40 {
		id := fmt.Sprintf("s%d", i)
		var end client.Event
		for ev, err := range rs[i%2].client.Stream(ctx, client.InvokeRequest{Graph: "refund", ThreadID: id, Input: map[string]any{"amount": 150}}) {
			if err != nil {
				t.Fatalf("stream %s: %v", id, err)
			}
			if ev.Event == "end" {
				end = ev
				break // answer at once, as the end event arrives
			}
		}
		var out struct {
			Interrupts []struct {
				ID string `json:"id"`
			} `json:"interrupts"`
		}
		if err := end.Decode(&out); err != nil || len(out.Interrupts) != 1 {
			t.Fatalf("stream %s ended with %s (%v); want one interrupt", id, end.Data, err)
		}
		res, err := rs[(i+1)%2].client.Resume(ctx, id, out.Interrupts[0].ID, map[string]any{"approved": true})
		if err != nil || res.Status != "completed" {
			t.Fatalf("answering %s on the other replica right after the end event: %+v, %v", id, res, err)
		}
	}
}
