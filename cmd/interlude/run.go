package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/model"
)

var runCommand = &command{
	name:    "run",
	args:    "GRAPH [INPUT_JSON] [--thread ID] [--message TEXT]",
	summary: "start or continue a thread of a graph on the server and wait for it to end or pause",
	about: `INPUT_JSON is a JSON object of the graph's state fields, such as '{"amount": 150}'
for refund. For an agent graph, --message TEXT sends a user message instead.
With --thread and neither, the thread continues past a breakpoint.
A run that pauses prints its questions and how to answer them.`,
	minArgs: 1, maxArgs: 2,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		r := remoteFlags(fs, e)
		thread := fs.String("thread", "", "the thread `id` (the server makes one for new input without it)")
		message := fs.String("message", "", "send `TEXT` as a user message (agent graphs)")
		return func(args []string) error {
			msgSet, err := messageGiven(fs, *message)
			if err != nil {
				return err
			}
			req := client.InvokeRequest{Graph: args[0], ThreadID: *thread}
			switch {
			case len(args) == 2 && msgSet:
				return usageOf(fs, "give INPUT_JSON or --message, not both")
			case len(args) == 2:
				example := fmt.Sprintf(`'{"amount": 150}'; %s graphs %s%s shows the input it takes`, self, quote(args[0]), r.serverArg())
				in, err := jsonArg("INPUT_JSON", args[1], example)
				if err != nil {
					return err
				}
				if in[0] != '{' {
					// null too: the server would read it as no input at all.
					return usagef("INPUT_JSON must be a JSON object of the graph's state fields, not %s (e.g. %s)", in, example)
				}
				req.Input = in
			case msgSet:
				req.Messages = []model.Message{model.UserText(*message)}
			case *thread == "":
				return usageOf(fs, "give INPUT_JSON or --message to start a thread (or --thread to continue one)")
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			res, err := c.Invoke(e.ctx, req)
			if err != nil {
				return r.fail(r.runRefused(err, req))
			}
			return r.result(res)
		}
	},
}

// messageGiven reports whether --message was given, refusing an empty one:
// there is nothing to send.
func messageGiven(fs *flag.FlagSet, msg string) (bool, error) {
	set := flagGiven(fs, "message")
	if set && strings.TrimSpace(msg) == "" {
		return true, usagef("--message is empty: give the TEXT to send, such as --message 'Where is my order?'")
	}
	return set, nil
}

// graphOf names the graph of the run's thread when the run stopped at a
// breakpoint, whose continue command needs it, or with a question asked inside
// a subgraph, whose breadcrumb starts with it. A run answer does not carry it,
// so it asks the server; "GRAPH" stands in if it cannot.
func (r *remote) graphOf(res *graph.Result[json.RawMessage]) string {
	nested := false
	for _, q := range res.Interrupts {
		nested = nested || breadcrumb("", q) != ""
	}
	if res.Breakpoint == nil && !nested {
		return ""
	}
	c, err := r.client()
	if err != nil {
		return "GRAPH"
	}
	t, err := c.Thread(r.e.ctx, res.ThreadID)
	if err != nil {
		return "GRAPH"
	}
	return t.Graph
}

// result prints a run answer and turns a failed run into an error.
func (r *remote) result(res *graph.Result[json.RawMessage]) error {
	if *r.json {
		if err := writeJSON(r.e.stdout, res); err != nil {
			return err
		}
	} else {
		printRun(r.e.stdout, res, r.graphOf(res), r.serverArg())
	}
	if res.Status == interlude.RunFailed {
		return &printed{&runFailed{"the run failed: " + res.Error}}
	}
	return nil
}

// runRefused restates, in the CLI's terms, the refusals of a run that name the
// graph or its input; others are returned as they are.
func (r *remote) runRefused(err error, req client.InvokeRequest) error {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return err
	}
	if ce.Code == "not_found" && req.Input == nil && req.Messages == nil && req.ThreadID != "" {
		return &restated{err: ce, say: fmt.Sprintf("thread %s does not exist; start it with INPUT_JSON or --message (%s graphs %s%s shows the input it takes)", req.ThreadID, self, quote(req.Graph), r.serverArg())}
	}
	if ce.Code != "invalid_request" {
		return err
	}
	switch p := ce.Path(); {
	case p == "graph" && req.ThreadID != "":
		say := fmt.Sprintf("thread %s was not started with graph %s", req.ThreadID, req.Graph)
		if c, cerr := r.client(); cerr == nil {
			if t, terr := c.Thread(r.e.ctx, req.ThreadID); terr == nil {
				say = fmt.Sprintf("thread %s runs graph %s, not %s: continue it with %s run %s --thread %s%s", req.ThreadID, t.Graph, req.Graph, self, quote(t.Graph), quote(req.ThreadID), r.serverArg())
			}
		}
		return &restated{err: ce, say: say}
	case strings.HasPrefix(p, "input."):
		return &restated{err: ce, say: ce.Message, hint: fmt.Sprintf("%s graphs %s%s shows the input it takes", self, quote(req.Graph), r.serverArg())}
	}
	return err
}
