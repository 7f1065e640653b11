package server_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/server"
)

// until collects a subscription's events up to and including the first end.
func until(t *testing.T, sub *client.Subscription) []client.Event {
	t.Helper()
	var out []client.Event
	for ev, err := range sub.Events() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
		if ev.Event == "end" {
			return out
		}
	}
	t.Fatalf("the stream ended without an end event: %+v", out)
	return nil
}

func names(evs []client.Event) string {
	var ns []string
	for _, e := range evs {
		ns = append(ns, e.Event)
	}
	return strings.Join(ns, ",")
}

func TestASecondClientReceivesAThreadsEventsLiveAndResumesAfterLastEventID(t *testing.T) {
	e := newEnv(t, setup{})
	ctx := context.Background()
	watcher, actor := e.client(), e.client()

	sub, err := watcher.Subscribe(ctx, "live", "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := actor.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "live", Input: map[string]any{"amount": 9}})
	if err != nil {
		t.Fatal(err)
	}
	first := until(t, sub)
	sub.Close()
	if names(first) != "metadata,updates,end" {
		t.Fatalf("first run's events: %s", names(first))
	}
	p, ok := first[1].Pause()
	if !ok || p.Interrupt == nil || p.Interrupt.ID != res.Interrupts[0].ID || p.Node != "refund" {
		t.Fatalf("pause %s", first[1].Data)
	}
	sameJSON(t, "end", first[2].Data, `{"thread_id":"live","status":"interrupted","checkpoint":1}`)
	last := first[2].ID

	// While nobody listens the thread goes on.
	if _, err := actor.Resume(ctx, "live", "", map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	sub, err = watcher.Subscribe(ctx, "live", last)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	second := until(t, sub)
	if names(second) != "metadata,updates,end" {
		t.Fatalf("events after %s: %s", last, names(second))
	}
	lastN, _ := strconv.ParseInt(last, 10, 64)
	for _, ev := range second {
		n, _ := strconv.ParseInt(ev.ID, 10, 64)
		if n <= lastN {
			t.Fatalf("event %s replayed although it is not after %s", ev.ID, last)
		}
	}
	sameJSON(t, "update", second[1].Data, `{"refund":{"attempts":1,"outcome":"refunded"}}`)
	sameJSON(t, "end", second[2].Data, `{"thread_id":"live","status":"completed","checkpoint":3}`)
}

func TestEventsRouteValidatesItsInputAndNeedsAHub(t *testing.T) {
	e := newEnv(t, setup{})
	expect(t, e.do(http.MethodGet, "/v1/threads/x/events", "", "", "Last-Event-ID", "abc"), http.StatusBadRequest, "invalid_request")
	g, _ := graphs.Refund()
	srv, err := server.New(server.WithGraph(g.Erase()), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/v1/threads/x/events", nil))
	if rec.Code != http.StatusNotImplemented {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
}

func TestDrainEndsLiveEventStreams(t *testing.T) {
	e := newEnv(t, setup{})
	sub, err := e.client().Subscribe(context.Background(), "x", "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	e.srv.Drain()
	for _, err := range sub.Events() {
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.client().Subscribe(context.Background(), "x", "")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusServiceUnavailable {
		t.Fatalf("subscribing after Drain: %v", err)
	}
}

func TestEventHubKeepsABoundedBufferPerThread(t *testing.T) {
	hub, err := server.NewEventHub(host.WithHubBuffer(3), host.WithHubThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	g, err := flakyGraph(graph.WithEvents(hub.Publish))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.WithGraph(g.Erase()), server.WithEventHub(hub), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c := clienttest.New(t, hs.URL)
	ctx := context.Background()
	sub, err := c.Subscribe(ctx, "a", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Invoke(ctx, client.InvokeRequest{ThreadID: "a", Input: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	evs := until(t, sub)
	sub.Close()
	if names(evs) != "metadata,updates,end" {
		t.Fatalf("%s", names(evs))
	}
	before, _ := strconv.ParseInt(evs[0].ID, 10, 64)
	// Replaying from before the first event gets only the newest three.
	for range 2 {
		if _, err := c.Invoke(ctx, client.InvokeRequest{ThreadID: "a", Input: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	sub, err = c.Subscribe(ctx, "a", strconv.FormatInt(before-1, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	got := until(t, sub)
	if names(got) != "metadata,updates,end" {
		t.Fatalf("replayed %s, want the last run's three events", names(got))
	}
}

func TestAStreamTellsWhereItStartsSoAReconnectBeforeAnyEventMissesNothing(t *testing.T) {
	e := newEnv(t, setup{})
	ctx := context.Background()
	c := e.client()
	watcher, err := c.Subscribe(ctx, "pos", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "pos", Input: map[string]any{"amount": 9}}); err != nil {
		t.Fatal(err)
	}
	seen := until(t, watcher)
	watcher.Close()
	last := seen[len(seen)-1].ID
	sub, err := c.Subscribe(ctx, "pos", "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// The stream ends before any event reaches it.
	e.hub.Close()
	for ev, err := range sub.Events() {
		t.Fatalf("the stream of a closed hub went on: %+v, %v", ev, err)
	}
	if sub.LastEventID() != last {
		t.Fatalf("the stream's position was %q; want %s, the id of the thread's last event", sub.LastEventID(), last)
	}
}
