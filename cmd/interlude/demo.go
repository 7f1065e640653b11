package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/termform"
	"github.com/interludehq/interlude/internal/termtext"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/anthropic"
	"github.com/interludehq/interlude/model/openai"
	"github.com/interludehq/interlude/store/sqlite"
)

const demoMessage = "Please refund order A-1001 ($150), it arrived broken."

var demoCommand = &command{
	name:    "demo",
	args:    "[--db interlude-demo.db] [--thread ID] [--message TEXT] [--model scripted|openai|anthropic]",
	summary: "chat with the support agent in this terminal, on a SQLite file, answering its questions here",
	about: `The agent looks the order up and asks before issuing the refund: approve, edit the
arguments, reject with a reason, respond in the tool's place, or cancel.
Each question is committed to the file before it is asked, so Ctrl-D at a question
(or killing the process) loses nothing: run the command again with the same
--thread to answer it. On a thread that has finished, --message continues the
conversation. The model is the scripted one the server's built-in support-agent
runs on, unless --model openai (OPENAI_API_KEY) or --model anthropic
(ANTHROPIC_API_KEY) is given.`,
	maxArgs: 0,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		db := fs.String("db", "interlude-demo.db", "the SQLite `file` that keeps the thread")
		thread := fs.String("thread", "", "the thread `id`: picks up its pending question, or continues it; a new one is made when empty")
		message := fs.String("message", demoMessage, "the `TEXT` to send the agent")
		provider := fs.String("model", "scripted", "the `model`: scripted, openai or anthropic")
		modelName := fs.String("model-name", "", "the provider's model `name` (its default when empty)")
		return func([]string) error {
			msgSet, err := messageGiven(fs, *message)
			if err != nil {
				return err
			}
			m, err := demoModel(e, *provider, *modelName)
			if err != nil {
				return err
			}
			d := &demo{e: e, db: *db, thread: *thread, message: *message, messageSet: msgSet}
			return d.run(m)
		}
	},
}

func demoModel(e *env, provider, name string) (model.Model, error) {
	switch provider {
	case "scripted":
		return nil, nil
	case "openai":
		key := e.getenv("OPENAI_API_KEY")
		if key == "" {
			return nil, usagef("--model openai needs OPENAI_API_KEY")
		}
		opts := []openai.Option{openai.WithAPIKey(key)}
		if name != "" {
			opts = append(opts, openai.WithModel(name))
		}
		m, err := openai.New(opts...)
		if err != nil {
			return nil, err
		}
		return m, nil
	case "anthropic":
		key := e.getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, usagef("--model anthropic needs ANTHROPIC_API_KEY")
		}
		opts := []anthropic.Option{anthropic.WithAPIKey(key)}
		if name != "" {
			opts = append(opts, anthropic.WithModel(name))
		}
		m, err := anthropic.New(opts...)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, usagef("unknown model %q: use scripted, openai or anthropic", provider)
}

type demo struct {
	e          *env
	db         string
	thread     string
	message    string
	messageSet bool
	agent      *agent.Agent // reads the thread's state as the agent's
	host       *host.Host   // runs the thread
	ask        *termform.Asker
	out        io.Writer
	inText     bool
	tools      map[string]string
	shown      map[string]bool // tool calls whose results were printed
	asking     atomic.Bool     // a question is being asked in the terminal
}

// again is the command that picks this demo's thread up.
func (d *demo) again() string {
	return fmt.Sprintf("%s demo --db %s --thread %s", self, quote(d.db), quote(d.thread))
}

// stillOpen says that the question asked stays open, and how to come back to it.
func (d *demo) stillOpen() string {
	return fmt.Sprintf("The question stays open: thread %s is paused in %s. Answer it later with:\n  %s", d.thread, d.db, d.again())
}

