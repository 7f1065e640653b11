package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// Request bodies are decoded by hand, one object level at a time, so that unknown
// fields are refused with their full path ("responses[0].eror") and field names
// match exactly (encoding/json alone matches them case-insensitively and does not
// name the path of an unknown field).

// object is one decoded JSON object of a request body.
type object struct {
	path string
	m    map[string]json.RawMessage
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// what names the field at path in messages ("the body" for the whole body).
func what(path string) string {
	if path == "" {
		return "the body"
	}
	return path
}

// parseObject decodes raw as a JSON object whose keys are all among allowed.
func parseObject(path string, raw []byte, allowed ...string) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var m map[string]json.RawMessage
	if err := dec.Decode(&m); err != nil {
		return nil, badRequest(path, "%s must be a JSON object: %v", what(path), jsonProblem(err))
	}
	if m == nil {
		return nil, badRequest(path, "%s must be a JSON object, not null", what(path))
	}
	if path == "" {
		if _, err := dec.Token(); err != io.EOF {
			return nil, badRequest("", "the body has data after its JSON object")
		}
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, badRequest(join(path, unknown[0]), "unknown field %q at %s; known fields: %v", unknown[0], join(path, unknown[0]), allowed)
	}
	return &object{path: path, m: m}, nil
}

// jsonProblem words a decoding error without Go type names.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "invalid JSON at byte " + strconv.FormatInt(se.Offset, 10) + ": " + se.Error()
	case errors.As(err, &te):
		return "found a JSON " + te.Value
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON is empty or cut short"
	}
	return err.Error()
}

// has reports whether key is present and not null.
func (o *object) has(key string) bool {
	raw, ok := o.m[key]
	return ok && !isNull(raw)
}

// present reports whether key is present, even as null.
func (o *object) present(key string) bool {
	_, ok := o.m[key]
	return ok
}

// str returns the string at key; absent or null gives "".
func (o *object) str(key string) (string, error) {
	raw, ok := o.m[key]
	if !ok || isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", badRequest(join(o.path, key), "%s must be a string: %s", join(o.path, key), jsonProblem(err))
	}
	return s, nil
}

// obj returns the object at key, or nil when absent or null.
func (o *object) obj(key string, allowed ...string) (*object, error) {
	if !o.has(key) {
		return nil, nil
	}
	return parseObject(join(o.path, key), o.m[key], allowed...)
}

// array returns the elements of the array at key, or nil when absent or null.
func (o *object) array(key string) ([]json.RawMessage, error) {
	if !o.has(key) {
		return nil, nil
	}
	var xs []json.RawMessage
	if err := json.Unmarshal(o.m[key], &xs); err != nil {
		return nil, badRequest(join(o.path, key), "%s must be an array: %s", join(o.path, key), jsonProblem(err))
	}
	return xs, nil
}

// granularity is how much of the state a run answer carries.
type granularity int

const (
	partial granularity = iota
	low
	full
)

func (o *object) granularity() (granularity, error) {
	g, err := o.str("response_granularity")
	if err != nil {
		return 0, err
	}
	switch g {
	case "", "partial":
		return partial, nil
	case "low":
		return low, nil
	case "full":
		return full, nil
	}
	return 0, badRequest(join(o.path, "response_granularity"), "response_granularity %q is not one of low, partial, full", g)
}

// validID reports whether s can name a thread or an interrupt: 1 to 256 bytes of
// letters, digits and -_.:@~+=, other than "." and "..", which a URL path
// cannot carry as a segment.
func validID(s string) bool {
	if len(s) == 0 || len(s) > 256 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '@', c == '~', c == '+', c == '=':
		default:
			return false
		}
	}
	return true
}

