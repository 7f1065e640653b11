package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/mcp"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/store/memory"
	"github.com/interludehq/interlude/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchAgent runs one agent turn per iteration that calls refund once, on a
// new thread each time.
func benchAgent(b *testing.B, refund tool.Tool) {
	ctx := context.Background()
	m := scripted.New(scripted.Calls(scripted.Call("refund", refundIn{OrderID: "42", Amount: 1})), scripted.Text("done"))
	a, err := agent.New(m, []tool.Tool{refund}, agent.WithGraphOptions(graph.WithStore(memory.New())))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		res, err := a.Invoke(ctx, "t"+string(rune('a'+i%26))+itoa(i), agent.Ask("refund"))
		if err != nil || res.Status != interlude.RunCompleted {
			b.Fatal(err, res)
		}
	}
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(buf[n:])
		}
	}
}

// BenchmarkAgentGoTool is the baseline: the refund tool as a Go function.
func BenchmarkAgentGoTool(b *testing.B) {
	benchAgent(b, tool.Func("refund", "refund an order", func(ctx context.Context, in refundIn) (string, error) {
		return "refunded " + in.OrderID, nil
	}))
}

// BenchmarkAgentMCPTool is the same turn with the refund tool served by an MCP
// server over streamable HTTP on loopback.
func BenchmarkAgentMCPTool(b *testing.B) {
	s := newShop("shop")
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.server }, nil))
	defer hs.Close()
	c, err := mcp.Connect(context.Background(), mcp.Server{Name: "shop", URL: hs.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, t := range c.Tools() {
		if t.Name() == "refund" {
			benchAgent(b, t)
			return
		}
	}
	b.Fatal("no refund tool")
}
