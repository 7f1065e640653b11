package client_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store/memory"
)

func TestTheClientSeesAWaitingTurnsFinishedToolResults(t *testing.T) {
	a, err := graphs.SupportAgent(nil, graph.WithStore(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.WithGraph(a.Erase()), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c := clienttest.New(t, hs.URL)
	ctx := context.Background()

	var reported []client.SubTask
	for ev, err := range c.Stream(ctx, client.InvokeRequest{Graph: "support-agent", ThreadID: "s",
		Messages: []model.Message{model.UserText("Please refund order A-1001 ($150), it arrived broken.")}}) {
		if err != nil {
			t.Fatal(err)
		}
		if st, ok := ev.SubTask(); ok {
			reported = append(reported, *st)
		}
	}
	if len(reported) != 1 || reported[0].Node != "tools" || reported[0].ToolCallID == "" {
		t.Fatalf("subtask events %+v, want the lookup's", reported)
	}
	var streamed model.Block
	if err := json.Unmarshal(reported[0].Result, &streamed); err != nil || streamed.ToolUseID != reported[0].ToolCallID {
		t.Fatalf("subtask result %s: %v", reported[0].Result, err)
	}

	th, err := c.Thread(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	finished := th.FinishedToolResults
	if th.Status != "interrupted" || len(finished) != 1 || finished[0].ToolUseID != streamed.ToolUseID || finished[0].ContentText() != streamed.ContentText() {
		t.Fatalf("thread %s: finished %+v, streamed %+v", th.Status, finished, streamed)
	}
}
