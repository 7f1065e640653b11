package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/server/internal/jsonbody"
)

// decodeBody decodes body, one JSON object, strictly into v (package
// jsonbody), refusing it with the path of what is wrong.
func decodeBody(body []byte, v any) error { return fieldError(jsonbody.Decode(body, v, passedOn)) }

// decodeRaw decodes raw, the field at path, strictly into v.
func decodeRaw(path string, raw jsontext.Value, v any) error {
	return fieldError(jsonbody.DecodeValue(path, raw, v))
}

func fieldError(err error) error {
	if e, ok := errors.AsType[*jsonbody.Error](err); ok {
		return badRequest(e.Path, "%s", e.Message)
	}
	return err
}

// passedOn reports whether p points within an answer or input, whose repeated
// keys what receives it counts as violations.
func passedOn(p jsontext.Pointer) bool {
	var toks []string
	for tok := range p.Tokens() {
		toks = append(toks, tok)
	}
	switch {
	case len(toks) > 1 && (toks[0] == "input" || toks[0] == "messages" || toks[0] == "resume" || toks[0] == "response"):
		return true
	case len(toks) > 3 && toks[0] == "responses" && toks[2] == "response":
		return true
	}
	return false
}

// given reports whether a raw field is present and not null.
func given(raw jsontext.Value) bool { return len(raw) > 0 && raw.Kind() != 'n' }

// granularity is how much of the state a run answer carries.
type granularity int

const (
	partial granularity = iota
	low
	full
)

func parseGranularity(g string) (granularity, error) {
	switch g {
	case "", "partial":
		return partial, nil
	case "low":
		return low, nil
	case "full":
		return full, nil
	}
	return 0, badRequest("response_granularity", "response_granularity %q is not one of low, partial, full", g)
}

// checkID refuses an id given at path that cannot name a thread or an interrupt.
func checkID(path, s string) error {
	if s != "" && !host.ValidID(s) {
		return badRequest(path, "%s %q is not a valid id: use 1 to 256 letters, digits or -_.:@~+= (not . or ..)", path, s)
	}
	return nil
}

// invokeRequest is a decoded body of /v1/graph/invoke and /v1/graph/stream.
type invokeRequest struct {
	graph       string
	threadID    string
	granularity granularity
	kind        commandKind
	input       json.RawMessage // for cmdInput: the input object
	inputPath   string          // "input" or "messages"
	answers     map[string]interlude.Resolution
	fields      map[string]json.RawMessage // the input's fields, once decoded
}

// inputFields decodes the input object's fields, once.
func (req *invokeRequest) inputFields() (map[string]json.RawMessage, error) {
	if req.fields == nil {
		if err := decodeRaw(req.inputPath, jsontext.Value(req.input), &req.fields); err != nil {
			return nil, err
		}
	}
	return req.fields, nil
}

type commandKind int

const (
	cmdContinue commandKind = iota
	cmdInput
	cmdAnswer
)

func (r *invokeRequest) command() graph.Command {
	switch r.kind {
	case cmdInput:
		return graph.Input(r.input)
	case cmdAnswer:
		return graph.Respond(r.answers)
	}
	return graph.Continue()
}

// invokeBody is the JSON body of /v1/graph/invoke and /v1/graph/stream.
type invokeBody struct {
	Graph       string         `json:"graph"`
	Input       jsontext.Value `json:"input"`
	Messages    jsontext.Value `json:"messages"`
	Resume      jsontext.Value `json:"resume"`
	Responses   jsontext.Value `json:"responses"`
	Config      *runConfig     `json:"config"`
	Granularity string         `json:"response_granularity"`
}

// runConfig is an invoke body's config.
type runConfig struct {
	ThreadID string `json:"thread_id"`
}

// responseBody is one answer of a responses array.
type responseBody struct {
	InterruptID string         `json:"interrupt_id"`
	Status      string         `json:"status"`
	Response    jsontext.Value `json:"response"`
	Error       jsontext.Value `json:"error"`
}

// rejectionBody is the error of a rejection.
type rejectionBody struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

