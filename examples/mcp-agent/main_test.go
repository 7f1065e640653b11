package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary be the order tools' MCP server, as the program
// is when it starts itself.
func TestMain(m *testing.M) {
	if os.Getenv(serveToolsEnv) == "1" {
		if err := serveTools(context.Background()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func chat(t *testing.T, input string) string {
	t.Helper()
	var out strings.Builder
	if err := run(context.Background(), nil, strings.NewReader(input), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String()
}

func TestTheApprovedRefundRunsOnTheMCPServer(t *testing.T) {
	for _, answer := range []string{"y", "yes", "approve", "Approve"} {
		t.Run(answer, func(t *testing.T) { refundApproved(t, answer) })
	}
}

func refundApproved(t *testing.T, answer string) {
	out := chat(t, answer+"\n")
	for _, want := range []string{
		"MCP tool lookup_order: Look up an order by its number.",
		"? Allow issue_refund to run with",
		"  <- Refunded $150 on order A-1001.",
		"agent> Done: Refunded $150 on order A-1001.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, out)
		}
	}
}

func TestARejectedRefundNeverReachesTheMCPServer(t *testing.T) {
	for _, answer := range []string{"n", "", "reject", "1"} {
		out := chat(t, answer+"\n")
		if strings.Contains(out, "Refunded") || !strings.Contains(out, "The refund was not approved.") {
			t.Fatalf("%q: %s", answer, out)
		}
	}
}
