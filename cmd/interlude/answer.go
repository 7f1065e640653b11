package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
)

var resumeCommand = &command{
	name:    "resume",
	args:    "THREAD [--id ID] VALUE_JSON",
	summary: "answer a pending question with a JSON value and wait for the run it starts",
	about: `The value must match the question's answer schema (see interlude show THREAD), such
as '{"approved": true}' for refund, true for a yes/no question, or
'{"action": "approve"}' for an agent's tool approval. --id may be left out when
exactly one question is pending, but naming it makes the command safe to repeat:
the same answer again returns the recorded outcome. The value null cancels the
question. A value that begins with "-", such as -1, goes after "--":
interlude resume THREAD --id ID -- -1.`,
	minArgs: 2, maxArgs: 2,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		r := remoteFlags(fs, e)
		id := fs.String("id", "", "the interrupt `ID` to answer (optional with one pending question)")
		return func(args []string) error {
			v, err := jsonArg("VALUE_JSON", args[1], `'{"approved": true}'`)
			if err != nil {
				return err
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			res, err := c.Resume(e.ctx, args[0], *id, v)
			if err != nil {
				return r.fail(r.answerRefused(err, args[0]))
			}
			return r.result(res)
		}
	},
}

var rejectCommand = &command{
	name:    "reject",
	args:    "THREAD [--id ID] [--message TEXT]",
	summary: "reject a pending question, with a reason",
	about: `For a tool's question the tool does not run and the model sees the message as the
call's error; a plain node gets the rejection as an error it may handle.`,
	minArgs: 1, maxArgs: 1,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		r := remoteFlags(fs, e)
		id := fs.String("id", "", "the interrupt `ID` to reject (optional with one pending question)")
		message := fs.String("message", "", "the reason, as `TEXT` (the model sees it for a tool call)")
		name := fs.String("name", "Rejected", "the rejection's `name`")
		return func(args []string) error {
			var rej *interlude.Rejection
			if *message != "" || *name != "Rejected" {
				rej = &interlude.Rejection{Name: *name, Message: *message}
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			res, err := c.Reject(e.ctx, args[0], *id, rej)
			if err != nil {
				return r.fail(r.answerRefused(err, args[0]))
			}
			return r.result(res)
		}
	},
}

var cancelCommand = &command{
	name:    "cancel",
	args:    "THREAD [--id ID]",
	summary: "withdraw a pending question; the code that asked is told it was cancelled",
	minArgs: 1, maxArgs: 1,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		r := remoteFlags(fs, e)
		id := fs.String("id", "", "the interrupt `ID` to cancel (optional with one pending question)")
		return func(args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			res, err := c.Cancel(e.ctx, args[0], *id)
			if err != nil {
				return r.fail(r.answerRefused(err, args[0]))
			}
			return r.result(res)
		}
	},
}

// answerRefused restates the refusal of an answer to a thread paused at a
// breakpoint, which takes none, naming the command that continues it; other
// errors are returned as they are.
func (r *remote) answerRefused(err error, thread string) error {
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != string(interlude.CodeNotInterrupted) {
		return err
	}
	c, cerr := r.client()
	if cerr != nil {
		return err
	}
	t, terr := c.Thread(r.e.ctx, thread)
	if terr != nil || t.Breakpoint == nil {
		return err
	}
	return &restated{err: ce,
		say:  fmt.Sprintf("thread %s is paused at a breakpoint %s node %s, which takes no answer", thread, t.Breakpoint.When, t.Breakpoint.Node),
		hint: fmt.Sprintf("continue it with %s run %s --thread %s%s", self, quote(t.Graph), quote(thread), r.serverArg())}
}
