// Package clienttest holds checks that tests make through the Go client on
// threads of the built-in example graphs.
package clienttest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
)

// RefundFinishedOnce checks that the refund thread ended refunded with its node
// started exactly twice (once to ask, once with the answer), and that its history
// holds one answer, given by by.
func RefundFinishedOnce(t testing.TB, c *client.Client, thread, by string) {
	t.Helper()
	ctx := context.Background()
	th, err := c.Thread(ctx, thread)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Attempts int    `json:"attempts"`
		Outcome  string `json:"outcome"`
	}
	if err := json.Unmarshal(th.Values, &v); err != nil || th.Status != "idle" || v.Attempts != 2 || v.Outcome != "refunded" || len(th.Interrupts) != 0 {
		t.Fatalf("the finished thread: status %s, values %s; want idle, refunded, its node started twice", th.Status, th.Values)
	}
	if got := AnsweredBy(t, c, thread); len(got) != 1 || got[0] != by {
		t.Fatalf("the history holds answers by %q; want one, by %s", got, by)
	}
}

// AnsweredBy returns who gave each answer in the thread's history, oldest first.
func AnsweredBy(t testing.TB, c *client.Client, thread string) []string {
	t.Helper()
	h, err := c.History(context.Background(), thread, client.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for i := len(h.Checkpoints) - 1; i >= 0; i-- {
		for _, r := range h.Checkpoints[i].Resolved {
			by = append(by, r.By)
		}
	}
	return by
}

// NoneListed checks that no thread is listed with any of the statuses.
func NoneListed(t testing.TB, c *client.Client, statuses ...interlude.ThreadStatus) {
	t.Helper()
	for _, status := range statuses {
		page, err := c.Threads(context.Background(), client.ListOptions{Status: status})
		if err != nil || len(page.Threads) != 0 {
			t.Errorf("listed as %s: %+v, %v; want none", status, page, err)
		}
	}
}

// New returns a client of the server at baseURL, failing tb if client.New
// refuses its options.
func New(tb testing.TB, baseURL string, opts ...client.Option) *client.Client {
	tb.Helper()
	c, err := client.New(baseURL, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
