package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/wire"
)

var showCommand = &command{
	name:    "show",
	args:    "THREAD",
	summary: "show a thread: its status, pending questions, conversation and history with who answered",
	minArgs: 1, maxArgs: 1,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		r := remoteFlags(fs, e)
		limit := fs.Int("history", 20, "show the newest `N` history entries (0: all of them)")
		return func(args []string) error {
			if *limit < 0 {
				return usagef("--history takes 0 (all) or more entries, not %d", *limit)
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			t, err := c.Thread(e.ctx, args[0])
			if err != nil {
				return r.fail(err)
			}
			h, err := history(e, c, args[0], *limit)
			if err != nil {
				return r.fail(err)
			}
			if *r.json {
				return writeJSON(e.stdout, struct {
					Thread  *wire.Thread  `json:"thread"`
					History *wire.History `json:"history"`
				}{t, h})
			}
			printThread(e.stdout, t, h, r.serverArg())
			return nil
		}
	},
}

// history reads the newest limit checkpoints of a thread (all of them for 0)
// a page at a time, and the tool calls on them.
func history(e *env, c *client.Client, threadID string, limit int) (*wire.History, error) {
	const page = 100 // the server's largest page
	var h *wire.History
	opt := client.HistoryOptions{}
	for shown := 0; ; shown = len(h.Checkpoints) {
		opt.Limit = page
		if limit > 0 {
			opt.Limit = min(page, limit-shown)
		}
		p, err := c.History(e.ctx, threadID, opt)
		if err != nil {
			return nil, err
		}
		if h == nil {
			h = p
		} else {
			h.Checkpoints = append(h.Checkpoints, p.Checkpoints...)
			h.NextBefore = p.NextBefore
			for id, xs := range p.ToolCalls {
				h.ToolCalls[id] = mergeExchanges(xs, h.ToolCalls[id])
			}
		}
		if h.NextBefore == 0 || limit > 0 && len(h.Checkpoints) >= limit {
			return h, nil
		}
		opt.Before = h.NextBefore
	}
}

// mergeExchanges puts a tool call's exchanges from an older page before those
// of a newer one, keeping the newer page's copy (it may hold the answer) of an
// exchange on both.
func mergeExchanges(older, newer []interlude.Exchange) []interlude.Exchange {
	out := slices.Clone(older)
	for _, x := range newer {
		i := slices.IndexFunc(out, func(o interlude.Exchange) bool { return o.Interrupt.ID == x.Interrupt.ID })
		if i >= 0 {
			out[i] = x
		} else {
			out = append(out, x)
		}
	}
	return out
}

// printThread prints a thread and its history for people; srv ends each command
// printed (see remote.serverArg).
func printThread(w io.Writer, t *wire.Thread, h *wire.History, srv string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Thread\t%s\n", line(t.ThreadID))
	fmt.Fprintf(tw, "Graph\t%s\n", line(t.Graph))
	fmt.Fprintf(tw, "Status\t%s\n", line(string(t.Status)))
	fmt.Fprintf(tw, "Created\t%s\n", stamp(t.CreatedAt))
	fmt.Fprintf(tw, "Updated\t%s\n", stamp(t.UpdatedAt))
	if len(t.Next) > 0 {
		fmt.Fprintf(tw, "Next\t%s\n", line(strings.Join(t.Next, ", ")))
	}
	if t.Breakpoint != nil {
		fmt.Fprintf(tw, "Paused\t%s node %s\n", line(string(t.Breakpoint.When)), line(t.Breakpoint.Node))
	}
	if t.Error != "" {
		fmt.Fprintf(tw, "Error\t%s\n", oneLine(t.Error))
	}
	msgs := decodeMessages(t.Messages)
	if len(msgs) == 0 && len(t.Values) > 0 {
		fmt.Fprintf(tw, "Values\t%s\n", compact(t.Values))
	}
	tw.Flush()

	if len(t.Interrupts) > 0 {
		fmt.Fprintln(w)
		printQuestions(w, t.Graph, t.ThreadID, t.Interrupts, srv)
	}
	if len(msgs) > 0 {
		fmt.Fprintf(w, "\nConversation:\n")
		printConversation(w, msgs, "  ")
		printWaitingTurn(w, msgs, t.FinishedToolResults, t.Interrupts, "  ")
	}
	if h == nil || len(h.Checkpoints) == 0 {
		return
	}
	fmt.Fprintf(w, "\nHistory (oldest first):\n")
	switch n := h.NextBefore - 1; {
	case n == 1:
		fmt.Fprintf(w, "  (1 earlier entry not shown; --history 0 shows them all)\n")
	case n > 1:
		fmt.Fprintf(w, "  (%d earlier entries not shown; --history 0 shows them all)\n", n)
	}
	cps := slices.Clone(h.Checkpoints)
	slices.Reverse(cps)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, cp := range cps {
		var notes []string
		for _, q := range cp.Raised {
			notes = append(notes, fmt.Sprintf("asked %s: \"%s\"", line(q.ID), oneLine(q.Message)))
		}
		for _, a := range cp.Resolved {
			notes = append(notes, fmt.Sprintf("%s %s", line(a.InterruptID), answered(&a)))
		}
		if cp.Breakpoint != nil {
			notes = append(notes, fmt.Sprintf("paused %s %s", line(string(cp.Breakpoint.When)), line(cp.Breakpoint.Node)))
		}
		if cp.Error != "" {
			notes = append(notes, "error: "+oneLine(cp.Error))
		}
		if len(notes) == 0 {
			notes = []string{happened(cp)}
		}
		for i, n := range notes {
			if i == 0 {
				fmt.Fprintf(tw, "  #%d\t%s\t%s\t%s\t%s\n", cp.ID, stamp(cp.At), line(string(cp.Kind)), line(string(cp.Status)), n)
			} else {
				fmt.Fprintf(tw, "  \t\t\t\t%s\n", n)
			}
		}
	}
	tw.Flush()
}

// happened says what a checkpoint that raised, answered and paused nothing did.
func happened(cp wire.Checkpoint) string {
	next := "the run ended"
	if len(cp.Next) > 0 {
		next = "next: " + strings.Join(cp.Next, ", ")
	}
	switch cp.Kind {
	case "input":
		return "input received; " + next
	case "step":
		return fmt.Sprintf("step %d done; %s", cp.Step, next)
	case "resolve":
		return "answers recorded; " + next
	case "update":
		return "state changed by hand; " + next
	case "fork":
		return "forked from an earlier checkpoint; " + next
	}
	return next
}
