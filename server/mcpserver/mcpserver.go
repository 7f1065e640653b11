// Package mcpserver serves a host's graphs to MCP clients (desktop assistants,
// IDEs, other agents) over streamable HTTP, and brings their pauses to those
// clients as elicitation.
//
// Each hosted graph is a tool named by the graph's name, whose input schema is
// the graph's input schema; calling it starts a new thread with the arguments
// as input (the run role). When the run completes, the result carries the
// thread's values (and, for an agent, its last reply as text); when it fails,
// the result is an error.
//
// When the run pauses, and the client declared the elicitation capability and
// its token may answer (the approve role), each pending question is asked of
// the client's user:
//
//   - on protocol revision 2026-07-28 the call answers input_required, with one
//     input request per question (keyed by the interrupt id) and a signed
//     requestState naming the thread and its questions; the client's retry
//     carries the answers, which are applied as any answer is;
//   - on earlier revisions the server sends elicitation/create within the call.
//
// Accept resumes the question with the form's content, decline rejects it, and
// cancel cancels it; the run then goes on in the same call, and may ask again.
// A question's response schema is sent as it is when it is already MCP's flat
// form (an object of primitive properties); a schema of one primitive value is
// sent as a form with one field, "value"; any other schema (a tool approval
// with editable arguments, nested objects) cannot be reduced without losing
// what it allows, and is not elicited.
//
// Otherwise the call's result says that the thread is waiting, with its id, its
// questions and links to them in the inbox, and the tools pending_questions and
// answer_question let the client, or a person through it, answer later. Every
// answer, however it comes, is validated against the question's schema and
// needs the approve role, as through the HTTP API, and is recorded with the
// token's name.
//
// A requestState is signed with the server's key (WithSigningKey); one signed
// by a server that has since restarted with another key is refused, and the
// question, still waiting, can be answered with answer_question.
package mcpserver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/store"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is the MCP server over a host.
type Server struct {
	host  *host.Host
	mcp   *sdk.Server
	key   []byte
	inbox string
}

// Option configures a Server.
type Option func(*config)

type config struct {
	options.Problems
	key   []byte
	inbox string
}

// minKey is the fewest bytes a signing key may have.
const minKey = 16

// WithSigningKey sets the key that signs requestState; replicas behind one
// address, and a server that restarts, should share one. A random key is made
// otherwise. The key must have at least 16 bytes.
func WithSigningKey(key []byte) Option {
	return func(c *config) {
		if len(key) < minKey {
			c.Refuse("mcpserver.WithSigningKey", "a key of %d bytes is too short; give at least %d random bytes, or leave the option out for a random key", len(key), minKey)
			return
		}
		c.key = slices.Clone(key)
	}
}

// WithInboxURL sets the inbox's address (such as "https://interlude.example.com/inbox/"),
// for the links to waiting questions: an http or https URL, or a path
// starting with "/". Without it the links are paths ("/inbox/#/q/...").
func WithInboxURL(u string) Option {
	return func(c *config) {
		if _, isURL := options.HTTPURL(u); !isURL && !isPath(u) {
			c.Refuse("mcpserver.WithInboxURL", "%q is not an inbox address; give an http(s) URL such as https://interlude.example.com/inbox/, or a path such as /inbox/", u)
			return
		}
		c.inbox = u
	}
}

// New returns the MCP server for the host's graphs. It refuses a nil host and
// a bad option value with an interlude.ErrInvalidRequest error.
func New(h *host.Host, opts ...Option) (*Server, error) {
	if h == nil {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "mcpserver: the host is nil; give the host whose graphs to serve"}
	}
	cfg := config{inbox: "/inbox/"}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Err(); err != nil {
		return nil, err
	}
	s := &Server{host: h, key: cfg.key, inbox: cfg.inbox}
	if len(s.key) == 0 {
		s.key = make([]byte, 32)
		rand.Read(s.key)
	}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: "interlude", Version: "1"}, nil)
	for _, name := range h.Graphs() {
		g := h.Graph(name)
		s.mcp.AddTool(&sdk.Tool{
			Name:        name,
			Description: fmt.Sprintf("Run the %s graph on a new thread. It may stop to ask a person something; the result then says what it waits for.", name),
			InputSchema: objectSchema(g.InputSchema()),
		}, s.runGraph(name))
	}
	s.mcp.AddTool(&sdk.Tool{
		Name:        "pending_questions",
		Description: "List the questions that threads are waiting on, newest first; give thread_id for one thread's.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"thread_id":{"type":"string"},"graph":{"type":"string"}},"additionalProperties":false}`),
	}, s.pendingQuestions)
	s.mcp.AddTool(&sdk.Tool{
		Name:        "answer_question",
		Description: "Answer a question a thread waits on: resume it with a response that matches its response_schema, reject it with a message, or cancel it. The thread then runs on.",
		InputSchema: json.RawMessage(answerSchema),
	}, s.answerQuestion)
	return s, nil
}

