package client_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/store/memory"
)

func serve(t *testing.T, opts ...server.Option) (*client.Client, string) {
	t.Helper()
	st := memory.New()
	hub, err := server.NewEventHub()
	if err != nil {
		t.Fatal(err)
	}
	refund, err := graphs.Refund(graph.WithStore(st), graph.WithEvents(hub.Publish))
	if err != nil {
		t.Fatal(err)
	}
	parallel, err := graphs.Parallel(graph.WithStore(st), graph.WithEvents(hub.Publish))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(append([]server.Option{server.WithGraph(refund.Erase()), server.WithGraph(parallel.Erase()),
		server.WithEventHub(hub), server.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return clienttest.New(t, hs.URL+"/"), hs.URL
}

func TestServerErrorsMatchTheRootPackagesErrorsByCode(t *testing.T) {
	c, _ := serve(t)
	ctx := context.Background()
	res, err := c.Invoke(ctx, client.InvokeRequest{Graph: "parallel", ThreadID: "p", Input: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Invoke(ctx, client.InvokeRequest{ThreadID: "p", Resume: true})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusConflict || !errors.Is(err, interlude.ErrAmbiguousResume) || errors.Is(err, interlude.ErrConflict) {
		t.Fatalf("err %v", err)
	}
	if len(ce.Interrupts()) != 2 {
		t.Fatalf("interrupts %v", ce.Interrupts())
	}
	_, err = c.Invoke(ctx, client.InvokeRequest{ThreadID: "p", Input: map[string]any{}})
	if !errors.Is(err, interlude.ErrThreadInterrupted) {
		t.Fatalf("err %v", err)
	}
	_, err = c.Resume(ctx, "p", res.Interrupts[0].ID, "yes")
	if !errors.Is(err, interlude.ErrInvalidResponse) {
		t.Fatalf("err %v", err)
	}
	if vs := err.(*client.Error).Violations(); len(vs) != 1 || vs[0].Path != "" {
		t.Fatalf("violations %+v", vs)
	}
	_, err = c.Thread(ctx, "nope")
	if !errors.Is(err, interlude.ErrNotFound) {
		t.Fatalf("err %v", err)
	}
	_, err = c.Invoke(ctx, client.InvokeRequest{ThreadID: "p", Graph: "refund"})
	if !errors.Is(err, interlude.ErrInvalidRequest) || err.(*client.Error).Path() != "graph" {
		t.Fatalf("err %v", err)
	}
	// Answering both, one cancelled, by id.
	res, err = c.Respond(ctx, "p", []interlude.Resolution{interlude.Resolve(true).For(res.Interrupts[0].ID), interlude.Cancel().For(res.Interrupts[1].ID)})
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestAnUnreachableServerGivesErrUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := clienttest.New(t, "http://"+addr)
	ctx := context.Background()
	if err := c.Health(ctx); !errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("Health: %v", err)
	}
	for _, err := range c.Stream(ctx, client.InvokeRequest{Graph: "refund"}) {
		if !errors.Is(err, client.ErrUnreachable) {
			t.Fatalf("Stream: %v", err)
		}
	}
	if _, err := c.Subscribe(ctx, "x", ""); !errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("Subscribe: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Health(cancelled); !errors.Is(err, context.Canceled) || errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("a cancelled call: %v", err)
	}
}

func TestTheClientCoversEveryRoute(t *testing.T) {
	admin := auth.Token{Name: "root", Secret: "root-secret", Roles: []auth.Role{auth.RoleAdmin}}
	_, url := serve(t, server.WithTokens([]auth.Token{admin}))
	c := clienttest.New(t, url, client.WithToken(admin.Secret), client.WithHTTPClient(&http.Client{}))
	ctx := context.Background()
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	gs, err := c.Graphs(ctx)
	if err != nil || len(gs) != 2 {
		t.Fatalf("%v %+v", err, gs)
	}
	sub, err := c.Subscribe(ctx, "r", "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var pause *client.Pause
	for ev, err := range c.Stream(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "r", Input: map[string]any{"amount": 5}, Granularity: client.Full}) {
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := ev.Pause(); ok {
			pause = p
		}
		if ev.Event == "end" {
			res, err := ev.Result()
			if err != nil || res.State == nil || res.State.ExecutionMeta.InterruptData.Interrupt.ID != pause.Interrupt.ID {
				t.Fatalf("end %s", ev.Data)
			}
		}
	}
	if pause == nil || pause.Interrupt.Message != "Approve a refund of $5?" || pause.Interrupt.State != nil {
		t.Fatalf("pause %+v", pause)
	}
	page, err := c.Threads(ctx, client.ListOptions{Status: "interrupted"})
	if err != nil || len(page.Threads) != 1 || page.Threads[0].Interrupts[0].ID != pause.Interrupt.ID {
		t.Fatalf("%v %+v", err, page)
	}
	th, err := c.Thread(ctx, "r")
	if err != nil || th.Status != "interrupted" || len(th.Next) != 1 {
		t.Fatalf("%v %+v", err, th)
	}
	// The first check of an answer can happen client-side, with the question's schema.
	if err := th.Interrupts[0].Check(interlude.Resolve(map[string]any{"approved": "y"})); !errors.Is(err, interlude.ErrInvalidResponse) {
		t.Fatalf("local check: %v", err)
	}
	// The refund node handles a rejection as a decline.
	res, err := c.Reject(ctx, "r", "", &interlude.Rejection{Name: "No", Message: "too much"})
	if err != nil || res.Status != interlude.RunCompleted || !strings.Contains(string(res.Values), `"outcome":"declined"`) {
		t.Fatalf("%v %+v", err, res)
	}
	var n int
	for ev, err := range sub.Events() {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if ev.Event == "end" {
			break
		}
	}
	if n != 3 {
		t.Fatalf("%d live events", n)
	}
	h, err := c.History(ctx, "r", client.HistoryOptions{Limit: 10})
	if err != nil || len(h.Checkpoints) == 0 {
		t.Fatalf("%v %+v", err, h)
	}
	if m, err := c.Metrics(ctx); err != nil || len(m) == 0 {
		t.Fatalf("metrics: %v", err)
	}
	if err := c.Delete(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Cancel(ctx, "r", ""); !errors.Is(err, interlude.ErrNotFound) {
		t.Fatalf("cancel after delete: %v", err)
	}
}

func TestAThreadIDNoPathCanCarryIsRefusedWithoutARequest(t *testing.T) {
	requests := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		http.NotFound(w, r)
	}))
	defer hs.Close()
	c, err := client.New(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"", ".", ".."} {
		calls := map[string]error{}
		_, calls["Thread"] = c.Thread(ctx, id)
		_, calls["ThreadWithSubgraphs"] = c.ThreadWithSubgraphs(ctx, id)
		_, calls["History"] = c.History(ctx, id, client.HistoryOptions{})
		_, calls["Resume"] = c.Resume(ctx, id, "", true)
		_, calls["Reject"] = c.Reject(ctx, id, "", nil)
		_, calls["Cancel"] = c.Cancel(ctx, id, "")
		calls["Delete"] = c.Delete(ctx, id)
		_, calls["Subscribe"] = c.Subscribe(ctx, id, "")
		for name, err := range calls {
			if !errors.Is(err, client.ErrThreadID) {
				t.Errorf("%s(%q): %v, want ErrThreadID", name, id, err)
			}
		}
	}
	if requests != 0 {
		t.Fatalf("%d requests reached the server", requests)
	}
}