// onInterrupt makes Ctrl-C (and SIGTERM) end the demo with a word on how to come
// back: at a question, that it stays open; during a run, that the thread resumes
// from its last committed step. It returns a function that stops listening.
func (d *demo) onInterrupt() (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		if d.asking.Load() {
			fmt.Fprintf(d.e.stdout, "\n\n%s\n", d.stillOpen())
		} else {
			fmt.Fprintf(d.e.stdout, "\n\nStopped. Thread %s is kept in %s and goes on from its last committed step with:\n  %s\n", d.thread, d.db, d.again())
		}
		os.Exit(130)
	}()
	return func() { signal.Stop(sigs); close(done) }
}

func (d *demo) run(m model.Model) error {
	st, err := sqlite.Open(d.db)
	if err != nil {
		return err
	}
	defer st.Close()
	if d.agent, err = graphs.SupportAgent(m, graph.WithStore(st)); err != nil {
		return err
	}
	// The demo continues an unfinished run itself, saying so; the host's
	// other watch closes questions whose time to live passes.
	if d.host, err = host.New(host.WithGraph(d.agent.Erase()), host.WithRecoveryWatch(0)); err != nil {
		return err
	}
	d.host.Start(d.e.ctx)
	defer d.host.Close()
	d.ask, d.out, d.tools, d.shown = termform.New(d.e.stdin, d.e.stdout), d.e.stdout, map[string]string{}, map[string]bool{}
	ctx := d.e.ctx

	var cmd graph.Command
	if d.thread == "" {
		d.thread = newThreadID("demo")
	}
	defer d.onInterrupt()()
	snap, err := d.agent.State(ctx, d.thread)
	switch {
	case errors.Is(err, interlude.ErrNotFound):
		fmt.Fprintf(d.out, "Thread %s (in %s)\n\nyou: %s\n", d.thread, d.db, d.message)
		cmd = agent.Ask(d.message)
	case err != nil:
		return err
	default:
		fmt.Fprintf(d.out, "Thread %s (in %s), %s\n\n", d.thread, d.db, snap.Status)
		d.remember(snap.Values.Messages)
		printConversation(d.out, snap.Values.Messages, "")
		for _, id := range printWaitingTurn(d.out, snap.Values.Messages, agent.FinishedToolResults(snap), snap.Interrupts, "") {
			d.shown[id] = true
		}
		switch {
		case len(snap.Interrupts) > 0:
			if d.messageSet {
				fmt.Fprintf(d.out, "(the thread is waiting for an answer; --message is not sent)\n")
			}
			answers, err := d.answer(snap.Interrupts)
			if err != nil {
				return stopped(err)
			}
			cmd = graph.Respond(answers)
		case snap.Status == interlude.ThreadFailed:
			fmt.Fprintf(d.out, "The last step failed (%s); trying it again.\n", oneLine(snap.Error))
			cmd = graph.Continue()
		case snap.Status == interlude.ThreadInterrupted:
			cmd = graph.Continue()
		case snap.Status == interlude.ThreadRunning:
			// The last run stopped before it ended (the demo was stopped, say):
			// it goes on from its last committed step.
			if d.messageSet {
				fmt.Fprintf(d.out, "(the thread's last run is unfinished; --message is not sent)\n")
			}
			fmt.Fprintf(d.out, "The last run stopped before it ended; it goes on from its last committed step.\n")
			cmd = graph.Continue()
		case !d.messageSet:
			fmt.Fprintf(d.out, "\nThe conversation is over. Continue it with:\n  %s --message TEXT\n", d.again())
			return nil
		default:
			fmt.Fprintf(d.out, "\nyou: %s\n", d.message)
			cmd = agent.Ask(d.message)
		}
	}
	return stopped(d.converse(cmd))
}

