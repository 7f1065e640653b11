package server_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// LoudState is the state of a graph whose node emits many large events.
type LoudState struct {
	Events int  `json:"events,omitempty"`
	Size   int  `json:"size,omitempty"`
	Done   bool `json:"done,omitempty"`
}

// loudGraph's node reports started (if it can), then emits Events custom events
// of Size bytes each.
func loudGraph(started chan<- struct{}) builder {
	return erase(func(opts ...graph.Option) (*graph.Graph[LoudState], error) {
		g := graph.New[LoudState]()
		g.AddNode("shout", func(ctx context.Context, s LoudState) (LoudState, error) {
			select {
			case started <- struct{}{}:
			default:
			}
			pad := strings.Repeat("x", s.Size)
			for i := range s.Events {
				graph.Emit(ctx, graph.EventCustom, map[string]any{"i": i, "pad": pad})
			}
			return LoudState{Done: true}, nil
		})
		g.AddEdge(graph.Start, "shout")
		return g.Compile(append([]graph.Option{graph.WithName("loud")}, opts...)...)
	})
}

// guard is how long a test waits for what must happen before calling it a hang.
const guard = 60 * time.Second

// serveLoud serves the loud and blocking graphs on st with the given options,
// through server.Serve, and returns the server's address and a function that
// shuts it down and returns Serve's error.
func serveLoud(t *testing.T, st store.Store, hub *host.Hub, b []builder, opts ...server.Option) (string, func() error) {
	t.Helper()
	gopts := []graph.Option{graph.WithStore(st)}
	if hub != nil {
		gopts = append(gopts, graph.WithEvents(hub.Publish))
		opts = append(opts, server.WithEventHub(hub))
	}
	opts = append(opts, server.WithLogger(slog.New(slog.DiscardHandler)))
	for _, mk := range b {
		g, err := mk(gopts...)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, server.WithGraph(g))
	}
	srv, err := server.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	var stopped bool
	shutdown := func() error {
		stopped = true
		stop()
		select {
		case err := <-served:
			return err
		case <-time.After(guard):
			t.Fatal("Serve did not return")
			return nil
		}
	}
	t.Cleanup(func() {
		if !stopped {
			shutdown()
		}
		srv.Close()
	})
	return ln.Addr().String(), shutdown
}

// dialRaw opens a connection and writes req on it.
func dialRaw(t *testing.T, addr, req string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	return conn
}

func post(path, body string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
}

// readUntil reads conn until it has seen want, the connection ends, or the guard
// passes; it returns what it read.
func readUntil(t *testing.T, conn net.Conn, want string) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(guard))
	var got bytes.Buffer
	buf := make([]byte, 64<<10)
	for !bytes.Contains(got.Bytes(), []byte(want)) {
		n, err := conn.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return got.String()
}

func TestAStalledRequestBodyIsCutOffAfterTheReadTimeout(t *testing.T) {
	addr, _ := serveLoud(t, memory.New(), nil, []builder{loudGraph(nil)}, server.WithTimeouts(server.Timeouts{Read: 100 * time.Millisecond}))
	// The headers promise 100000 bytes; the body never comes.
	conn := dialRaw(t, addr, "POST /v1/graph/invoke HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
	conn.SetReadDeadline(time.Now().Add(guard))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the stalled request got no answer: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "timeout") {
		t.Fatalf("the stalled request got %d %s, want 400 naming the timeout", res.StatusCode, body)
	}
}

func TestShutdownEndsWithinItsDeadlineDespiteAStalledClient(t *testing.T) {
	addr, shutdown := serveLoud(t, memory.New(), nil, []builder{loudGraph(nil)},
		server.WithTimeouts(server.Timeouts{Read: time.Hour, Shutdown: 200 * time.Millisecond}))
	// The server asks for the body once its handler reads it; the body never
	// comes, leaving the handler reading.
	conn := dialRaw(t, addr, "POST /v1/graph/invoke HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n")
	br := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(guard))
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "100 Continue") {
		t.Fatalf("the server did not ask for the body: %q %v", line, err)
	}
	io.WriteString(conn, "{")
	done := make(chan error, 1)
	go func() { done <- shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve = %v", err)
		}
	case <-time.After(4 * time.Second): // a stalled client would hold it forever
		t.Fatal("the shutdown outlasted its deadline of 200ms by seconds")
	}
	conn.SetReadDeadline(time.Now().Add(guard))
	if _, err := io.ReadAll(br); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the stalled connection was left open")
		}
	}
}

