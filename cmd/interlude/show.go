package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/interludehq/interlude/client"
)

var showCommand = &command{
	name:    "show",
	args:    "THREAD",
	summary: "show a thread: its status, pending questions, conversation and history with who answered",
	minArgs: 1, maxArgs: 1,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		r := remoteFlags(fs, e)
		limit := fs.Int("history", 0, "show only the newest `N` history entries (0: all)")
		return func(args []string) error {
			c := r.client()
			t, err := c.Thread(e.ctx, args[0])
			if err != nil {
				return r.fail(err)
			}
			h, err := c.History(e.ctx, args[0], client.HistoryOptions{Limit: *limit})
			if err != nil {
				return r.fail(err)
			}
			if *r.json {
				return writeJSON(e.stdout, struct {
					Thread  *client.Thread  `json:"thread"`
					History *client.History `json:"history"`
				}{t, h})
			}
			printThread(e.stdout, t, h)
			return nil
		}
	},
}

func printThread(w io.Writer, t *client.Thread, h *client.History) {
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
		printQuestions(w, t.ThreadID, t.Interrupts)
	}
	if len(msgs) > 0 {
		fmt.Fprintf(w, "\nConversation:\n")
		printConversation(w, msgs, "  ")
	}
	if h == nil || len(h.Checkpoints) == 0 {
		return
	}
	fmt.Fprintf(w, "\nHistory (oldest first):\n")
	cps := slices.Clone(h.Checkpoints)
	slices.Reverse(cps)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, cp := range cps {
		var notes []string
		for _, q := range cp.Raised {
			notes = append(notes, fmt.Sprintf("asked %s: \"%s\"", line(q.ID), oneLine(q.Message)))
		}
		for _, a := range cp.Resolved {
			r := a.Resolution
			notes = append(notes, fmt.Sprintf("%s %s", line(a.InterruptID), answered(&r)))
		}
		if cp.Breakpoint != nil {
			notes = append(notes, fmt.Sprintf("paused %s %s", line(string(cp.Breakpoint.When)), line(cp.Breakpoint.Node)))
		}
		if cp.Error != "" {
			notes = append(notes, "error: "+oneLine(cp.Error))
		}
		if len(notes) == 0 {
			notes = []string{""}
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