// stopped turns the end of the person's input, after which the demo has said
// how to pick the thread up, into a clean exit.
func stopped(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// converse runs cmd and every answer the run needs until the agent has answered.
func (d *demo) converse(cmd graph.Command) error {
	for {
		var pending []interlude.Interruption
		var status interlude.RunStatus
		for ev, err := range d.host.Stream(d.e.ctx, d.thread, "", cmd) {
			if err != nil {
				d.endText()
				return d.failed(err)
			}
			switch ev.Type {
			case graph.EventMessage:
				if c, ok := ev.Data.(model.Chunk); ok && c.Type == model.ChunkText {
					if !d.inText {
						fmt.Fprint(d.out, "agent: ")
						d.inText = true
					}
					fmt.Fprint(d.out, termtext.Block(c.Text))
				}
			case graph.EventSubTask:
				if b, ok := agent.FinishedToolResult(ev); ok {
					d.endText()
					d.result(b)
				}
			case graph.EventUpdate:
				d.update(ev.Update)
			case graph.EventInterrupt:
				pending = append(pending, *ev.Interrupt)
			case graph.EventEnd:
				d.endText()
				status = ev.Status
			}
		}
		switch {
		case status == interlude.RunFailed:
			return d.failed(nil)
		case len(pending) == 0:
			fmt.Fprintf(d.out, "\nDone. Thread %s is kept in %s; continue it with:\n  %s --message TEXT\n", d.thread, d.db, d.again())
			return nil
		}
		answers, err := d.answer(pending)
		if err != nil {
			return err
		}
		cmd = graph.Respond(answers)
	}
}

// failed reports a run that failed, with how to retry it: a run whose thread
// reads as failed can be tried again from its last committed step. An error
// that left the thread as it was (a refused command, say) is returned as is.
func (d *demo) failed(err error) error {
	snap, stateErr := d.agent.State(d.e.ctx, d.thread)
	if err != nil && (stateErr != nil || snap.Status != interlude.ThreadFailed) {
		return err
	}
	msg := "the run failed"
	if stateErr == nil && snap.Error != "" {
		msg += ": " + snap.Error
	} else if err != nil {
		msg += ": " + err.Error()
	}
	return &runFailed{msg + "; retry it with: " + d.again()}
}

// answer asks each pending question in the terminal. When the input ends it says
// how to pick the thread up and returns an error matching io.EOF.
func (d *demo) answer(qs []interlude.Interruption) (map[string]interlude.Resolution, error) {
	answers := map[string]interlude.Resolution{}
	for _, q := range qs {
		d.asking.Store(true)
		r, err := d.ask.Ask(q)
		d.asking.Store(false)
		if errors.Is(err, io.EOF) {
			fmt.Fprintf(d.out, "\n%s\n", d.stillOpen())
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		answers[q.ID] = r
	}
	return answers, nil
}

func (d *demo) endText() {
	if d.inText {
		fmt.Fprintln(d.out)
		d.inText = false
	}
}

func (d *demo) remember(msgs []model.Message) {
	for _, m := range msgs {
		for _, b := range m.ToolUses() {
			d.tools[b.ID] = b.Name
		}
	}
}

// result prints a tool's result the first time it is seen: as the call
// finishes, or in the turn's update if it was not reported before.
func (d *demo) result(b model.Block) {
	if d.shown[b.ToolUseID] {
		return
	}
	d.shown[b.ToolUseID] = true
	fmt.Fprintf(d.out, "  %s\n", toolResult(b, d.tools))
}

// update prints a node's new messages: the tool calls of a model turn (its text
// was streamed already) and the tools' results not printed yet.
func (d *demo) update(data json.RawMessage) {
	var u struct {
		Messages []model.Message `json:"messages"`
	}
	if json.Unmarshal(data, &u) != nil {
		return
	}
	d.endText()
	d.remember(u.Messages)
	for _, m := range u.Messages {
		for _, b := range m.Content {
			switch b.Type {
			case model.BlockToolUse:
				fmt.Fprintf(d.out, "  -> %s %s\n", line(b.Name), compact(b.Input))
			case model.BlockToolResult:
				d.result(b)
			}
		}
	}
}

func newThreadID(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// quote quotes s for a shell when it needs it.
func quote(s string) string {
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '@' || r == '+' || r == '=' ||
			r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return strconv.Quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}
