package client_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
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
