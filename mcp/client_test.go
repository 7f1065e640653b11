package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/mcp"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/store/memory"
	"github.com/interludehq/interlude/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// shop is a real MCP server (the SDK's) with order tools, one of which asks
// the user for a size during the call.
type shop struct {
	server   *sdk.Server
	refunds  atomic.Int64
	lastArgs atomic.Value
	sizeRuns atomic.Int64
}

type refundIn struct {
	OrderID string  `json:"order_id" jsonschema:"the order"`
	Amount  float64 `json:"amount" jsonschema:"dollars"`
}

func newShop(name string) *shop {
	s := &shop{server: sdk.NewServer(&sdk.Implementation{Name: name}, nil)}
	sdk.AddTool(s.server, &sdk.Tool{Name: "refund", Description: "refund an order"},
		func(ctx context.Context, req *sdk.CallToolRequest, in refundIn) (*sdk.CallToolResult, any, error) {
			s.refunds.Add(1)
			s.lastArgs.Store(in)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "refunded " + in.OrderID}}}, nil, nil
		})
	s.server.AddTool(&sdk.Tool{Name: "pick_size", Description: "asks which size", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			s.sizeRuns.Add(1)
			if r, ok := req.Params.InputResponses["size"].(*sdk.ElicitResult); ok {
				text := r.Action
				if r.Action == "accept" {
					text = "size " + r.Content["size"].(string)
				}
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
			}
			return &sdk.CallToolResult{
				InputRequests: sdk.InputRequestMap{"size": &sdk.ElicitParams{
					Message:         "Which size?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"size":{"type":"string","enum":["S","M","L"]}},"required":["size"]}`),
				}},
				RequestState: "asked-size",
			}, nil
		})
	s.server.AddTool(&sdk.Tool{Name: "verify", Description: "asks the user to verify on a web page", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["page"].(*sdk.ElicitResult); ok {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "verified: " + r.Action}}}, nil
			}
			return &sdk.CallToolResult{
				InputRequests: sdk.InputRequestMap{"page": &sdk.ElicitParams{Mode: "url", URL: "https://shop.example.com/verify", Message: "Verify your identity."}},
				RequestState:  "asked-page",
			}, nil
		})
	s.server.AddTool(&sdk.Tool{Name: "photo", Description: "a photo of the parcel", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "here it is"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("PNG")},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///label.txt", MIMEType: "text/plain", Text: "label"}},
			}}, nil
		})
	s.server.AddTool(&sdk.Tool{Name: "broken", Description: "always fails", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "warehouse offline"}}}, nil
		})
	return s
}