func TestAShutdownPastItsDeadlineGivesUpRunsWhichContinueFromTheirLastCheckpoint(t *testing.T) {
	st := memory.New()
	entered, release := make(chan struct{}, 4), make(chan struct{}, 1)
	addr, shutdown := serveLoud(t, st, nil, []builder{blockingGraph(entered, release)},
		server.WithTimeouts(server.Timeouts{Shutdown: 100 * time.Millisecond}))
	c := clienttest.New(t, "http://"+addr)
	ctx := context.Background()
	release <- struct{}{} // the first run goes through
	if res, err := c.Invoke(ctx, client.InvokeRequest{ThreadID: "b", Input: map[string]any{"n": 1}}); err != nil || res.Status != "completed" {
		t.Fatalf("first run: %v %+v", err, res)
	}
	before, err := st.Meta(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	invoked := make(chan error, 1)
	go func() {
		_, err := c.Invoke(ctx, client.InvokeRequest{ThreadID: "b", Input: map[string]any{"n": 2}})
		invoked <- err
	}()
	<-entered
	<-entered // the second run waits in its node, past any deadline
	if err := shutdown(); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	if err := <-invoked; err == nil {
		t.Fatal("the abandoned run was answered as if it had finished")
	}
	after, err := st.Meta(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != before.Version || after.Status != before.Status {
		t.Fatalf("the abandoned run changed the thread: version %d -> %d, status %s -> %s", before.Version, after.Version, before.Status, after.Status)
	}
	// Another server over the same store continues the thread from there.
	addr2, _ := serveLoud(t, st, nil, []builder{blockingGraph(entered, release)})
	release <- struct{}{}
	res, err := clienttest.New(t, "http://"+addr2).Invoke(ctx, client.InvokeRequest{ThreadID: "b", Input: map[string]any{"n": 3}})
	if err != nil || res.Status != "completed" || !strings.Contains(string(res.Values), `"n":3`) {
		t.Fatalf("continuing the thread: %v %+v", err, res)
	}
}

func TestAStreamClientThatStopsReadingNeverHoldsUpTheRun(t *testing.T) {
	started := make(chan struct{}, 1)
	hub, err := server.NewEventHub()
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serveLoud(t, memory.New(), hub, []builder{loudGraph(started)}, server.WithStreamBuffer(1<<20))
	// 24 MiB of events, far more than the socket buffers and the stream's 1 MiB.
	conn := dialRaw(t, addr, post("/v1/graph/stream", `{"config":{"thread_id":"s"},"input":{"events":48,"size":524288}}`))
	<-started
	// The run ends and lets its thread go without the client reading a byte:
	// another request on the thread is served.
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	res, err := clienttest.New(t, "http://"+addr).Invoke(ctx, client.InvokeRequest{ThreadID: "s", Input: map[string]any{"events": 1, "size": 1}})
	if err != nil || res.Status != "completed" {
		t.Fatalf("the next request on the thread: %v %+v", err, res)
	}
	// The client was cut off: its stream ends with slow_consumer, short of the
	// run's events.
	got := readUntil(t, conn, `"slow_consumer"`)
	if !strings.Contains(got, `{"event":"error","data":{"code":"slow_consumer"`) {
		t.Fatalf("the stalled stream did not end with slow_consumer (read %d bytes)", len(got))
	}
	if n := strings.Count(got, `"event":"custom"`); n >= 48 {
		t.Fatalf("the stalled client got all %d events", n)
	}
}

func TestAnEventsListenerThatStopsReadingIsCutOffWithoutHoldingUpTheRun(t *testing.T) {
	hub, err := server.NewEventHub(host.WithHubBytes(8 << 20)) // listeners may fall 1 MiB behind
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serveLoud(t, memory.New(), hub, []builder{loudGraph(nil)})
	conn := dialRaw(t, addr, "GET /v1/threads/e/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
	if got := readUntil(t, conn, ": subscribed to thread e"); !strings.Contains(got, "subscribed") {
		t.Fatalf("the listener was not subscribed: %q", got)
	}
	// The listener reads no more while the run publishes 24 MiB of events.
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	c := clienttest.New(t, "http://"+addr)
	for _, in := range []map[string]any{{"events": 48, "size": 524288}, {"events": 1, "size": 1}} {
		if res, err := c.Invoke(ctx, client.InvokeRequest{ThreadID: "e", Input: in}); err != nil || res.Status != "completed" {
			t.Fatalf("a run on the thread: %v %+v", err, res)
		}
	}
	got := readUntil(t, conn, "event: error\ndata: {\"code\":\"slow_consumer\"")
	if !strings.Contains(got, "slow_consumer") || !strings.Contains(got, "Last-Event-ID") {
		t.Fatalf("the stalled listener was not told it was cut off (read %d bytes)", len(got))
	}
}
