package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/mcpnode"
	"github.com/interludehq/interlude/mcp"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/store/sqlite"
)

// TestATypeScriptServersElicitationIsAskedOnceAcrossARestart uses the official
// TypeScript SDK as a stdio MCP server whose tool asks for an address mid-call
// (elicitation/create). The question waits in SQLite while the agent's process
// is gone (store closed, server subprocess stopped); answering it from a fresh
// agent and a fresh subprocess calls the tool again, which asks again and gets
// the recorded answer.
func TestATypeScriptServersElicitationIsAskedOnceAcrossARestart(t *testing.T) {
	dir := mcpnode.Dir(t)
	ctx := context.Background()
	tmp := t.TempDir()
	runs := filepath.Join(tmp, "runs.log")
	db := filepath.Join(tmp, "agent.db")
	start := func() (*agent.Agent, func()) {
		st, err := sqlite.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		c, err := mcp.Connect(ctx, mcp.Server{Name: "warehouse", Command: "node", Args: []string{filepath.Join(dir, "server.mjs")},
			Env: append(os.Environ(), "MCP_NODE_LOG="+runs)})
		if err != nil {
			t.Fatal(err)
		}
		m := scripted.New(scripted.Calls(scripted.Call("ship", map[string]any{"order_id": "A-7"})), scripted.Text("done"))
		a, err := agent.New(m, c.Tools(), agent.WithGraphOptions(graph.WithStore(st)))
		if err != nil {
			t.Fatal(err)
		}
		return a, func() { c.Close(); st.Close() }
	}
	a, stop := start()
	res, err := a.Invoke(ctx, "ship", agent.Ask("ship A-7"))
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	q := res.Interrupts[0]
	if q.Reason != mcp.ReasonElicitation || q.Message != "Ship order A-7 to which address?" || !strings.Contains(string(q.Schema), `"minLength":3`) {
		t.Fatalf("%+v", q)
	}
	stop()

	a, stop = start()
	defer stop()
	if _, err := a.Invoke(ctx, "ship", graph.Respond(map[string]interlude.Resolution{q.ID: interlude.Resolve(map[string]any{"address": "x"})})); err == nil {
		t.Fatal("an address shorter than the server's schema allows was accepted")
	}
	res, err = a.Invoke(ctx, "ship", graph.Respond(map[string]interlude.Resolution{q.ID: interlude.Resolve(map[string]any{"address": "1 Main St"})}))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	if b := toolResult(t, res.Values.Messages); b.Content[0].Text != "Shipped A-7 to 1 Main St" || b.IsError {
		t.Fatalf("%+v", b)
	}
	log, _ := os.ReadFile(runs)
	if got := strings.Count(string(log), "ship A-7"); got != 2 {
		t.Fatalf("the tool started %d times, want 2 (asked, then answered from the record):\n%s", got, log)
	}
}
