// Package agent is the prebuilt agent loop: a model calls tools in a loop until it
// answers without calling any, and some tool calls need a person's approval or
// answer first.
//
// The agent is an ordinary graph (node "model", node "tools") over State, so an agent
// thread lives in the same store, has the same history and is served by the same
// API as any other. Pauses follow the graph's rules:
//
//   - every pending question of a turn comes back together;
//   - tool calls of a turn that finished are never run again, and the model is not
//     called again until every tool call of the turn has a result;
//   - with sequential execution, the calls after an interrupted one have not run and
//     run after it once it is answered;
//   - a rejected call is not run: the model gets an error result with the given
//     message (kept even when empty; with no message, a default saying the call was
//     not approved);
//   - every tool result carries the call's interrupt history: each question, the
//     tool's private state, and the resolution with who gave it and when;
//   - the results of a turn reach the transcript together, once every call has
//     one, but a call's result can be shown as soon as the call finishes: a
//     stream reports it as a graph.EventSubTask (FinishedToolResult reads it),
//     and while the turn waits, FinishedToolResults reads those of a thread's
//     snapshot. The turn's tool-result message carries them again; a client
//     showing both skips results it has shown, by tool call id
//     (model.Block.ToolUseID).
//
// An assistant turn is stored as the model gave it, thinking blocks included
// (model.BlockThinking, model.BlockRedactedThinking), and goes back to the model
// whole, so a provider that requires a turn's thinking with its tool results
// (the Messages API with extended thinking) gets it even after a pause or a
// restart.
//
// The transcript is the agent's: input may carry user turns only, since a
// client that could send assistant turns or tool results could put words in the
// model's mouth or forge a tool's outcome. A program that imports a conversation
// held elsewhere opts in with WithImportedHistory: input may then carry assistant
// turns (thinking included) and tool results, which are stored with
// model.Message.Imported set, for people reading the conversation.
//
// Input is checked before anything is applied or stored: each message must pass
// model.Message.Validate, may not set Imported itself, and must be a user turn
// without tool results unless importing is allowed; the conversation may not stay
// empty. Refused input is an *interlude.Error with code
// interlude.CodeInvalidRequest, with a violation whose path names the field
// ("/messages/1/role"), and leaves the thread as it was.
//
// Approval policies (RequireApproval, RequireApprovalIf) ask before a call runs;
// the person approves, edits the arguments (validated against the tool's schema
// before the answer is accepted), rejects with a message, or responds in the tool's
// place. An approval may be sticky for the rest of the current invocation; sticky
// approvals live in graph.RunMemory and are never stored, so a restored thread asks
// again.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/internal/tracing"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/tool"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// State is an agent thread's state.
type State struct {
	// Messages is the transcript: user input, assistant turns and tool results.
	Messages []model.Message `json:"messages" graph:"append"`
	// Turns counts the model calls of the current run: those made since the latest
	// input, pauses and restarts included. Every input resets it to 0 (input may not
	// set it); answers to interrupts and Continue do not.
	Turns int `json:"turns,omitempty" graph:"add"`
	// Subagents are the transcripts of the agents this agent ran as tools
	// (AsTool), by tool call id. The model never sees them.
	Subagents map[string]Delegation `json:"subagents,omitempty" graph:"merge"`
}

// Node names of the agent graph, for breakpoints, stream filters and inspection.
const (
	// ModelNode calls the model with the transcript and appends its reply.
	ModelNode = "model"
	// ToolsNode runs the tool calls of the last assistant turn and appends their
	// results; the graph then goes back to ModelNode.
	ToolsNode = "tools"
)

// ErrMaxTurns matches the error of a run stopped by WithMaxTurns: too many model
// calls since the latest input.
var ErrMaxTurns = &interlude.Error{Code: "max_turns", Message: "the agent reached its turn limit"}

// Agent is a compiled agent. It is safe for concurrent use.
type Agent struct {
	*graph.Graph[State]
	cfg config
}

