// Command support-agent chats with the support agent (examples/graphs.SupportAgent)
// in the terminal: the model's text is printed as it streams, tool calls and their
// results are shown, and the approval the agent needs before issuing a refund is
// asked as a menu (approve, edit, reject, respond, cancel).
//
//	go run ./examples/support-agent [-message TEXT] [-model NAME]
//
// The model is OpenAI's when OPENAI_API_KEY is set, else Anthropic's when
// ANTHROPIC_API_KEY is set, else the deterministic scripted model the server's
// built-in support-agent graph runs on. After each answer the program reads the
// next message; an empty line or Ctrl-D ends it. Threads live in memory here; see
// examples/refund and "interlude demo" for a thread kept in a SQLite file.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/termform"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/anthropic"
	"github.com/interludehq/interlude/model/openai"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Getenv)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "support-agent:", err)
		os.Exit(1)
	}
}

const defaultMessage = "Hi, order A-1001 arrived broken. Please refund the $150."

func run(ctx context.Context, args []string, in io.Reader, out io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("support-agent", flag.ContinueOnError)
	fs.SetOutput(out)
	message := fs.String("message", defaultMessage, "the first `text` to send the agent")
	modelName := fs.String("model", "", "the model `name` (the provider's default when empty)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	m, provider, err := chooseModel(getenv, *modelName)
	if err != nil {
		return err
	}
	a, err := graphs.SupportAgent(m)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Support agent on %s. An empty line or Ctrl-D ends the chat.\n", provider)

	const thread = "support-chat"
	ask := termform.New(in, out)
	text := *message
	fmt.Fprintf(out, "\nyou> %s\n", text)
	for {
		if err := converse(ctx, a, thread, agent.Ask(text), ask, out); err != nil {
			if errors.Is(err, io.EOF) {
				fmt.Fprintln(out, "\nThe question was left unanswered; bye.")
				return nil
			}
			return err
		}
		line, err := ask.Line("\nyou> ")
		if errors.Is(err, io.EOF) || (err == nil && strings.TrimSpace(line) == "") {
			return nil
		}
		if err != nil {
			return err
		}
		text = strings.TrimSpace(line)
	}
}

// chooseModel picks the provider from the environment.
func chooseModel(getenv func(string) string, name string) (model.Model, string, error) {
	if key := getenv("OPENAI_API_KEY"); key != "" {
		opts := []openai.Option{openai.WithAPIKey(key)}
		if name != "" {
			opts = append(opts, openai.WithModel(name))
		}
		m, err := openai.New(opts...)
		if err != nil {
			return nil, "", err
		}
		return m, "OpenAI", nil
	}
	if key := getenv("ANTHROPIC_API_KEY"); key != "" {
		opts := []anthropic.Option{anthropic.WithAPIKey(key)}
		if name != "" {
			opts = append(opts, anthropic.WithModel(name))
		}
		m, err := anthropic.New(opts...)
		if err != nil {
			return nil, "", err
		}
		return m, "Anthropic", nil
	}
	return nil, "the scripted model (set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real one)", nil
}

// converse runs cmd and answers every question the run pauses on, until the agent
// has answered. It returns an error matching io.EOF if the input ends at a
// question.
func converse(ctx context.Context, a *agent.Agent, thread string, cmd graph.Command, ask *termform.Asker, out io.Writer) error {
	p := &printer{out: out, tools: map[string]string{}, shown: map[string]bool{}}
	for {
		var pending []interlude.Interruption
		for ev, err := range a.Stream(ctx, thread, cmd) {
			if err != nil {
				p.endText()
				return err
			}
			switch ev.Type {
			case graph.EventMessage:
				if c, ok := ev.Data.(model.Chunk); ok && c.Type == model.ChunkText {
					p.text(c.Text)
				}
			case graph.EventSubTask:
				// A tool call finished: show its result now, even if the turn
				// then waits for an answer to another call.
				if b, ok := agent.FinishedToolResult(ev); ok {
					p.endText()
					p.result(b)
				}
			case graph.EventUpdate:
				p.update(ev.Node, ev.Update)
			case graph.EventInterrupt:
				pending = append(pending, *ev.Interrupt)
			case graph.EventEnd:
				p.endText()
				if ev.Status == interlude.RunFailed {
					snap, err := a.State(ctx, thread)
					if err == nil {
						return fmt.Errorf("the run failed: %s", snap.Error)
					}
					return errors.New("the run failed")
				}
			}
		}
		if len(pending) == 0 {
			return nil
		}
		answers := map[string]interlude.Resolution{}
		for _, q := range pending {
			r, err := ask.Ask(q)
			if err != nil {
				return err
			}
			answers[q.ID] = r
		}
		cmd = graph.Respond(answers)
	}
}

// printer shows a conversation as it happens.
type printer struct {
	out    io.Writer
	inText bool              // in the middle of streamed text
	tools  map[string]string // tool call id -> tool name
	shown  map[string]bool   // tool call ids whose results were shown
}

func (p *printer) text(s string) {
	if !p.inText {
		fmt.Fprint(p.out, "agent> ")
		p.inText = true
	}
	fmt.Fprint(p.out, s)
}

func (p *printer) endText() {
	if p.inText {
		fmt.Fprintln(p.out)
		p.inText = false
	}
}

// update shows the tool calls a model turn made and the results of the tools.
func (p *printer) update(node string, data json.RawMessage) {
	var u struct {
		Messages []model.Message `json:"messages"`
	}
	if json.Unmarshal(data, &u) != nil {
		return
	}
	p.endText()
	for _, m := range u.Messages {
		for _, b := range m.Content {
			switch b.Type {
			case model.BlockToolUse:
				p.tools[b.ID] = b.Name
				fmt.Fprintf(p.out, "  -> %s %s\n", b.Name, b.Input)
			case model.BlockToolResult:
				p.result(b)
			}
		}
	}
}

// result shows a tool's result once: the turn's update carries again the
// results already shown as their calls finished.
func (p *printer) result(b model.Block) {
	if p.shown[b.ToolUseID] {
		return
	}
	p.shown[b.ToolUseID] = true
	name := p.tools[b.ToolUseID]
	if name == "" {
		name = b.ToolUseID
	}
	verdict := ""
	if b.IsError {
		verdict = " (error)"
	}
	fmt.Fprintf(p.out, "  <- %s%s: %s\n", name, verdict, oneLine(b.ContentText()))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