// objectSchema returns a graph's input schema with the top-level "type":
// "object" MCP requires of a tool's schema, added when the schema reaches its
// object through a reference (as schemas derived from Go types do).
func objectSchema(schema json.RawMessage) json.RawMessage {
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil || top == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	if _, ok := top["type"]; ok {
		return schema
	}
	top["type"] = json.RawMessage(`"object"`)
	out, err := json.Marshal(top)
	if err != nil {
		return schema
	}
	return out
}

const answerSchema = `{"type":"object","properties":{
"thread_id":{"type":"string","description":"the waiting thread"},
"interrupt_id":{"type":"string","description":"the question; may be left out when the thread waits on one question"},
"action":{"enum":["resume","reject","cancel"],"description":"resume with a response, reject with a message, or cancel"},
"response":{"description":"the answer, matching the question's response_schema (resume)"},
"message":{"type":"string","description":"why the question is rejected (reject)"}},
"required":["thread_id","action"],"additionalProperties":false}`

// MCP returns the SDK server, for serving over other transports (stdio, the
// SDK's in-memory transports). Callers on those transports act with every role,
// anonymously: the program that connects them is trusted.
func (s *Server) MCP() *sdk.Server { return s.mcp }

// Handler returns the streamable HTTP endpoint. It must be mounted behind the
// server's authentication (server.Server.Mount, with auth.NewContext), which names the caller; a
// request that reaches it without a caller is refused.
func (s *Server) Handler() http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp }, &sdk.StreamableHTTPOptions{
		// The server refuses other hosts itself when it has no tokens.
		DisableLocalhostProtection: true,
		// A session a client abandons does not stay in memory.
		SessionTimeout: 30 * time.Minute,
	})
	verify := func(ctx context.Context, _ string, r *http.Request) (*sdkauth.TokenInfo, error) {
		c, ok := auth.FromContext(r.Context())
		if !ok {
			return nil, sdkauth.ErrInvalidToken
		}
		// The server's tokens do not expire; the SDK asks for a time all the same.
		info := &sdkauth.TokenInfo{UserID: c.Name, Extra: map[string]any{callerExtra: c}, Expiration: time.Now().Add(24 * time.Hour)}
		for _, r := range c.Roles {
			info.Scopes = append(info.Scopes, string(r))
		}
		return info, nil
	}
	protected := sdkauth.RequireBearerToken(verify, nil)(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := auth.FromContext(r.Context()); !ok {
			http.Error(w, "the MCP endpoint must be mounted behind the server's authentication", http.StatusUnauthorized)
			return
		}
		if r.Header.Get("Authorization") == "" {
			// A server without tokens lets loopback callers in anonymously; the
			// caller it named stands in for the token.
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer anonymous")
		}
		protected.ServeHTTP(w, r)
	})
}

const callerExtra = "interlude.caller"

// callerOf returns who makes the request: the server's caller over HTTP, the
// trusted program over other transports.
func callerOf(extra *sdk.RequestExtra) auth.Caller {
	if extra != nil && extra.TokenInfo != nil {
		if c, ok := extra.TokenInfo.Extra[callerExtra].(auth.Caller); ok {
			return c
		}
		return auth.Caller{Name: extra.TokenInfo.UserID}
	}
	return auth.Anonymous
}

