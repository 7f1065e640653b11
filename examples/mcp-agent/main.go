// Command mcp-agent runs the support agent with its order tools served by an MCP
// server of its own: the program starts itself again as a subprocess that
// speaks MCP over standard input and output (the tools lookup_order and
// issue_refund), connects to it, and gives the agent the server's tools. The
// refund still needs a person's approval, asked here in the terminal; the
// model is the deterministic scripted one, so no API key is needed.
//
//	go run ./examples/mcp-agent [-message TEXT]
//
// Answer the approval with y, yes or approve to approve, anything else to reject.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/termform"
	"github.com/interludehq/interlude/mcp"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/store/memory"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveToolsEnv, set to 1, makes the program the MCP server of the order tools.
const serveToolsEnv = "MCP_AGENT_SERVE_TOOLS"

func main() {
	if os.Getenv(serveToolsEnv) == "1" {
		if err := serveTools(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "mcp-agent tools:", err)
			os.Exit(1)
		}
		return
	}
	err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "mcp-agent:", err)
		os.Exit(1)
	}
}

// lookupIn and refundIn are the order tools' arguments; the SDK derives their
// input schemas from them.
type lookupIn struct {
	OrderID string `json:"order_id" jsonschema:"the order number, such as A-1001"`
}

type refundIn struct {
	OrderID string  `json:"order_id" jsonschema:"the order number"`
	Amount  float64 `json:"amount" jsonschema:"the refund in dollars"`
	Reason  string  `json:"reason,omitempty" jsonschema:"why the refund is given"`
}

// serveTools is the MCP server: the order tools over standard input and output.
func serveTools(ctx context.Context) error {
	s := sdk.NewServer(&sdk.Implementation{Name: "orders", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "lookup_order", Description: "Look up an order by its number."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in lookupIn) (*sdk.CallToolResult, graphs.Order, error) {
			return nil, graphs.Order{OrderID: in.OrderID, Customer: "Sam Lee", Total: 150, Status: "delivered"}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "issue_refund", Description: "Refund part or all of an order to the customer's card."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in refundIn) (*sdk.CallToolResult, any, error) {
			text := fmt.Sprintf("Refunded %s on order %s.", graphs.Dollars(in.Amount), in.OrderID)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
		})
	return s.Run(ctx, &sdk.StdioTransport{})
}

func run(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("mcp-agent", flag.ContinueOnError)
	fs.SetOutput(out)
	message := fs.String("message", "Hi, order A-1001 arrived broken. Please refund the $150.", "the `text` to send the agent")
	if err := fs.Parse(args); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tools, err := mcp.Connect(ctx, mcp.Server{Name: "orders", Command: self, Env: append(os.Environ(), serveToolsEnv+"=1")})
	if err != nil {
		return err
	}
	defer tools.Close()
	for _, t := range tools.Tools() {
		fmt.Fprintf(out, "MCP tool %s: %s\n", t.Name(), t.Description())
	}
	a, err := agent.New(graphs.SupportScript(), tools.Tools(),
		agent.RequireApproval("issue_refund"),
		agent.WithGraphOptions(graph.WithStore(memory.New())))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nyou> %s\n", *message)
	lines := bufio.NewScanner(in)
	res, err := a.Invoke(ctx, "mcp-chat", agent.Ask(*message))
	for err == nil && res.Status == interlude.RunInterrupted {
		answers := map[string]interlude.Resolution{}
		for _, q := range res.Interrupts {
			fmt.Fprintf(out, "? %s [y/N] ", q.Message)
			yes := lines.Scan() && termform.Approves(lines.Text())
			fmt.Fprintln(out)
			answers[q.ID] = agent.Approve()
			if !yes {
				answers[q.ID] = agent.Deny("The refund was not approved.")
			}
		}
		res, err = a.Invoke(ctx, "mcp-chat", graph.Respond(answers))
	}
	if err != nil {
		return err
	}
	if res.Status != interlude.RunCompleted {
		return fmt.Errorf("the conversation ended %s: %s", res.Status, res.Error)
	}
	for _, m := range res.Values.Messages {
		for _, b := range m.Content {
			if b.Type == model.BlockToolResult {
				fmt.Fprintf(out, "  <- %s\n", b.ContentText())
			}
		}
	}
	fmt.Fprintf(out, "agent> %s\n", res.Values.Messages[len(res.Values.Messages)-1].Text())
	return nil
}