func (o *object) id(key string) (string, error) {
	s, err := o.str(key)
	if err != nil || s == "" {
		return s, err
	}
	if !validID(s) {
		return "", badRequest(join(o.path, key), "%s %q is not a valid id: use 1 to 256 letters, digits or -_.:@~+= (not . or ..)", join(o.path, key), s)
	}
	return s, nil
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
		if err := json.Unmarshal(req.input, &req.fields); err != nil {
			return nil, badRequest(req.inputPath, "input must be a JSON object of state fields: %s", jsonProblem(err))
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

func parseInvoke(body []byte) (*invokeRequest, error) {
	o, err := parseObject("", body, "graph", "input", "messages", "resume", "responses", "config", "response_granularity")
	if err != nil {
		return nil, err
	}
	req := &invokeRequest{}
	if req.graph, err = o.str("graph"); err != nil {
		return nil, err
	}
	if req.granularity, err = o.granularity(); err != nil {
		return nil, err
	}
	cfg, err := o.obj("config", "thread_id")
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		if req.threadID, err = cfg.id("thread_id"); err != nil {
			return nil, err
		}
	}
	var given []string
	for _, k := range []string{"input", "messages", "resume", "responses"} {
		// resume is the one field where null means something (cancel).
		if o.has(k) || (k == "resume" && o.present(k)) {
			given = append(given, k)
		}
	}
	if len(given) > 1 {
		return nil, badRequest(given[1], "give exactly one of input (or messages), resume and responses; this body has %v", given)
	}
	if len(given) == 0 {
		req.kind = cmdContinue
		return req, nil
	}
	switch k := given[0]; k {
	case "input":
		raw := bytes.TrimSpace(o.m[k])
		if raw[0] != '{' {
			return nil, badRequest("input", "input must be a JSON object of state fields")
		}
		req.kind, req.input, req.inputPath = cmdInput, raw, "input"
	case "messages":
		if _, err := o.array(k); err != nil {
			return nil, err
		}
		req.kind, req.inputPath = cmdInput, "messages"
		req.input = append(append([]byte(`{"messages":`), bytes.TrimSpace(o.m[k])...), '}')
	case "resume":
		req.kind, req.answers = cmdAnswer, map[string]interlude.Resolution{"": resolveRaw(o.m[k])}
	case "responses":
		xs, err := o.array(k)
		if err != nil {
			return nil, err
		}
		if req.answers, err = parseResponses("responses", xs); err != nil {
			return nil, err
		}
		req.kind = cmdAnswer
	}
	return req, nil
}

// resolveRaw answers with raw JSON; null cancels.
func resolveRaw(raw json.RawMessage) interlude.Resolution {
	if isNull(raw) {
		return interlude.Cancel()
	}
	return interlude.Resolve(json.RawMessage(bytes.TrimSpace(raw)))
}

func parseResponses(path string, xs []json.RawMessage) (map[string]interlude.Resolution, error) {
	if len(xs) == 0 {
		return nil, badRequest(path, "%s is empty; answer at least one interrupt", path)
	}
	out := make(map[string]interlude.Resolution, len(xs))
	for i, raw := range xs {
		p := index(path, i)
		o, err := parseObject(p, raw, "interrupt_id", "status", "response", "error")
		if err != nil {
			return nil, err
		}
		id, err := o.id("interrupt_id")
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, badRequest(join(p, "interrupt_id"), "%s is required", join(p, "interrupt_id"))
		}
		if _, dup := out[id]; dup {
			return nil, badRequest(join(p, "interrupt_id"), "interrupt %s is answered twice", id)
		}
		status, err := o.str("status")
		if err != nil {
			return nil, err
		}
		var res interlude.Resolution
		switch interlude.ResolutionStatus(status) {
		case interlude.Resolved:
			if !o.present("response") {
				return nil, badRequest(join(p, "response"), "%s is required for status resolved", join(p, "response"))
			}
			if o.present("error") {
				return nil, badRequest(join(p, "error"), "%s is only for status rejected", join(p, "error"))
			}
			res = interlude.Resolve(json.RawMessage(bytes.TrimSpace(o.m["response"])))
		case interlude.Rejected:
			if o.present("response") {
				return nil, badRequest(join(p, "response"), "%s is only for status resolved", join(p, "response"))
			}
			if res, err = parseRejection(o); err != nil {
				return nil, err
			}
		case interlude.Cancelled:
			for _, k := range []string{"response", "error"} {
				if o.present(k) {
					return nil, badRequest(join(p, k), "%s is not allowed for status cancelled", join(p, k))
				}
			}
			res = interlude.Cancel()
		case "":
			return nil, badRequest(join(p, "status"), "%s is required: resolved, rejected or cancelled", join(p, "status"))
		default:
			return nil, badRequest(join(p, "status"), "%s %q is not one of resolved, rejected, cancelled", join(p, "status"), status)
		}
		out[id] = res
	}
	return out, nil
}

// parseRejection reads the optional "error" object of a rejection.
func parseRejection(o *object) (interlude.Resolution, error) {
	e, err := o.obj("error", "name", "message")
	if err != nil || e == nil {
		return interlude.Reject(nil), err
	}
	name, err := e.str("name")
	if err != nil {
		return interlude.Resolution{}, err
	}
	msg, err := e.str("message")
	if err != nil {
		return interlude.Resolution{}, err
	}
	return interlude.Reject(&interlude.RejectedError{Name: name, Message: msg}), nil
}

// answerRequest is a decoded body of a thread's /resume, /reject or /cancel.
type answerRequest struct {
	granularity granularity
	answers     map[string]interlude.Resolution
}

func parseAnswer(body []byte, action string) (*answerRequest, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	var allowed []string
	switch action {
	case "resume":
		allowed = []string{"interrupt_id", "response", "responses", "response_granularity"}
	case "reject":
		allowed = []string{"interrupt_id", "error", "response_granularity"}
	default:
		allowed = []string{"interrupt_id", "response_granularity"}
	}
	o, err := parseObject("", body, allowed...)
	if err != nil {
		return nil, err
	}
	req := &answerRequest{}
	if req.granularity, err = o.granularity(); err != nil {
		return nil, err
	}
	id, err := o.id("interrupt_id")
	if err != nil {
		return nil, err
	}
	switch action {
	case "resume":
		switch {
		case o.has("responses"):
			if o.present("response") || id != "" {
				return nil, badRequest("responses", "give either interrupt_id and response, or responses")
			}
			xs, err := o.array("responses")
			if err != nil {
				return nil, err
			}
			req.answers, err = parseResponses("responses", xs)
			return req, err
		case o.present("response"):
			req.answers = map[string]interlude.Resolution{id: resolveRaw(o.m["response"])}
		default:
			return nil, badRequest("response", "response is required (null cancels), or give responses")
		}
	case "reject":
		res, err := parseRejection(o)
		if err != nil {
			return nil, err
		}
		req.answers = map[string]interlude.Resolution{id: res}
	default:
		req.answers = map[string]interlude.Resolution{id: interlude.Cancel()}
	}
	return req, nil
}

// readBody reads the request body within the size limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.bodyLimit))
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