func errorResult(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// runContext is the context of a run: it carries the caller's name to the
// answers, and a client that goes away does not stop a run it started.
func runContext(ctx context.Context, c auth.Caller) context.Context {
	return interlude.WithAnswerer(context.WithoutCancel(ctx), c.Answerer())
}

// runGraph is the tool of one graph.
func (s *Server) runGraph(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		c := callerOf(req.Extra)
		var res *graph.Result[json.RawMessage]
		var err error
		if req.Params.RequestState != "" {
			st, serr := s.openState(req.Params.RequestState, c)
			if serr != nil {
				return errorResult("%v", serr), nil
			}
			if !c.Has(auth.RoleApprove) {
				return errorResult("token %q may not answer questions: that needs the approve role", c.Name), nil
			}
			answers := map[string]interlude.Resolution{}
			for _, q := range st.Questions {
				r, ok := req.Params.InputResponses[q.ID].(*sdk.ElicitResult)
				if !ok {
					return errorResult("the retry carries no answer to question %s", q.ID), nil
				}
				answers[q.ID] = resolutionOf(r, q.Wrapped)
			}
			res, err = s.host.Invoke(runContext(ctx, c), st.Thread, name, graph.Respond(answers))
		} else {
			if !c.Has(auth.RoleRun) {
				return errorResult("token %q may not start threads: that needs the run role", c.Name), nil
			}
			input := req.Params.Arguments
			if len(input) == 0 {
				input = json.RawMessage(`{}`)
			}
			res, err = s.host.Invoke(runContext(ctx, c), host.NewID("mcp-"), name, graph.Input(input))
		}
		return s.settle(ctx, req, c, name, res, err)
	}
}

// settle turns a run's outcome into the call's result: the values, a failure,
// the questions elicited, or the news that the thread waits.
func (s *Server) settle(ctx context.Context, req *sdk.CallToolRequest, c auth.Caller, name string, res *graph.Result[json.RawMessage], err error) (*sdk.CallToolResult, error) {
	for {
		if err != nil {
			return errorResult("%v", err), nil
		}
		switch res.Status {
		case interlude.RunCompleted:
			return completed(res), nil
		case interlude.RunFailed:
			return errorResult("thread %s failed: %s", res.ThreadID, res.Error), nil
		}
		forms, ok := elicitable(res.Interrupts)
		caps := req.ClientCapabilities()
		if !ok || caps == nil || caps.Elicitation == nil || !c.Has(auth.RoleApprove) || len(res.Interrupts) == 0 {
			return s.waiting(res), nil
		}
		if req.ProtocolVersion() >= "2026-07-28" {
			return s.inputRequired(res.ThreadID, c, forms), nil
		}
		// Earlier revisions: ask within the call, then run on.
		answers := map[string]interlude.Resolution{}
		for _, f := range forms {
			r, eerr := req.Session.Elicit(ctx, f.params)
			if eerr != nil {
				return s.waiting(res), nil
			}
			answers[f.q.ID] = resolutionOf(r, f.q.Wrapped)
		}
		res, err = s.host.Invoke(runContext(ctx, c), res.ThreadID, name, graph.Respond(answers))
	}
}

// resolutionOf maps an elicitation's result to an answer.
func resolutionOf(r *sdk.ElicitResult, wrapped bool) interlude.Resolution {
	switch r.Action {
	case "accept":
		if wrapped {
			return interlude.Resolve(r.Content["value"])
		}
		if r.Content == nil {
			return interlude.Resolve(map[string]any{})
		}
		return interlude.Resolve(r.Content)
	case "decline":
		return interlude.Reject(&interlude.RejectedError{Name: "Declined", Message: "The user declined to answer."})
	}
	return interlude.Cancel()
}

func completed(res *graph.Result[json.RawMessage]) *sdk.CallToolResult {
	text := string(res.Values)
	var agentValues struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(res.Values, &agentValues) == nil {
		for i := len(agentValues.Messages) - 1; i >= 0; i-- {
			m := agentValues.Messages[i]
			if m.Role != "assistant" {
				continue
			}
			var parts []string
			for _, b := range m.Content {
				if b.Type == "text" {
					parts = append(parts, b.Text)
				}
			}
			if len(parts) > 0 {
				text = strings.Join(parts, "\n")
			}
			break
		}
	}
	out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}
	if len(res.Values) > 0 {
		out.StructuredContent = res.Values
	}
	return out
}

// question is what a client is told about one waiting question.
type question struct {
	ThreadID       string          `json:"thread_id"`
	InterruptID    string          `json:"interrupt_id"`
	Message        string          `json:"message"`
	Reason         string          `json:"reason"`
	Value          json.RawMessage `json:"value,omitempty"`
	ResponseSchema json.RawMessage `json:"response_schema,omitempty"`
	Link           string          `json:"link"`
}

func (s *Server) questionOf(thread string, in interlude.Interruption) question {
	return question{ThreadID: thread, InterruptID: in.ID, Message: in.Message, Reason: in.Reason,
		Value: in.Value, ResponseSchema: in.Schema,
		Link: s.inbox + "#/q/" + url.PathEscape(thread) + "/" + url.PathEscape(in.ID)}
}

