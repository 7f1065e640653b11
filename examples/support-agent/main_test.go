package main

import (
	"context"
	"strings"
	"testing"
)

func noEnv(string) string { return "" }

func chat(t *testing.T, input string, args ...string) string {
	t.Helper()
	var out strings.Builder
	if err := run(context.Background(), args, strings.NewReader(input), &out, noEnv); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String()
}

func contains(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestApprovedRefundStreamsTheAgentsText(t *testing.T) {
	out := chat(t, "approve\n")
	contains(t, out,
		"Support agent on the scripted model",
		"you> "+defaultMessage,
		"agent> Let me look up the order and issue the refund.\n",
		`  -> issue_refund {"order_id":"A-1001","amount":150,"reason":"customer request"}`,
		"? Approve a refund of $150 for order A-1001?",
		"  <- issue_refund: Refunded $150 on order A-1001.",
		"agent> Done: Refunded $150 on order A-1001.\n",
	)
	lookup := strings.Index(out, "  <- lookup_order: ")
	if lookup < 0 || lookup > strings.Index(out, "? Approve a refund") || strings.Count(out, "<- lookup_order") != 1 {
		t.Fatalf("want the lookup's result once, before the approval question:\n%s", out)
	}
}

func TestRejectedRefundIsReportedAndTheChatGoesOn(t *testing.T) {
	out := chat(t, "3\nNeeds a manager.\nRefund order B-700 for $20 please\n2\n\n25\n\n", "-message", "Refund order A-1001")
	contains(t, out,
		"  <- issue_refund (error): Needs a manager.",
		"agent> I could not issue the refund: Needs a manager.",
		"? Approve a refund of $20 for order B-700?",
		"agent> Done: Refunded $25 on order B-700.",
	)
}

func TestEndOfInputAtTheQuestion(t *testing.T) {
	out := chat(t, "")
	contains(t, out, "The question was left unanswered")
}

func TestModelFromTheEnvironment(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}
	if _, p, _ := chooseModel(func(k string) string { return env[k] }, ""); p != "OpenAI" {
		t.Fatalf("both keys: %s", p)
	}
	delete(env, "OPENAI_API_KEY")
	if _, p, _ := chooseModel(func(k string) string { return env[k] }, "claude-x"); p != "Anthropic" {
		t.Fatalf("anthropic key: %s", p)
	}
	if m, _, _ := chooseModel(noEnv, ""); m != nil {
		t.Fatalf("no key: %T", m)
	}
}