type config struct {
	options.Problems

	system    string
	maxTurns  int
	parallel  int
	generate  bool
	hooks     []namedHook
	approvals map[string]*approval
	graphOpts []graph.Option
	imports   bool
	tracer    trace.Tracer
	tp        trace.TracerProvider
	source    ToolSource
}

// Option configures New.
type Option func(*config)

// WithSystemPrompt sets the system prompt.
func WithSystemPrompt(s string) Option { return func(c *config) { c.system = s } }

// WithMaxTurns caps the model calls of one run (0, the default, means no cap). A
// run starts with each input, such as a user message, and lasts until the agent
// answers, however many interrupts it pauses for; a conversation may go on for any
// number of messages, as with a recursion limit per invocation or max turns per run
// elsewhere. The count (State.Turns) is part of the thread's state: a run resumed
// after a pause or a restart goes on counting where it was, so answering interrupts
// never resets it. Reaching the cap fails the run with an error matching
// ErrMaxTurns; Continue then fails the same way, and new input starts a new run.
func WithMaxTurns(n int) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.maxTurns, n, n >= 0, "agent.WithMaxTurns", "%d turns is negative; give 0 for no cap", n)
	}
}

// WithParallelTools runs up to n tool calls of a turn at once (the default is 4).
func WithParallelTools(n int) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.parallel, n, n >= 1, "agent.WithParallelTools", "%d calls at once: give at least 1", n)
	}
}

// Sequential runs a turn's tool calls one after another, in the order the model
// made them. A call that pauses stops the turn there; the calls after it run once
// it is answered.
func Sequential() Option { return WithParallelTools(1) }

// WithImportedHistory lets input carry assistant turns (with their thinking) and
// tool results as well as user turns, for a program that imports a conversation
// held elsewhere. Those turns (assistant turns, and user turns carrying tool
// results) are stored with model.Message.Imported set. Only
// give it to an agent whose callers may write the agent's side of the
// conversation: served over HTTP, it lets any client with the run role do so.
func WithImportedHistory() Option { return func(c *config) { c.imports = true } }

// WithoutStreaming calls the model's Generate instead of Stream, for providers or
// proxies that do not stream. Streams of the run then carry no model text until
// each turn ends.
func WithoutStreaming() Option { return func(c *config) { c.generate = true } }

// WithGraphOptions passes options to the underlying graph (store, name,
// breakpoints, observer, ...).
func WithGraphOptions(opts ...graph.Option) Option {
	return func(c *config) { c.graphOpts = append(c.graphOpts, opts...) }
}

// WithTracerProvider makes the agent emit OpenTelemetry spans through tp (by
// default the global provider, otel.GetTracerProvider): its graph's spans (see
// graph.WithTracerProvider) and a span per tool call, named "execute_tool" and
// the tool's name as OpenTelemetry's GenAI conventions have it. Model calls are
// traced by the model provider (see package model/openai and model/anthropic).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// Hook runs before a tool call, after the call's approval (if any). It may change
// nothing, ask a person through interlude.Interrupt (giving each of its
// interrupts a Name distinct from every other hook's on the same call), refuse the
// call by returning a *interlude.RejectedError (the model sees its message), or
// fail the run with another error.
type Hook func(ctx context.Context, call Call) error

type namedHook struct {
	name string
	fn   Hook
}

// BeforeToolCall adds a hook that runs before every tool call, in the order added.
func BeforeToolCall(name string, h Hook) Option {
	return func(c *config) {
		if h == nil || name == "" {
			c.Refuse("agent.BeforeToolCall", "give a name and a hook")
			return
		}
		for _, x := range c.hooks {
			if x.name == name {
				c.Refuse("agent.BeforeToolCall", "two hooks are named %q; give each its own name", name)
				return
			}
		}
		c.hooks = append(c.hooks, namedHook{name, h})
	}
}

// Call is a tool call as hooks and approval policies see it.
type Call struct {
	// ID is the model's id for the call.
	ID string `json:"id"`
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Arguments are the arguments the model gave.
	Arguments json.RawMessage `json:"arguments"`
}