// waiting is the result of a call whose thread waits for answers it cannot
// elicit.
func (s *Server) waiting(res *graph.Result[json.RawMessage]) *sdk.CallToolResult {
	qs := make([]question, len(res.Interrupts))
	var b strings.Builder
	fmt.Fprintf(&b, "Thread %s is waiting for %d answer(s). Answer with the answer_question tool, or in the inbox:\n", res.ThreadID, len(qs))
	for i, in := range res.Interrupts {
		qs[i] = s.questionOf(res.ThreadID, in)
		fmt.Fprintf(&b, "- %s (interrupt_id %s): %s\n", in.Message, in.ID, qs[i].Link)
	}
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: b.String()}},
		StructuredContent: map[string]any{"thread_id": res.ThreadID, "status": "interrupted", "questions": qs},
	}
}

// form is a question with the elicitation that asks it.
type form struct {
	q      stateQuestion
	params *sdk.ElicitParams
}

// elicitable returns the questions as elicitations, or false when one of them
// has a response schema that MCP's flat forms cannot express.
func elicitable(ins []interlude.Interruption) ([]form, bool) {
	var out []form
	for _, in := range ins {
		schema, wrapped, ok := flatten(in.Schema)
		if !ok {
			return nil, false
		}
		out = append(out, form{q: stateQuestion{ID: in.ID, Wrapped: wrapped},
			params: &sdk.ElicitParams{Mode: "form", Message: in.Message, RequestedSchema: schema}})
	}
	return out, true
}

// The keywords a flat form's property may carry, by type (MCP's
// PrimitiveSchemaDefinition).
var (
	common     = []string{"type", "title", "description", "default"}
	primitives = map[string][]string{
		"string":  append(slices.Clone(common), "minLength", "maxLength", "format", "enum", "enumNames"),
		"number":  append(slices.Clone(common), "minimum", "maximum"),
		"integer": append(slices.Clone(common), "minimum", "maximum"),
		"boolean": common,
	}
	formats = []string{"email", "uri", "date", "date-time"}
)

// flatten returns a question's response schema in MCP's flat form: as it is
// when it is an object of primitive properties, or a one-field form ("value")
// when it describes one primitive value. Anything else it refuses.
func flatten(schema json.RawMessage) (json.RawMessage, bool, bool) {
	if len(schema) == 0 || bytes.Equal(bytes.TrimSpace(schema), []byte("true")) {
		return json.RawMessage(`{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}`), true, true
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil {
		return nil, false, false
	}
	if primitive(top) {
		s, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]json.RawMessage{"value": schema}, "required": []string{"value"}})
		return s, true, true
	}
	var typ string
	json.Unmarshal(top["type"], &typ)
	if typ != "object" {
		return nil, false, false
	}
	var props map[string]map[string]json.RawMessage
	if json.Unmarshal(top["properties"], &props) != nil {
		return nil, false, false
	}
	for k := range top {
		switch k {
		case "type", "properties", "required", "title", "description", "$schema":
		case "additionalProperties":
			if !bytes.Equal(top[k], []byte("false")) {
				return nil, false, false
			}
		default:
			return nil, false, false
		}
	}
	for _, p := range props {
		if !primitive(p) {
			return nil, false, false
		}
	}
	return schema, false, true
}

// primitive reports whether a property schema is one of MCP's primitive ones.
func primitive(p map[string]json.RawMessage) bool {
	var typ string
	if json.Unmarshal(p["type"], &typ) != nil {
		return false
	}
	allowed, ok := primitives[typ]
	if !ok {
		return false
	}
	for k := range p {
		if !slices.Contains(allowed, k) {
			return false
		}
	}
	if f, ok := p["format"]; ok {
		var s string
		if json.Unmarshal(f, &s) != nil || !slices.Contains(formats, s) {
			return false
		}
	}
	return true
}

// requestState is what a retry must bring back: the thread, its questions,
// and whose call it was.
type requestState struct {
	Thread    string          `json:"thread"`
	Caller    string          `json:"caller"`
	Questions []stateQuestion `json:"questions"`
}

type stateQuestion struct {
	ID      string `json:"id"`
	Wrapped bool   `json:"wrapped,omitempty"`
}

