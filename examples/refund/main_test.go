package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func runRefund(t *testing.T, input string, args ...string) string {
	t.Helper()
	var out strings.Builder
	if err := run(context.Background(), args, strings.NewReader(input), &out); err != nil {
		t.Fatalf("run %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

func TestApprovedRefundIsRefunded(t *testing.T) {
	db := filepath.Join(t.TempDir(), "refund.db")
	out := runRefund(t, "yes\n", "-db", db, "-amount", "75.5")
	for _, want := range []string{"asking for a refund of $75.50.", "? Approve a refund of $75.50?", "approved* (yes/no): ", "Outcome: refunded (the refund node started 2 times)."} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestQuestionLeftAtEOFIsPickedUpByTheNextRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "refund.db")
	out := runRefund(t, "", "-db", db, "-thread", "order-42")
	if !strings.Contains(out, "The question stays open in "+db) || !strings.Contains(out, "-thread order-42") || strings.Contains(out, "Outcome") {
		t.Fatalf("first run:\n%s", out)
	}
	out = runRefund(t, "no\n", "-db", db, "-thread", "order-42", "-amount", "999")
	for _, want := range []string{"Thread order-42 is waiting for an answer", "? Approve a refund of $150?", "Outcome: declined"} {
		if !strings.Contains(out, want) {
			t.Errorf("second run lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "asking for a refund") {
		t.Errorf("the second run started a new refund:\n%s", out)
	}
	out = runRefund(t, "", "-db", db, "-thread", "order-42")
	if !strings.Contains(out, "already finished") || !strings.Contains(out, "Outcome: declined") {
		t.Fatalf("third run:\n%s", out)
	}
}

func TestCancelFromThePrompt(t *testing.T) {
	out := runRefund(t, "!cancel\n", "-db", filepath.Join(t.TempDir(), "refund.db"))
	if !strings.Contains(out, "Outcome: cancelled") {
		t.Fatalf("output:\n%s", out)
	}
}