// New builds an agent over the model and tools.
func New(m model.Model, tools []tool.Tool, opts ...Option) (*Agent, error) {
	cfg := config{parallel: 4, approvals: map[string]*approval{}}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Err(); err != nil {
		return nil, err
	}
	if cfg.source != nil {
		if len(tools) > 0 {
			return nil, errors.New("agent: tools given both to New and with WithToolSource; give them one way")
		}
		tools = cfg.source.Tools()
	}
	set, err := newToolSet(tools)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	for name := range cfg.approvals {
		if set.byName[name] == nil {
			return nil, fmt.Errorf("agent: approval required for unknown tool %q", name)
		}
	}
	l := &loop{model: m, cfg: &cfg}
	l.set.Store(set)
	g := graph.New[State]()
	g.OnInput(l.checkInput)
	g.AddNode(ModelNode, l.callModel)
	g.AddNode(ToolsNode, l.runTools)
	g.AddEdge(graph.Start, ModelNode)
	g.AddRoute(ModelNode, func(ctx context.Context, s State) ([]string, error) {
		if n := len(s.Messages); n > 0 && slices.ContainsFunc(s.Messages[n-1].Content, func(b model.Block) bool { return b.Type == model.BlockToolUse }) {
			return toTools, nil
		}
		return toEnd, nil
	})
	g.AddEdge(ToolsNode, ModelNode)
	cfg.tracer = tracing.Tracer(cfg.tp)
	compiled, err := g.Compile(append([]graph.Option{graph.WithName("agent"), graph.WithTracerProvider(cfg.tp)}, cfg.graphOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return &Agent{Graph: compiled, cfg: cfg}, nil
}

// toTools and toEnd are the model node's routes; the graph only reads them.
var toTools, toEnd = []string{ToolsNode}, []string{graph.End}

// Ask returns the command that starts or continues a conversation with a user
// message.
func Ask(text string) graph.Command {
	return graph.Input(State{Messages: []model.Message{model.UserText(text)}})
}

// loop holds what the agent's nodes need.
type loop struct {
	model model.Model
	set   atomic.Pointer[toolSet] // the tools as last read
	cfg   *config
}

// checkInput refuses input that would leave the conversation empty, that holds a
// message no model could take (an unknown role or block type, a tool call without
// an id, ...), that writes the agent's side of the conversation without
// WithImportedHistory, or that sets the turn count, before anything is applied.
// Imported input is marked. Input that passes starts a new run: the turn count
// goes back to 0.
func (l *loop) checkInput(ctx context.Context, current State, input *State) (State, error) {
	for i, m := range input.Messages {
		if !l.cfg.imports && m.Role != "" && m.Role != model.RoleUser {
			return State{}, invalidMessage(i, "role", `must be "user"`,
				fmt.Sprintf("input message %d has role %q: input may carry user turns only, since the agent writes its own turns (a program importing a conversation gives the agent WithImportedHistory)", i, m.Role))
		}
		if err := m.Validate(); err != nil {
			return State{}, &interlude.Error{Code: interlude.CodeInvalidRequest, Err: err,
				Message: fmt.Sprintf("input message %d: %s", i, strings.TrimPrefix(err.Error(), "model: "))}
		}
		if m.Imported {
			return State{}, invalidMessage(i, "imported", "is set by the agent",
				fmt.Sprintf("input message %d sets imported, which the agent sets itself; leave it out", i))
		}
		if l.cfg.imports {
			continue
		}
		for j, b := range m.Content {
			if b.Type == model.BlockToolResult {
				return State{}, invalidMessage(i, "content/"+strconv.Itoa(j)+"/type", "may not be tool_result",
					fmt.Sprintf("input message %d carries a tool result: the agent's tools write their own (a program importing a conversation gives the agent WithImportedHistory)", i))
			}
		}
	}
	if l.cfg.imports {
		for i, m := range input.Messages {
			input.Messages[i].Imported = m.Role != model.RoleUser || slices.ContainsFunc(m.Content, func(b model.Block) bool { return b.Type == model.BlockToolResult })
		}
	}
	if len(current.Messages)+len(input.Messages) == 0 {
		return State{}, errEmptyConversation()
	}
	if input.Subagents != nil {
		return State{}, &interlude.Error{Code: interlude.CodeInvalidRequest,
			Message: "the input sets subagents, which the agent's agent tools write themselves; send messages only"}
	}
	if input.Turns != 0 {
		return State{}, &interlude.Error{Code: interlude.CodeInvalidRequest,
			Message: "the input sets turns, which the agent counts itself; send messages only"}
	}
	// A new run: bring the count (an "add" field) back to 0.
	return State{Turns: -current.Turns}, nil
}

// invalidMessage refuses input because of the field at rel in its i-th message,
// with a violation (problem) whose path is a JSON Pointer into the input, and
// msg as the whole story.
func invalidMessage(i int, rel, problem, msg string) error {
	return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: msg,
		Violations: []interlude.Violation{{Path: "/messages/" + strconv.Itoa(i) + "/" + rel, Message: problem}}}
}

// errEmptyConversation refuses to call the model with no messages.
func errEmptyConversation() error {
	return &interlude.Error{Code: interlude.CodeInvalidRequest,
		Message: "the conversation has no messages; send at least one, such as a user message (agent.Ask)"}
}

func (l *loop) callModel(ctx context.Context, s State) (State, error) {
	if len(s.Messages) == 0 {
		return State{}, errEmptyConversation()
	}
	if l.cfg.maxTurns > 0 && s.Turns >= l.cfg.maxTurns {
		return State{}, &interlude.Error{Code: ErrMaxTurns.Code, Message: fmt.Sprintf("the agent reached its limit of %d model turns for one run; raise WithMaxTurns, or send a new message to start another run", l.cfg.maxTurns)}
	}
	set, err := l.tools()
	if err != nil {
		return State{}, err
	}
	req := &model.Request{System: l.cfg.system, Messages: s.Messages, Tools: set.specs}
	resp, err := l.ask(ctx, req)
	if err != nil {
		return State{}, err
	}
	msg := resp.Message
	msg.Role = model.RoleAssistant
	return State{Messages: []model.Message{msg}, Turns: 1}, nil
}

// ask calls the model, streaming its output to the run's stream as it comes.
func (l *loop) ask(ctx context.Context, req *model.Request) (*model.Response, error) {
	if l.cfg.generate {
		return l.model.Generate(ctx, req)
	}
	// One reader holds what the stream's callback needs, rather than each
	// variable a loop body would capture being moved to the heap apart.
	r := &streamReader{ctx: ctx, observed: graph.Observed(ctx)} // chunks nobody reads are not boxed as events
	l.model.Stream(ctx, req)(r.yield)
	if r.err != nil {
		return nil, r.err
	}
	if r.resp == nil {
		return nil, errors.New("the model's stream ended without a response")
	}
	return r.resp, nil
}

// streamReader reads a model's stream for ask: the final response, or the
// stream's error, and every other chunk emitted to the run's stream if
// anyone observes it.
type streamReader struct {
	ctx      context.Context
	observed bool
	resp     *model.Response
	err      error
}

// yield takes one chunk of the stream; it stops the stream at an error.
func (r *streamReader) yield(c model.Chunk, err error) bool {
	if err != nil {
		r.err = err
		return false
	}
	if c.Type == model.ChunkDone {
		r.resp = c.Response
		return true
	}
	if r.observed {
		graph.Emit(r.ctx, graph.EventMessage, c)
	}
	return true
}

// runTools runs the tool calls of the last assistant message and returns their
// results in call order, once every call has one.
func (l *loop) runTools(ctx context.Context, s State) (State, error) {
	if len(s.Messages) == 0 {
		return State{}, nil
	}
	calls := s.Messages[len(s.Messages)-1].ToolUses()
	t := &toolTurn{l: l, ctx: ctx, calls: calls, results: make([]model.Block, len(calls))}
	if len(calls) <= len(t.fewErrs) {
		t.errs = t.fewErrs[:len(calls)]
	} else {
		t.errs = make([]error, len(calls))
	}
	if l.cfg.parallel <= 1 {
		for i := range calls {
			if t.run(i); t.errs[i] != nil {
				break // later calls wait until this one is answered
			}
		}
	} else {
		// Up to parallel workers take the calls in order; this goroutine is
		// one of them, so a turn of n calls starts n-1 goroutines at most, and
		// one call runs on a stack that has already grown. It waits for the
		// calls, not for the workers: a worker that starts once every call is
		// taken finds none and ends, and if this goroutine ran them all it
		// does not wait at all.
		t.wg.Add(len(calls))
		for range min(l.cfg.parallel, len(calls)) - 1 {
			go t.work()
		}
		t.work()
		t.wg.Wait()
	}
	var paused error
	for _, err := range t.errs {
		switch {
		case err == nil:
		case interlude.IsPaused(err):
			paused = err
		default:
			return State{}, err
		}
	}
	if paused != nil {
		return State{}, paused
	}
	return State{Messages: []model.Message{{Role: model.RoleUser, Content: t.results}}}, nil
}

// toolTurn is one run of a turn's tool calls: the calls, their results as
// they come, and the workers that take them in order.
type toolTurn struct {
	l       *loop
	ctx     context.Context
	calls   []model.Block
	results []model.Block
	errs    []error
	fewErrs [4]error // errs of a turn of few calls
	next    atomic.Int32
	wg      sync.WaitGroup // the calls left to finish
}

// work runs calls, in order, until none is left to take.
func (t *toolTurn) work() {
	for i := int(t.next.Add(1)) - 1; i < len(t.calls); i = int(t.next.Add(1)) - 1 {
		t.run(i)
		t.wg.Done()
	}
}

// run runs call i once: a call that finished in an earlier attempt of the
// step gives its recorded result.
func (t *toolTurn) run(i int) {
	c := &t.calls[i]
	t.results[i], t.errs[i] = graph.Once(t.ctx, c.ID, func(ctx context.Context) (model.Block, error) {
		return t.l.runCall(ctx, Call{ID: c.ID, Tool: c.Name, Arguments: c.Input})
	}, graph.AsToolCall(c.ID))
}

// FinishedToolResults returns the results of the tool calls of the thread's
// last assistant turn that have finished while the turn waits (for answers to
// its other calls, or after a failure), in the order the model made the calls.
// They are the tool-result blocks the turn's tool-result message will hold once
// every call has a result; until then they are not in the transcript. It
// returns none when no turn waits.
func FinishedToolResults(snap *graph.Snapshot[State]) []model.Block {
	msgs := snap.Values.Messages
	if len(snap.Finished) == 0 || len(msgs) == 0 {
		return nil
	}
	var out []model.Block
	for _, c := range msgs[len(msgs)-1].ToolUses() {
		for _, f := range snap.Finished {
			if b, ok := toolResultOf(f, c.ID); ok {
				out = append(out, b)
				break
			}
		}
	}
	return out
}

// FinishedToolResult returns the result of a tool call that an event of the
// agent's stream reports as finished (a graph.EventSubTask of ToolsNode), as
// soon as the call finishes. The tools node's update carries it again when the
// turn completes, in the tool-result message.
func FinishedToolResult(e graph.Event) (model.Block, bool) {
	if e.Type != graph.EventSubTask || e.Node != ToolsNode || e.SubTask == nil {
		return model.Block{}, false
	}
	return toolResultOf(*e.SubTask, e.SubTask.ToolCallID)
}

// toolResultOf returns the tool-result block of a finished sub-task if it is
// the tools node's run of the call id.
func toolResultOf(f graph.SubTaskResult, id string) (model.Block, bool) {
	if id == "" || f.ToolCallID != id || len(f.Path) != 2 || f.Path[0] != ToolsNode || f.Path[1] != id {
		return model.Block{}, false
	}
	var b model.Block
	if json.Unmarshal(f.Result, &b) != nil || b.Type != model.BlockToolResult {
		return model.Block{}, false
	}
	return b, true
}

// runCall runs one call: rejection check, approval, hooks, then the tool.
func (l *loop) runCall(ctx context.Context, c Call) (model.Block, error) {
	t := l.set.Load().byName[c.Tool]
	name := ""
	if t != nil {
		name = t.span
	} else {
		name = toolSpanName(c.Tool)
	}
	ctx, span := l.cfg.tracer.Start(ctx, name, toolSpanOptions...)
	res, err := l.decide(ctx, t, &c)
	endToolCall(ctx, span, c, res, err)
	if err != nil {
		return model.Block{}, err
	}
	b := model.ToolResult(c.ID, res.Content, res.IsError)
	if len(res.Blocks) > 0 {
		b.Content = res.Blocks
	}
	if xs := interlude.Exchanges(ctx); len(xs) > 0 {
		b.Interrupts, _ = encodeExchanges(xs)
	}
	return b, nil
}

// toolSpanOptions start a tool call's span.
var toolSpanOptions = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}