func parseInvoke(body []byte) (*invokeRequest, error) {
	var b invokeBody
	if err := decodeBody(body, &b); err != nil {
		return nil, err
	}
	req := &invokeRequest{graph: b.Graph}
	var err error
	if req.granularity, err = parseGranularity(b.Granularity); err != nil {
		return nil, err
	}
	if b.Config != nil {
		if err := checkID("config.thread_id", b.Config.ThreadID); err != nil {
			return nil, err
		}
		req.threadID = b.Config.ThreadID
	}
	var named []string
	for _, f := range []struct {
		name string
		raw  jsontext.Value
	}{{"input", b.Input}, {"messages", b.Messages}, {"resume", b.Resume}, {"responses", b.Responses}} {
		// resume is the one field where null means something (cancel).
		if given(f.raw) || (f.name == "resume" && len(f.raw) > 0) {
			named = append(named, f.name)
		}
	}
	if len(named) > 1 {
		return nil, badRequest(named[1], "give exactly one of input (or messages), resume and responses; this body has %v", named)
	}
	if len(named) == 0 {
		req.kind = cmdContinue
		return req, nil
	}
	switch named[0] {
	case "input":
		if b.Input.Kind() != '{' {
			return nil, badRequest("input", "input must be a JSON object of state fields")
		}
		req.kind, req.input, req.inputPath = cmdInput, json.RawMessage(b.Input), "input"
	case "messages":
		if k := b.Messages.Kind(); k != '[' {
			return nil, badRequest("messages", "messages must be an array: found a JSON %s", jsonbody.KindName(k))
		}
		req.kind, req.inputPath = cmdInput, "messages"
		req.input = append(append([]byte(`{"messages":`), b.Messages...), '}')
	case "resume":
		req.kind, req.answers = cmdAnswer, map[string]interlude.Resolution{"": resolveRaw(b.Resume)}
	case "responses":
		if req.answers, err = parseResponses(b.Responses); err != nil {
			return nil, err
		}
		req.kind = cmdAnswer
	}
	return req, nil
}

// resolveRaw answers with raw JSON; null cancels.
func resolveRaw(raw jsontext.Value) interlude.Resolution {
	if raw.Kind() == 'n' {
		return interlude.Cancel()
	}
	return interlude.Resolve(json.RawMessage(raw))
}

// parseResponses reads a responses array: one answer per interrupt.
func parseResponses(raw jsontext.Value) (map[string]interlude.Resolution, error) {
	var xs []*responseBody
	if err := decodeRaw("responses", raw, &xs); err != nil {
		return nil, err
	}
	if len(xs) == 0 {
		return nil, badRequest("responses", "responses is empty; answer at least one interrupt")
	}
	out := make(map[string]interlude.Resolution, len(xs))
	for i, x := range xs {
		p := jsonbody.Index("responses", i)
		at := func(field string) string { return jsonbody.Join(p, field) }
		// refuse names the field at the start of its message.
		refuse := func(field, format string, args ...any) error {
			return badRequest(at(field), "%s "+format, append([]any{at(field)}, args...)...)
		}
		if x == nil {
			return nil, badRequest(p, "%s must be a JSON object, not null", p)
		}
		if err := checkID(at("interrupt_id"), x.InterruptID); err != nil {
			return nil, err
		}
		if x.InterruptID == "" {
			return nil, refuse("interrupt_id", "is required")
		}
		if _, dup := out[x.InterruptID]; dup {
			return nil, badRequest(at("interrupt_id"), "interrupt %s is answered twice", x.InterruptID)
		}
		var res interlude.Resolution
		switch status := interlude.ResolutionStatus(x.Status); {
		case status == interlude.Resolved && len(x.Response) == 0:
			return nil, refuse("response", "is required for status resolved")
		case status == interlude.Resolved && len(x.Error) > 0:
			return nil, refuse("error", "is only for status rejected")
		case status == interlude.Resolved:
			res = interlude.Resolve(json.RawMessage(x.Response))
		case status == interlude.Rejected && len(x.Response) > 0:
			return nil, refuse("response", "is only for status resolved")
		case status == interlude.Rejected:
			var err error
			if res, err = parseRejection(at("error"), x.Error); err != nil {
				return nil, err
			}
		case status == interlude.Cancelled && len(x.Response) > 0:
			return nil, refuse("response", "is not allowed for status cancelled")
		case status == interlude.Cancelled && len(x.Error) > 0:
			return nil, refuse("error", "is not allowed for status cancelled")
		case status == interlude.Cancelled:
			res = interlude.Cancel()
		case status == "":
			return nil, refuse("status", "is required: resolved, rejected or cancelled")
		default:
			return nil, refuse("status", "%q is not one of resolved, rejected, cancelled", x.Status)
		}
		out[x.InterruptID] = res
	}
	return out, nil
}

