// Package mcp gives an agent the tools of Model Context Protocol servers, and
// turns the questions those servers ask during a tool call (elicitation) into
// Interlude interrupts that wait like any other.
//
// Connect reaches one or more MCP servers, over stdio (a command it starts) or
// streamable HTTP (a URL, with headers for auth), and Client.Tools returns their
// tools as tool.Tools with the servers' input schemas, ready for agent.New. Two
// servers offering a tool of the same name both get theirs namespaced as
// "server__tool". Approvals, edits (checked against the MCP tool's schema),
// rejections and responses work on them as on any Go tool. A result's text,
// images, embedded resources and structured content reach the model as content
// blocks; a result marked isError reaches it as a failed call. When a server
// says its tool list changed, the client lists the tools again: Tools then
// returns the new list, and a tool the server no longer offers answers each call
// with an error result saying so. An agent built with agent.WithToolSource(client)
// reads the list before each model call, so the model is offered the tools as
// the servers offer them then.
//
// # Elicitation
//
// An MCP server may ask the user for input during a tool call, in either form
// the protocol has had: an elicitation/create request sent in the middle of the
// call (protocol revisions before 2026-07-28), or a result that says input is
// required, answered by calling the tool again with the input (2026-07-28, the
// multi round-trip form). Either way the question becomes an interrupt with
// reason "elicitation", the server's message, and the requested schema as its
// response schema. It waits like any other question: in the inbox, through the
// CLI and the API, with notifications and time to live.
//
// Resuming it with an object accepts with that content; cancelling it (or its
// expiry) tells the server the user cancelled; rejecting it declines. In an
// agent a rejected question settles the call as rule 8 says: the tool is not
// called again and the model sees the rejection as the call's failed result.
// Used outside an agent, a rejection is sent to the server as a decline.
// A URL-mode elicitation is shown as a link in the question's message and value;
// any answer accepts it.
//
// The pause outlives the MCP call: the call ends when the run pauses, and
// answering the question calls the tool again from the start. The server then
// asks the same question, and the recorded answer is given to it without asking
// a person again, so a person is asked once. The tool therefore runs again, as
// far as its question at least, once per answered question: a tool whose work
// before its question must not happen twice should make that work idempotent.
// A question the server asks differently the second time (another message or
// schema) is a new question.
//
// A server on a protocol revision before 2026-07-28 asks within the call, where
// the question cannot be told apart from those of another call running at the
// same time; the client therefore runs one call at a time on such a server.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/interludehq/interlude/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReasonElicitation is the Reason of the interrupts raised for an MCP server's
// elicitation.
const ReasonElicitation = "elicitation"

// Server says how to reach one MCP server. Exactly one of Command, URL and
// Transport is set.
type Server struct {
	// Name names the server; it prefixes its tools' names where they collide
	// with another server's, and it is shown with its questions.
	Name string
	// Command and Args start the server as a subprocess that speaks MCP over its
	// standard input and output. Env, when set, is its environment, and Dir its
	// working directory.
	Command string
	Args    []string
	Env     []string
	Dir     string
	// URL is the server's streamable HTTP endpoint. Header is sent with every
	// request, for example an Authorization header.
	URL    string
	Header http.Header
	// HTTPClient, when set, is used for URL.
	HTTPClient *http.Client
	// Transport is any other SDK transport, such as one end of
	// sdk.NewInMemoryTransports.
	Transport sdk.Transport
	// ProtocolVersion, when set, is the protocol revision asked for when
	// connecting; the newest the SDK supports by default.
	ProtocolVersion string
	// QuestionTTL, when positive, is how long the server's questions stay open
	// (interlude.Request.TTL); an expired question is sent to the server as a
	// cancellation when the call runs again.
	QuestionTTL time.Duration
}

func (s Server) transport() (sdk.Transport, error) {
	set := 0
	for _, b := range []bool{s.Command != "", s.URL != "", s.Transport != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("mcp: server %q: set exactly one of Command, URL and Transport", s.Name)
	}
	switch {
	case s.Command != "":
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env, cmd.Dir = s.Env, s.Dir
		return &sdk.CommandTransport{Command: cmd}, nil
	case s.URL != "":
		hc := s.HTTPClient
		if hc == nil {
			hc = http.DefaultClient
		}
		if len(s.Header) > 0 {
			base := hc.Transport
			if base == nil {
				base = http.DefaultTransport
			}
			c := *hc
			c.Transport = &headerTransport{header: s.Header, base: base}
			hc = &c
		}
		return &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc}, nil
	}
	return s.Transport, nil
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	header http.Header
	base   http.RoundTripper
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.header {
		r.Header[k] = slices.Clone(vs)
	}
	return t.base.RoundTrip(r)
}