// decide settles call c of the tool entry e (nil if no tool has the call's
// name) and runs the tool unless the decision says otherwise.
func (l *loop) decide(ctx context.Context, e *toolEntry, c *Call) (tool.Result, error) {
	if r := rejection(ctx, c.Tool); r != nil {
		return *r, nil
	}
	if e == nil {
		return tool.Errorf("there is no tool named %q", c.Tool), nil
	}
	t := e.tool
	valid := false
	if a := l.cfg.approvals[c.Tool]; a != nil {
		out, ok, err := a.ask(ctx, t, c)
		if err != nil {
			return tool.Result{}, err
		}
		if out != nil {
			return *out, nil
		}
		valid = ok
	}
	for _, h := range l.cfg.hooks {
		err := h.fn(ctx, *c)
		var rej *interlude.RejectedError
		switch {
		case err == nil:
		case errors.As(err, &rej):
			return tool.Result{Content: rejectionText(c.Tool, rej.Message, rej.Given || rej.Message != ""), IsError: true}, nil
		case interlude.IsPaused(err):
			return tool.Result{}, err
		default:
			return tool.Result{}, fmt.Errorf("hook %q on call %s: %w", h.name, c.ID, err)
		}
	}
	if valid && len(l.cfg.hooks) == 0 {
		// The approval has just validated the arguments, and no hook ran
		// since to change them.
		return tool.RunChecked(ctx, t, c.Arguments, nil)
	}
	return tool.Run(ctx, t, c.Arguments)
}