func (s *Server) inputRequired(thread string, c auth.Caller, forms []form) *sdk.CallToolResult {
	st := requestState{Thread: thread, Caller: c.Name}
	reqs := sdk.InputRequestMap{}
	for _, f := range forms {
		st.Questions = append(st.Questions, f.q)
		reqs[f.q.ID] = f.params
	}
	return &sdk.CallToolResult{InputRequests: reqs, RequestState: s.sign(st)}
}

func (s *Server) sign(st requestState) string {
	data, _ := json.Marshal(st)
	m := hmac.New(sha256.New, s.key)
	m.Write(data)
	return base64.RawURLEncoding.EncodeToString(data) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

var errBadState = errors.New("the requestState is not one this server signed (it may have restarted with another key); the questions still wait: list them with pending_questions and answer with answer_question")

func (s *Server) openState(text string, c auth.Caller) (requestState, error) {
	var st requestState
	body, sig, ok := strings.Cut(text, ".")
	data, err1 := base64.RawURLEncoding.DecodeString(body)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil {
		return st, errBadState
	}
	m := hmac.New(sha256.New, s.key)
	m.Write(data)
	if !hmac.Equal(mac, m.Sum(nil)) || json.Unmarshal(data, &st) != nil {
		return st, errBadState
	}
	if st.Caller != c.Name {
		return st, fmt.Errorf("this requestState was issued to token %q, not %q", st.Caller, c.Name)
	}
	return st, nil
}

// isPath reports whether u is a URL path starting with "/", without a scheme.
func isPath(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Scheme == "" && strings.HasPrefix(u, "/")
}

// pendingQuestions lists waiting questions.
func (s *Server) pendingQuestions(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var in struct {
		ThreadID string `json:"thread_id"`
		Graph    string `json:"graph"`
	}
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return errorResult("invalid arguments: %v", err), nil
		}
	}
	qs := []question{}
	if in.ThreadID != "" {
		snap, err := s.host.State(ctx, in.ThreadID)
		if err != nil {
			return errorResult("%v", err), nil
		}
		for _, q := range snap.Interrupts {
			qs = append(qs, s.questionOf(in.ThreadID, q))
		}
	} else {
		page, err := s.host.List(ctx, store.Query{Status: interlude.ThreadInterrupted, Graph: in.Graph, Limit: 100})
		if err != nil {
			return errorResult("%v", err), nil
		}
		for _, m := range page.Threads {
			for _, q := range m.Interrupts {
				qs = append(qs, s.questionOf(m.ThreadID, q))
			}
		}
	}
	data, _ := json.MarshalIndent(qs, "", "  ")
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(data)}},
		StructuredContent: map[string]any{"questions": qs}}, nil
}

// answerQuestion answers one question, with the API's checks.
func (s *Server) answerQuestion(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	c := callerOf(req.Extra)
	if !c.Has(auth.RoleApprove) {
		return errorResult("token %q may not answer questions: that needs the approve role", c.Name), nil
	}
	var in struct {
		ThreadID    string          `json:"thread_id"`
		InterruptID string          `json:"interrupt_id"`
		Action      string          `json:"action"`
		Response    json.RawMessage `json:"response"`
		Message     *string         `json:"message"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return errorResult("invalid arguments: %v", err), nil
	}
	id := in.InterruptID
	if id == "" {
		snap, err := s.host.State(ctx, in.ThreadID)
		if err != nil {
			return errorResult("%v", err), nil
		}
		if len(snap.Interrupts) != 1 {
			return errorResult("thread %s waits on %d questions; name the one you answer with interrupt_id", in.ThreadID, len(snap.Interrupts)), nil
		}
		id = snap.Interrupts[0].ID
	}
	var r interlude.Resolution
	switch in.Action {
	case "resume":
		if len(in.Response) == 0 {
			return errorResult("resume needs a response"), nil
		}
		r = interlude.Resolve(in.Response)
	case "reject":
		var err error
		if in.Message != nil {
			err = &interlude.RejectedError{Name: "Rejected", Message: *in.Message}
		}
		r = interlude.Reject(err)
	case "cancel":
		r = interlude.Cancel()
	default:
		return errorResult("action must be resume, reject or cancel"), nil
	}
	res, err := s.host.Invoke(runContext(ctx, c), in.ThreadID, "", graph.Respond(map[string]interlude.Resolution{id: r}))
	if err != nil {
		return errorResult("%v", err), nil
	}
	switch res.Status {
	case interlude.RunCompleted:
		return completed(res), nil
	case interlude.RunFailed:
		return errorResult("thread %s failed: %s", res.ThreadID, res.Error), nil
	}
	return s.waiting(res), nil
}
