package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model/scripted"
	"github.com/interludehq/interlude/store/memory"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestEachToolCallHasASpanWithItsToolCallIDAndOutcome(t *testing.T) {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(ctx)
	m := scripted.New(scripted.Calls(
		scripted.Call("lookup_order", lookupArgs{OrderID: "42"}),
		scripted.Call("issue_refund", refundArgs{OrderID: "42", Amount: 100}),
	), scripted.Text("done"))
	a := newAgent(t, m, newShop(), memory.New(), agent.WithTracerProvider(tp))
	res, err := a.Invoke(ctx, "t", agent.Ask("refund order 42"))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatal(err, res)
	}
	if _, err := a.Invoke(ctx, "t", graph.Respond(map[string]interlude.Resolution{res.Interrupts[0].ID: interlude.Reject(errors.New("too much"))})); err != nil {
		t.Fatal(err)
	}

	outcomes := map[string][]string{} // tool -> outcomes, in the order the spans ended
	for _, s := range exp.GetSpans() {
		if s.Name != "execute_tool lookup_order" && s.Name != "execute_tool issue_refund" {
			continue
		}
		at := map[attribute.Key]string{}
		for _, kv := range s.Attributes {
			at[kv.Key] = kv.Value.Emit()
		}
		if at["gen_ai.operation.name"] != "execute_tool" || at["gen_ai.tool.call.id"] == "" || at["gen_ai.tool.name"] == "" {
			t.Fatalf("%s lacks its GenAI attributes: %v", s.Name, at)
		}
		outcomes[at["gen_ai.tool.name"]] = append(outcomes[at["gen_ai.tool.name"]], at["interlude.tool.outcome"])
	}
	// The lookup ran once (the ledger keeps it); the refund paused, then was
	// rejected without running.
	if got := outcomes["lookup_order"]; len(got) != 1 || got[0] != "ok" {
		t.Fatalf("lookup_order outcomes %v, want [ok]", got)
	}
	if got := outcomes["issue_refund"]; len(got) != 2 || got[0] != "paused" || got[1] != "rejected" {
		t.Fatalf("issue_refund outcomes %v, want [paused rejected]", got)
	}
}
