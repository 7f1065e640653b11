package main

import (
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
)

var threadsCommand = &command{
	name:    "threads",
	args:    "[--status interrupted] [--graph G] [--limit N] [--cursor C]",
	summary: "list the server's threads, most recently updated first",
	about:   `With --status interrupted it is the inbox: the threads waiting for answers, with their first question.`,
	maxArgs: 0,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		r := remoteFlags(fs, e)
		status := fs.String("status", "", "keep threads with this `status` (idle, running, interrupted, failed; completed lists the idle ones)")
		graphName := fs.String("graph", "", "keep threads of this `graph`")
		limit := fs.Int("limit", 0, "show at most `N` threads (the server's default is 50)")
		cursor := fs.String("cursor", "", "continue a listing from this `cursor`")
		return func([]string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			var want interlude.ThreadStatus
			if *status != "" {
				if want, err = interlude.ParseThreadStatus(*status); err != nil {
					return usagef("--status: %s", err.(*interlude.Error).Message)
				}
			}
			page, err := c.Threads(e.ctx, client.ListOptions{Status: want, Graph: *graphName, Limit: *limit, Cursor: *cursor})
			if err != nil {
				return r.fail(err)
			}
			if *r.json {
				return writeJSON(e.stdout, page)
			}
			if len(page.Threads) == 0 {
				fmt.Fprintln(e.stdout, "No threads.")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "THREAD\tGRAPH\tSTATUS\tUPDATED\tQUESTION")
			for _, t := range page.Threads {
				q := ""
				if t.Status == interlude.ThreadInterrupted && len(t.Interrupts) == 0 {
					// Interrupted with no question: paused at a breakpoint.
					q = fmt.Sprintf("paused at a breakpoint (continue: %s run %s --thread %s%s)", self, line(quote(t.Graph)), line(quote(t.ThreadID)), r.serverArg())
				}
				if len(t.Interrupts) > 0 {
					q = oneLine(t.Interrupts[0].Message)
					if n := len(t.Interrupts); n > 1 {
						q += fmt.Sprintf(" (+%d more)", n-1)
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", line(t.ThreadID), line(t.Graph), line(string(t.Status)), stamp(t.UpdatedAt), q)
			}
			tw.Flush()
			if page.NextCursor != "" {
				more := self + " threads"
				if *status != "" {
					more += " --status " + quote(*status)
				}
				if *graphName != "" {
					more += " --graph " + quote(*graphName)
				}
				if *limit != 0 {
					more += fmt.Sprintf(" --limit %d", *limit)
				}
				fmt.Fprintf(e.stdout, "More: %s --cursor %s%s\n", line(more), line(quote(page.NextCursor)), r.serverArg())
			}
			return nil
		}
	},
}
