package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store/memory"
)

func TestASubgraphsStateIsReadByNamespaceOnlyWhenAskedFor(t *testing.T) {
	nested, err := graphs.Nested(graph.WithStore(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.WithGraph(nested.Erase()), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c := clienttest.New(t, hs.URL+"/")
	ctx := context.Background()
	res, err := c.Invoke(ctx, client.InvokeRequest{Graph: "nested", ThreadID: "n", Input: map[string]any{"amount": 250}})
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("invoke: %v, %+v", err, res)
	}
	plain, err := c.Thread(ctx, "n")
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Subgraphs) != 0 {
		t.Fatalf("a thread read without asking carries subgraphs %+v", plain.Subgraphs)
	}
	th, err := c.ThreadWithSubgraphs(ctx, "n")
	if err != nil {
		t.Fatal(err)
	}
	if len(th.Subgraphs) != 1 {
		t.Fatalf("subgraphs %+v, want the waiting approval subgraph", th.Subgraphs)
	}
	s := th.Subgraphs[0]
	if !slices.Equal(s.Namespace, []string{"approval"}) || !slices.Equal(s.Next, []string{"manager"}) || string(s.Values) != `{"amount":250,"manager_runs":1}` {
		t.Fatalf("the approval subgraph reads %+v", s)
	}
	if len(s.Interrupts) != 1 || s.Interrupts[0].ID != th.Interrupts[0].ID || s.Interrupts[0].State != nil {
		t.Fatalf("the subgraph's questions %+v, want the thread's pending one without private state", s.Interrupts)
	}
	h, err := c.History(ctx, "n", client.HistoryOptions{Limit: 1, Subgraphs: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Checkpoints) != 1 || len(h.Checkpoints[0].Subgraphs) != 1 || !slices.Equal(h.Checkpoints[0].Subgraphs[0].Namespace, []string{"approval"}) {
		t.Fatalf("the pause's history entry keeps subgraphs %+v, want approval", h.Checkpoints)
	}
	if h, err = c.History(ctx, "n", client.HistoryOptions{Limit: 1}); err != nil || len(h.Checkpoints[0].Subgraphs) != 0 {
		t.Fatalf("history read without asking: %v, %+v", err, h)
	}
	for _, path := range []string{"/v1/threads/n?subgraphs=maybe", "/v1/threads/n/history?subgraphs=yes"} {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", path, resp.StatusCode)
		}
	}
}