// Client holds the connections to MCP servers and their tools.
type Client struct {
	conns []*conn

	mu      sync.Mutex
	tools   []tool.Tool
	changed chan struct{}
}

// Connect connects to the servers and lists their tools. It fails, closing what
// it opened, when a server cannot be reached or two servers share a name.
func Connect(ctx context.Context, servers ...Server) (*Client, error) {
	c := &Client{changed: make(chan struct{}, 1)}
	seen := map[string]bool{}
	for _, s := range servers {
		if s.Name == "" {
			c.Close()
			return nil, errors.New("mcp: every server needs a Name")
		}
		if seen[s.Name] {
			c.Close()
			return nil, fmt.Errorf("mcp: two servers are named %q", s.Name)
		}
		seen[s.Name] = true
		cn, err := dial(ctx, c, s)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.conns = append(c.conns, cn)
	}
	for _, cn := range c.conns {
		if err := cn.refresh(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	c.rebuild()
	return c, nil
}

// Tools returns the servers' tools as they were last listed, namespaced as
// "server__tool" where two servers offer a tool of the same name.
func (c *Client) Tools() []tool.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tools)
}

// Changed receives a value after a server's tool list changed and Tools
// returns the new list. An agent built with agent.WithToolSource(c) needs no
// action; a program that gave the agent a fixed list can build it again.
func (c *Client) Changed() <-chan struct{} { return c.changed }

// Close closes every connection, stopping the servers it started.
func (c *Client) Close() error {
	var errs []error
	for _, cn := range c.conns {
		errs = append(errs, cn.session.Close())
	}
	return errors.Join(errs...)
}

// rebuild recomputes the tool list from every connection's last listing.
func (c *Client) rebuild() {
	count := map[string]int{}
	for _, cn := range c.conns {
		for _, t := range cn.listed() {
			count[t.remote]++
		}
	}
	var out []tool.Tool
	for _, cn := range c.conns {
		for _, t := range cn.listed() {
			t.setName(t.remote)
			if count[t.remote] > 1 {
				t.setName(cn.server.Name + "__" + t.remote)
			}
			out = append(out, t)
		}
	}
	c.mu.Lock()
	c.tools = out
	c.mu.Unlock()
}

// conn is one server's session and tools.
type conn struct {
	client  *Client
	server  Server
	session *sdk.ClientSession
	// serial is held around every call on a server that asks within the call
	// (revisions before 2026-07-28), so that its question belongs to that call.
	serial  bool
	callMu  sync.Mutex
	current *call // the call in progress when serial

	mu    sync.Mutex
	byKey map[string]*remoteTool
	order []string
}

func dial(ctx context.Context, c *Client, s Server) (*conn, error) {
	tr, err := s.transport()
	if err != nil {
		return nil, err
	}
	cn := &conn{client: c, server: s, byKey: map[string]*remoteTool{}}
	cl := sdk.NewClient(&sdk.Implementation{Name: "interlude", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: cn.elicitInCall,
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{
			Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			// Listing is a request of its own, which must not wait inside the
			// handler of the notification that asks for it.
			go cn.relist()
		},
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	})
	var opts *sdk.ClientSessionOptions
	if s.ProtocolVersion != "" {
		opts = &sdk.ClientSessionOptions{ProtocolVersion: s.ProtocolVersion}
	}
	session, err := cl.Connect(ctx, tr, opts)
	if err != nil {
		return nil, fmt.Errorf("mcp: connect to server %q: %w", s.Name, err)
	}
	cn.mu.Lock()
	cn.session = session
	cn.mu.Unlock()
	if ir := session.InitializeResult(); ir != nil && ir.ProtocolVersion < "2026-07-28" {
		cn.serial = true
	}
	return cn, nil
}

// refresh lists the server's tools again. Tools it still offers keep their
// tool.Tool, updated; the others are marked gone.
func (cn *conn) refresh(ctx context.Context) error {
	var listed []*sdk.Tool
	for t, err := range cn.session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcp: list the tools of server %q: %w", cn.server.Name, err)
		}
		listed = append(listed, t)
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	now := map[string]bool{}
	cn.order = cn.order[:0]
	for _, st := range listed {
		schema, err := json.Marshal(st.InputSchema)
		if err != nil || st.InputSchema == nil {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		t := cn.byKey[st.Name]
		if t == nil {
			t = &remoteTool{conn: cn, remote: st.Name}
			cn.byKey[st.Name] = t
		}
		t.update(st.Description, schema)
		now[st.Name] = true
		cn.order = append(cn.order, st.Name)
	}
	for name, t := range cn.byKey {
		if !now[name] {
			t.markGone()
			delete(cn.byKey, name)
		}
	}
	return nil
}