// connect connects a client to the shop over the SDK's in-memory transports.
func (s *shop) connect(t *testing.T, name, version string) *mcp.Client {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	if _, err := s.server.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	c, err := mcp.Connect(ctx, mcp.Server{Name: name, Transport: ct, ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func find(t *testing.T, tools []tool.Tool, name string) tool.Tool {
	t.Helper()
	for _, x := range tools {
		if x.Name() == name {
			return x
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

func TestAnMCPServersToolsKeepTheirSchemas(t *testing.T) {
	c := newShop("shop").connect(t, "shop", "")
	refund := find(t, c.Tools(), "refund")
	var s struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(refund.InputSchema(), &s); err != nil || s.Properties["order_id"] == nil || s.Properties["amount"] == nil {
		t.Fatalf("schema %s", refund.InputSchema())
	}
	if refund.Description() != "refund an order" {
		t.Fatal(refund.Description())
	}
	vs, err := tool.Validate(refund, json.RawMessage(`{"order_id": 42}`))
	if err != nil || len(vs) == 0 {
		t.Fatalf("a number for order_id passed the MCP schema: %v %v", vs, err)
	}
}

func TestToolsOfTheSameNameAreNamespacedByServer(t *testing.T) {
	ctx := context.Background()
	a, b := newShop("a"), newShop("b")
	sa, ca := sdk.NewInMemoryTransports()
	sb, cb := sdk.NewInMemoryTransports()
	a.server.Connect(ctx, sa, nil)
	b.server.Connect(ctx, sb, nil)
	c, err := mcp.Connect(ctx, mcp.Server{Name: "eu", Transport: ca}, mcp.Server{Name: "us", Transport: cb})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	find(t, c.Tools(), "eu__refund")
	res, err := tool.Run(ctx, find(t, c.Tools(), "us__refund"), json.RawMessage(`{"order_id":"7","amount":1}`))
	if err != nil || res.Content != "refunded 7" || b.refunds.Load() != 1 || a.refunds.Load() != 0 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestResultsBecomeContentBlocksAndIsErrorAFailedCall(t *testing.T) {
	ctx := context.Background()
	c := newShop("shop").connect(t, "shop", "")
	res, err := tool.Run(ctx, find(t, c.Tools(), "photo"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Blocks) != 3 || res.Blocks[0].Text != "here it is" || res.Blocks[1].Type != model.BlockImage ||
		res.Blocks[1].Source.MediaType != "image/png" || res.Blocks[1].Source.Data != "UE5H" || !strings.Contains(res.Blocks[2].Text, "label") {
		t.Fatalf("%+v", res.Blocks)
	}
	res, err = tool.Run(ctx, find(t, c.Tools(), "broken"), nil)
	if err != nil || !res.IsError || res.Content != "warehouse offline" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestTheToolListIsListedAgainWhenTheServerSaysItChanged(t *testing.T) {
	s := newShop("shop")
	c := s.connect(t, "shop", "2025-11-25")
	s.server.AddTool(&sdk.Tool{Name: "track", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "in transit"}}}, nil
		})
	<-c.Changed()
	find(t, c.Tools(), "track")
	old := find(t, c.Tools(), "broken")
	s.server.RemoveTools("broken")
	<-c.Changed()
	res, err := tool.Run(context.Background(), old, nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "no longer offers") {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestAnAgentOverTheClientOffersAToolAServerAddedAfterItWasBuilt(t *testing.T) {
	ctx := context.Background()
	s := newShop("shop")
	c := s.connect(t, "shop", "2025-11-25")
	m := scripted.New(scripted.Calls(scripted.Call("track", map[string]any{})), scripted.Text("done"))
	a, err := agent.New(m, nil, agent.WithToolSource(c), agent.WithGraphOptions(graph.WithStore(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	s.server.AddTool(&sdk.Tool{Name: "track", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "in transit"}}}, nil
		})
	<-c.Changed()
	res, err := a.Invoke(ctx, "t", agent.Ask("where is my order?"))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	if b := toolResult(t, res.Values.Messages); b.IsError || len(b.Content) != 1 || b.Content[0].Text != "in transit" {
		t.Fatalf("the model's call of the new tool got %+v", b)
	}
}

// newAgent builds an agent over the MCP tools that first calls tool with args,
// then says "done".
func newAgent(t *testing.T, c *mcp.Client, st *memory.Store, call string, args any, opts ...agent.Option) *agent.Agent {
	t.Helper()
	m := scripted.New(scripted.Calls(scripted.Call(call, args)), scripted.Text("done"))
	a, err := agent.New(m, c.Tools(), append(opts, agent.WithGraphOptions(graph.WithStore(st)))...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func toolResult(t *testing.T, msgs []model.Message) model.Block {
	t.Helper()
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == model.BlockToolResult {
				return b
			}
		}
	}
	t.Fatal("no tool result")
	return model.Block{}
}

func TestApprovalsAndEditsWorkOnMCPToolsAsOnGoTools(t *testing.T) {
	ctx := context.Background()
	s := newShop("shop")
	a := newAgent(t, s.connect(t, "shop", ""), memory.New(), "refund", refundIn{OrderID: "42", Amount: 150}, agent.RequireApproval("refund"))
	res, err := a.Invoke(ctx, "t", agent.Ask("refund 42"))
	if err != nil || res.Status != interlude.RunInterrupted || res.Interrupts[0].Reason != interlude.ReasonToolApproval {
		t.Fatalf("%v %+v", err, res)
	}
	if s.refunds.Load() != 0 {
		t.Fatal("the refund ran before approval")
	}
	if _, err := a.Invoke(ctx, "t", graph.Resume(agent.Edit(map[string]any{"order_id": 42}))); !errors.Is(err, interlude.ErrInvalidResponse) {
		t.Fatalf("an edit breaking the MCP schema was accepted: %v", err)
	}
	res, err = a.Invoke(ctx, "t", graph.Resume(agent.Edit(refundIn{OrderID: "42", Amount: 100})))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	if got := s.lastArgs.Load().(refundIn); got.Amount != 100 || s.refunds.Load() != 1 {
		t.Fatalf("the server got %+v", got)
	}
}

func TestARejectedMCPToolCallDoesNotReachTheServer(t *testing.T) {
	ctx := context.Background()
	s := newShop("shop")
	a := newAgent(t, s.connect(t, "shop", ""), memory.New(), "refund", refundIn{OrderID: "42", Amount: 150}, agent.RequireApproval("refund"))
	a.Invoke(ctx, "t", agent.Ask("refund 42"))
	res, err := a.Invoke(ctx, "t", graph.Resume(agent.Deny("too much")))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	if b := toolResult(t, res.Values.Messages); !b.IsError || b.Content[0].Text != "too much" || s.refunds.Load() != 0 {
		t.Fatalf("%+v", b)
	}
}

func TestAnElicitationWaitsAsAnInterruptAndItsAnswerReachesTheServer(t *testing.T) {
	type answer struct {
		name    string
		resolve interlude.Resolution
		want    string
		isError bool
	}
	answers := []answer{
		{"accept", interlude.Resolve(map[string]any{"size": "L"}), "size L", false},
		{"cancel", interlude.Cancel(), "cancel", false},
	}
	// Each protocol revision: the newest answers with input_required and a
	// retry (multi round-trip); older ones get elicitation/create in the call.
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		for _, ans := range answers {
			t.Run(version+"/"+ans.name, func(t *testing.T) {
				ctx := context.Background()
				s := newShop("shop")
				st := memory.New()
				a := newAgent(t, s.connect(t, "shop", version), st, "pick_size", map[string]any{})
				res, err := a.Invoke(ctx, "t", agent.Ask("pick"))
				if err != nil || res.Status != interlude.RunInterrupted {
					t.Fatalf("%v %+v", err, res)
				}
				q := res.Interrupts[0]
				if q.Reason != mcp.ReasonElicitation || q.Message != "Which size?" || !strings.Contains(string(q.Schema), `"enum":["S","M","L"]`) {
					t.Fatalf("%+v", q)
				}
				if _, err := a.Invoke(ctx, "t", graph.Respond(map[string]interlude.Resolution{q.ID: interlude.Resolve(map[string]any{"size": "XL"})})); !errors.Is(err, interlude.ErrInvalidResponse) {
					t.Fatalf("an answer outside the requested schema was accepted: %v", err)
				}
				// The pause outlived the MCP call: a new connection, as after a
				// restart, re-issues the call and answers from the record.
				a = newAgent(t, s.connect(t, "shop", version), st, "pick_size", map[string]any{})
				res, err = a.Invoke(ctx, "t", graph.Respond(map[string]interlude.Resolution{q.ID: ans.resolve}))
				if err != nil || res.Status != interlude.RunCompleted {
					t.Fatalf("%v %+v", err, res)
				}
				if b := toolResult(t, res.Values.Messages); b.Content[0].Text != ans.want || b.IsError != ans.isError {
					t.Fatalf("%+v", b)
				}
			})
		}
	}
}

func TestADeclinedElicitationIsARejectedCall(t *testing.T) {
	ctx := context.Background()
	s := newShop("shop")
	a := newAgent(t, s.connect(t, "shop", ""), memory.New(), "pick_size", map[string]any{})
	res, _ := a.Invoke(ctx, "t", agent.Ask("pick"))
	runs := s.sizeRuns.Load()
	res, err := a.Invoke(ctx, "t", graph.Resume(interlude.Reject(errors.New("no thanks")).For(res.Interrupts[0].ID)))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	if b := toolResult(t, res.Values.Messages); !b.IsError || b.Content[0].Text != "no thanks" || s.sizeRuns.Load() != runs {
		t.Fatalf("%+v", b)
	}
}

func TestADeclinedElicitationOutsideAnAgentIsSentAsDecline(t *testing.T) {
	ctx := context.Background()
	s := newShop("shop")
	c := s.connect(t, "shop", "")
	pick := find(t, c.Tools(), "pick_size")
	type state struct {
		Result string `json:"result"`
	}
	g := graph.New[state]()
	g.AddNode("pick", func(ctx context.Context, st state) (state, error) {
		r, err := tool.Run(ctx, pick, nil)
		if err != nil {
			return state{}, err
		}
		return state{Result: r.Content}, nil
	})
	g.AddEdge(graph.Start, "pick")
	app, err := g.Compile(graph.WithStore(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.Invoke(ctx, "t", graph.Input(state{}))
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	res, err = app.Invoke(ctx, "t", graph.Resume(interlude.Reject(errors.New("no")).For(res.Interrupts[0].ID)))
	if err != nil || res.Values.Result != "decline" {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestAURLElicitationIsShownAsALink(t *testing.T) {
	ctx := context.Background()
	s := newShop("shop")
	a := newAgent(t, s.connect(t, "shop", ""), memory.New(), "verify", map[string]any{})
	res, err := a.Invoke(ctx, "t", agent.Ask("verify"))
	if err != nil || res.Status != interlude.RunInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	q := res.Interrupts[0]
	if q.Reason != mcp.ReasonElicitation || !strings.Contains(q.Message, "Open https://shop.example.com/verify") ||
		!strings.Contains(string(q.Value), `"url":"https://shop.example.com/verify"`) {
		t.Fatalf("%+v", q)
	}
	res, err = a.Invoke(ctx, "t", graph.Resume(interlude.Resolve("done")))
	if err != nil || res.Status != interlude.RunCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	if b := toolResult(t, res.Values.Messages); b.Content[0].Text != "verified: accept" {
		t.Fatalf("%+v", b)
	}
}