// nestedServer serves the nested example graph and returns a client of it.
func nestedServer(t *testing.T) *client.Client {
	t.Helper()
	nested, err := graphs.Nested(graph.WithStore(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.WithGraph(nested.Erase()), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return clienttest.New(t, hs.URL+"/")
}

// financePause runs thread id of the nested graph to the finance question: the
// manager said yes, so the approval subgraph's manager node is finished.
func financePause(t *testing.T, c *client.Client, id string) *graph.Result[json.RawMessage] {
	t.Helper()
	ctx := context.Background()
	res, err := c.Invoke(ctx, client.InvokeRequest{Graph: "nested", ThreadID: id, Input: map[string]any{"amount": 250}})
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("invoke: %v, %+v", err, res)
	}
	res, err = c.Resume(ctx, id, res.Interrupts[0].ID, true)
	if err != nil || res.Status != interlude.RunInterrupted || !slices.Equal(res.Interrupts[0].Path, []string{"approval", "finance"}) {
		t.Fatalf("the manager's yes: %v, %+v; want the finance question", err, res)
	}
	return res
}

func TestAForkAtASubgraphsCheckpointOverHTTPGoesOnThereWithoutRunningFinishedWorkAgain(t *testing.T) {
	c := nestedServer(t)
	ctx := context.Background()
	paused := financePause(t, c, "f")
	th, err := c.ThreadWithSubgraphs(ctx, "f")
	if err != nil || len(th.Subgraphs) != 1 {
		t.Fatalf("the thread at the finance question: %v, %+v", err, th)
	}
	var atPause graphs.ApprovalState
	if err := json.Unmarshal(th.Subgraphs[0].Values, &atPause); err != nil || atPause.ManagerRuns == 0 {
		t.Fatalf("the approval subgraph's values %s: %v", th.Subgraphs[0].Values, err)
	}
	done, err := c.Resume(ctx, "f", paused.Interrupts[0].ID, false)
	if err != nil || done.Status != interlude.RunCompleted || !strings.Contains(string(done.Values), `"outcome":"rejected"`) {
		t.Fatalf("finance's no: %v, %+v", err, done)
	}

	forked, err := c.Fork(ctx, "f", paused.Checkpoint, "approval")
	if err != nil || forked.Status != interlude.RunInterrupted || len(forked.Interrupts) != 1 {
		t.Fatalf("fork at the approval subgraph: %v, %+v; want the finance question asked again", err, forked)
	}
	q := forked.Interrupts[0]
	if !slices.Equal(q.Path, []string{"approval", "finance"}) || q.ID == paused.Interrupts[0].ID {
		t.Fatalf("the fork asks %+v; want finance's question again under a new id (not %s)", q, paused.Interrupts[0].ID)
	}
	if _, err := c.Resume(ctx, "f", paused.Interrupts[0].ID, true); err == nil {
		t.Fatal("an answer to the abandoned branch's question was accepted")
	}
	res, err := c.Resume(ctx, "f", q.ID, true)
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("finance's yes after the fork: %v, %+v", err, res)
	}
	var v graphs.NestedState
	if err := json.Unmarshal(res.Values, &v); err != nil {
		t.Fatal(err)
	}
	if v.Outcome != "approved" || v.ManagerRuns != atPause.ManagerRuns || !slices.Equal(v.Answers, []bool{true, true}) {
		t.Fatalf("after the fork the thread ends with %+v; want approved, the manager's answer kept and its node not run again (%d runs)", v, atPause.ManagerRuns)
	}

	// Without a namespace the fork is the thread's: the paused step runs
	// again from its start, the manager with it.
	again, err := c.Fork(ctx, "f", paused.Checkpoint)
	if err != nil || again.Status != interlude.RunInterrupted || !slices.Equal(again.Interrupts[0].Path, []string{"approval", "manager"}) {
		t.Fatalf("fork of the thread: %v, %+v; want the manager asked again", err, again)
	}
}

func TestAForkAtANamespaceWhereNoSubgraphWaitsIsRefusedOverHTTPAndLeavesTheThreadAlone(t *testing.T) {
	c := nestedServer(t)
	ctx := context.Background()
	paused := financePause(t, c, "f")
	before, err := c.Thread(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range [][]string{{"approval", "nowhere"}, {"intake"}} {
		_, err := c.Fork(ctx, "f", paused.Checkpoint, ns...)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != http.StatusBadRequest || !errors.Is(err, interlude.ErrInvalidRequest) || !strings.Contains(ce.Message, strings.Join(ns, "/")) {
			t.Fatalf("fork at %v: %v; want a 400 invalid_request naming the namespace", ns, err)
		}
	}
	if _, err := c.Fork(ctx, "f", 999, "approval"); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Fatalf("fork at a checkpoint the thread lacks: %v; want invalid_request", err)
	}
	if _, err := c.Fork(ctx, "f", 0); !errors.Is(err, interlude.ErrInvalidRequest) {
		t.Fatalf("fork without a checkpoint: %v; want invalid_request", err)
	}
	if _, err := c.Fork(ctx, "nobody", 1, "approval"); !errors.Is(err, interlude.ErrNotFound) {
		t.Fatalf("fork of an unknown thread: %v; want not_found", err)
	}
	after, err := c.Thread(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	if after.Checkpoint != before.Checkpoint || after.Status != before.Status || len(after.Interrupts) != 1 || after.Interrupts[0].ID != paused.Interrupts[0].ID {
		t.Fatalf("after refused forks the thread reads %+v; want it as it was (%+v)", after, before)
	}
	if res, err := c.Resume(ctx, "f", paused.Interrupts[0].ID, true); err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("the waiting question after refused forks: %v, %+v", err, res)
	}
}