// rejection returns the result of a call whose interrupt (raised by the tool, a
// hook or the approval) was rejected or cancelled: the call does not run again.
func rejection(ctx context.Context, toolName string) *tool.Result {
	for _, x := range interlude.Exchanges(ctx) {
		r := x.Resolution
		if r == nil {
			continue
		}
		switch r.Status {
		case interlude.Rejected:
			msg, given := "", r.Error != nil
			if given {
				msg = r.Error.Message
			}
			return &tool.Result{Content: rejectionText(toolName, msg, given), IsError: true}
		case interlude.Cancelled, interlude.Expired:
			if x.Interrupt.Name == approvalName {
				return withdrawn(toolName, r.Status == interlude.Expired)
			}
		}
	}
	return nil
}

// rejectionText is what the model sees for a rejected call: the person's message
// as given (even empty), or a default when they gave none.
func rejectionText(toolName, msg string, given bool) string {
	if given {
		return msg
	}
	return fmt.Sprintf("The user did not approve this call to %s, so it was not run.", toolName)
}

// endToolCall ends a tool call's span with the call and how it ended: "ok",
// "error" (the tool's result is an error the model sees), "rejected" (a person
// refused it), "paused" (it waits for an answer) or "failed" (the run fails).
func endToolCall(ctx context.Context, span trace.Span, c Call, res tool.Result, err error) {
	if span.IsRecording() {
		outcome := "ok"
		switch {
		case interlude.IsPaused(err):
			outcome = "paused"
		case err != nil:
			outcome = "failed"
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		case rejection(ctx, c.Tool) != nil:
			outcome = "rejected"
		case res.IsError:
			outcome = "error"
		}
		span.SetAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(c.Tool),
			semconv.GenAIToolCallID(c.ID), tracing.ToolOutcome.String(outcome))
	}
	span.End()
}
