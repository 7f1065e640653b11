package main

import (
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/store"
)

var notificationsCommand = &command{
	name:    "notifications",
	args:    "[--failed | --state S] [--limit N] [--before SEQ] | retry ID",
	summary: "list the server's notification deliveries, or retry one that failed",
	about: `Each change worth telling (a question raised, answered, rejected, cancelled or
expired; a thread failed) is a notification, delivered at least once to the
server's webhooks. The log lists them newest first with their state: pending
(not delivered yet, or waiting to be tried again), delivered, or failed (the last
attempt failed). "retry ID" tries a failed one again now; it needs an admin token.`,
	maxArgs: 2,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		r := remoteFlags(fs, e)
		failed := fs.Bool("failed", false, "list only the notifications whose delivery failed for good")
		state := fs.String("state", "", "list only notifications in this `state` (pending, delivered, failed)")
		limit := fs.Int("limit", 0, "show at most `N` notifications (the server's default is 50)")
		before := fs.Int64("before", 0, "continue a listing below this `seq`")
		return func(args []string) error {
			if len(args) > 0 && (args[0] != "retry" || len(args) != 2) {
				return usageOf(fs, "give no argument to list, or retry ID")
			}
			if *failed {
				if *state != "" && *state != string(store.NoticeDead) {
					return usageOf(fs, "give --failed or --state, not both")
				}
				*state = string(store.NoticeDead)
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			if len(args) == 2 {
				if err := c.RetryNotification(e.ctx, args[1]); err != nil {
					var ce *client.Error
					if errors.As(err, &ce) && ce.Code == string(interlude.CodeNotFound) {
						err = &restated{err: ce, say: fmt.Sprintf("no notification has id %s; %s notifications%s lists them", quote(args[1]), self, r.serverArg())}
					}
					return r.fail(err)
				}
				fmt.Fprintf(e.stdout, "Notification %s will be delivered again now.\n", line(args[1]))
				return nil
			}
			page, err := c.Notifications(e.ctx, client.NotificationOptions{State: store.NoticeState(*state), Limit: *limit, Before: *before})
			if err != nil {
				return r.fail(err)
			}
			if *r.json {
				return writeJSON(e.stdout, page)
			}
			if page.Enabled != nil && !*page.Enabled {
				fmt.Fprintln(e.stdout, "Notifications are off on this server: it was started without --webhook, --notify or --slack-channel, so it queues none.")
			}
			if len(page.Notifications) == 0 {
				if page.Enabled == nil || *page.Enabled {
					fmt.Fprintln(e.stdout, "No notifications.")
				}
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SEQ\tID\tTYPE\tTHREAD\tSTATE\tATTEMPTS\tCREATED\tLAST ERROR")
			for _, n := range page.Notifications {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", n.Seq, line(n.ID), line(n.Type), line(n.ThreadID), line(string(n.State)),
					n.Attempts, stamp(n.CreatedAt), oneLine(n.LastError))
			}
			tw.Flush()
			if page.NextBefore != nil {
				more := self + " notifications"
				if *state != "" {
					more += " --state " + quote(*state)
				}
				fmt.Fprintf(e.stdout, "More: %s --before %d%s\n", line(more), *page.NextBefore, r.serverArg())
			}
			return nil
		}
	},
}