// relist lists the server's tools again after it said they changed.
func (cn *conn) relist() {
	cn.mu.Lock()
	ready := cn.session != nil
	cn.mu.Unlock()
	if !ready {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if cn.refresh(ctx) != nil {
		return
	}
	cn.client.rebuild()
	select {
	case cn.client.changed <- struct{}{}:
	default:
	}
}

// listed returns the server's tools in the order it listed them.
func (cn *conn) listed() []*remoteTool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	out := make([]*remoteTool, 0, len(cn.order))
	for _, n := range cn.order {
		out = append(out, cn.byKey[n])
	}
	return out
}

// elicitInCall answers an elicitation/create request the server sends during a
// call (revisions before 2026-07-28), on behalf of the call in progress.
func (cn *conn) elicitInCall(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	cn.mu.Lock()
	c := cn.current
	cn.mu.Unlock()
	if c == nil {
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	res, err := c.elicit(req.Params)
	if err != nil {
		c.stop(err)
		return nil, err
	}
	return res, nil
}

// remoteTool is one MCP tool as a tool.Tool.
type remoteTool struct {
	conn   *conn
	remote string

	mu          sync.Mutex
	name        string
	description string
	schema      json.RawMessage
	gone        bool
}

var _ tool.Tool = (*remoteTool)(nil)

func (t *remoteTool) update(description string, schema json.RawMessage) {
	t.mu.Lock()
	t.description, t.schema, t.gone = description, schema, false
	t.mu.Unlock()
}

func (t *remoteTool) markGone() {
	t.mu.Lock()
	t.gone = true
	t.mu.Unlock()
}

func (t *remoteTool) setName(n string) {
	t.mu.Lock()
	t.name = n
	t.mu.Unlock()
}

// Name is the tool's name for the model.
func (t *remoteTool) Name() string { t.mu.Lock(); defer t.mu.Unlock(); return t.name }

// Description is the server's description of the tool.
func (t *remoteTool) Description() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.description
}

// InputSchema is the server's input schema of the tool.
func (t *remoteTool) InputSchema() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.schema
}

// maxRounds bounds the input-required rounds of one call.
const maxRounds = 16

// Call calls the tool on the server. Input the server requires on the way is
// asked of a person as interrupts; the pause passes up.
func (t *remoteTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	t.mu.Lock()
	gone := t.gone
	t.mu.Unlock()
	if gone {
		return tool.Errorf("the MCP server %q no longer offers the tool %s", t.conn.server.Name, t.remote), nil
	}
	cn := t.conn
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &call{ctx: ctx, tool: t, cancel: cancel, seen: map[string]int{}}
	if cn.serial {
		cn.callMu.Lock()
		defer cn.callMu.Unlock()
		cn.mu.Lock()
		cn.current = c
		cn.mu.Unlock()
		defer func() {
			cn.mu.Lock()
			cn.current = nil
			cn.mu.Unlock()
		}()
	}
	params := &sdk.CallToolParams{Name: t.remote, Arguments: args}
	for round := 0; ; round++ {
		res, err := cn.session.CallTool(callCtx, params)
		if p := c.stopped(); p != nil {
			return tool.Result{}, p
		}
		if err != nil {
			return tool.Result{}, fmt.Errorf("MCP server %q: %w", cn.server.Name, err)
		}
		if !res.NeedsInput() {
			return resultOf(res), nil
		}
		if len(res.InputRequests) == 0 {
			return tool.Result{}, fmt.Errorf("MCP server %q is busy; try again later", cn.server.Name)
		}
		if round+1 >= maxRounds {
			return tool.Result{}, fmt.Errorf("MCP server %q asked for input %d times in one call; giving up", cn.server.Name, maxRounds)
		}
		keys := make([]string, 0, len(res.InputRequests))
		for k := range res.InputRequests {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		responses := make(sdk.InputResponseMap, len(keys))
		for _, k := range keys {
			ep, ok := res.InputRequests[k].(*sdk.ElicitParams)
			if !ok {
				return tool.Result{}, fmt.Errorf("MCP server %q requires input of a kind an agent cannot give (%T); only elicitation is supported", cn.server.Name, res.InputRequests[k])
			}
			r, err := c.elicit(ep)
			if err != nil {
				return tool.Result{}, err
			}
			responses[k] = r
		}
		params = &sdk.CallToolParams{Name: t.remote, Arguments: args, InputResponses: responses, RequestState: res.RequestState}
	}
}