// parseRejection reads the optional error object of a rejection, at path.
func parseRejection(path string, raw jsontext.Value) (interlude.Resolution, error) {
	if !given(raw) {
		return interlude.Reject(nil), nil
	}
	var e rejectionBody
	if err := decodeRaw(path, raw, &e); err != nil {
		return interlude.Resolution{}, err
	}
	return interlude.Reject(&interlude.RejectedError{Name: e.Name, Message: e.Message}), nil
}

// answerRequest is a decoded body of a thread's /resume, /reject or /cancel.
type answerRequest struct {
	granularity granularity
	answers     map[string]interlude.Resolution
}

// The JSON bodies of a thread's /resume, /reject and /cancel.
type (
	resumeBody struct {
		InterruptID string         `json:"interrupt_id"`
		Response    jsontext.Value `json:"response"`
		Responses   jsontext.Value `json:"responses"`
		Granularity string         `json:"response_granularity"`
	}
	rejectBody struct {
		InterruptID string         `json:"interrupt_id"`
		Error       jsontext.Value `json:"error"`
		Granularity string         `json:"response_granularity"`
	}
	cancelBody struct {
		InterruptID string `json:"interrupt_id"`
		Granularity string `json:"response_granularity"`
	}
)

func parseAnswer(body []byte, action string) (*answerRequest, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	var (
		id, gran string
		answer   func() (map[string]interlude.Resolution, error)
	)
	switch action {
	case "resume":
		var b resumeBody
		if err := decodeBody(body, &b); err != nil {
			return nil, err
		}
		id, gran = b.InterruptID, b.Granularity
		answer = func() (map[string]interlude.Resolution, error) {
			switch {
			case given(b.Responses):
				if len(b.Response) > 0 || id != "" {
					return nil, badRequest("responses", "give either interrupt_id and response, or responses")
				}
				return parseResponses(b.Responses)
			case len(b.Response) > 0:
				return map[string]interlude.Resolution{id: resolveRaw(b.Response)}, nil
			}
			return nil, badRequest("response", "response is required (null cancels), or give responses")
		}
	case "reject":
		var b rejectBody
		if err := decodeBody(body, &b); err != nil {
			return nil, err
		}
		id, gran = b.InterruptID, b.Granularity
		answer = func() (map[string]interlude.Resolution, error) {
			res, err := parseRejection("error", b.Error)
			return map[string]interlude.Resolution{id: res}, err
		}
	default:
		var b cancelBody
		if err := decodeBody(body, &b); err != nil {
			return nil, err
		}
		id, gran = b.InterruptID, b.Granularity
		answer = func() (map[string]interlude.Resolution, error) {
			return map[string]interlude.Resolution{id: interlude.Cancel()}, nil
		}
	}
	req := &answerRequest{}
	var err error
	if req.granularity, err = parseGranularity(gran); err != nil {
		return nil, err
	}
	if err := checkID("interrupt_id", id); err != nil {
		return nil, err
	}
	if req.answers, err = answer(); err != nil {
		return nil, err
	}
	return req, nil
}

// readBody reads the request body within the size limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := jsonbody.ReadAll(w, r, s.bodyLimit)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, badRequest("", "the body could not be read: %v", err)
	}
	s.bodyRead(w)
	return body, nil
}
