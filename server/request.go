package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// Request bodies are decoded into typed structs, strictly: field names match
// exactly, unknown and repeated fields are refused, and a refusal names the
// path of the field in the body ("responses[0].eror") and the JSON types in
// plain words.

// strict are the decoding options of request bodies.
var strict = jsonv2.JoinOptions(jsonv2.RejectUnknownMembers(true), jsontext.AllowDuplicateNames(false))

// decodeBody decodes body, which must be one JSON object, into v. A key given
// twice is refused, except within the values a request passes on (an answer,
// input): those go on to be checked by what receives them, an answer by its
// question, which counts each repeated key as a violation.
func decodeBody(body []byte, v any) error {
	if t := bytes.TrimSpace(body); string(t) == "null" {
		return badRequest("", "the body must be a JSON object, not null")
	}
	err := decodeOne(body, v, strict)
	if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok && errors.Is(se.Err, jsontext.ErrDuplicateName) && passedOn(se.JSONPointer) {
		err = decodeOne(body, v, lenient)
	}
	if errors.Is(err, errTrailing) {
		return badRequest("", "the body has data after its JSON object")
	}
	if err != nil {
		return decodeError("", err)
	}
	return nil
}

var errTrailing = errors.New("data after the JSON object")

// lenient are strict's options with duplicate keys allowed.
var lenient = jsonv2.JoinOptions(strict, jsontext.AllowDuplicateNames(true))

// decodeOne decodes body, one JSON value, into v with opts.
func decodeOne(body []byte, v any, opts jsonv2.Options) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body), opts)
	if err := jsonv2.UnmarshalDecode(dec, v, opts); err != nil {
		return err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return errTrailing
	}
	return nil
}

// passedOn reports whether p points within a value the request passes on
// rather than one of its own fields: an answer or input.
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

// decodeRaw decodes raw, the field at path, into v, strictly.
func decodeRaw(path string, raw jsontext.Value, v any) error {
	if err := jsonv2.Unmarshal(raw, v, strict); err != nil {
		return decodeError(path, err)
	}
	return nil
}

// decodeError words a decoding error of the value at base in the body's terms:
// the field's path and the JSON types, without Go's.
func decodeError(base string, err error) error {
	if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		path := fieldPath(base, se.JSONPointer)
		if errors.Is(se.Err, jsontext.ErrDuplicateName) {
			name := se.JSONPointer.LastToken()
			return badRequest(path, "field %q is given twice in %s; give each field once", name, what(fieldPath(base, se.JSONPointer.Parent())))
		}
		if errors.Is(se.Err, io.ErrUnexpectedEOF) {
			return badRequest(base, "%s must be a JSON object: the JSON is empty or cut short", what(base))
		}
		return badRequest(base, "%s must be a JSON object: invalid JSON at byte %d: %v", what(base), se.ByteOffset, se.Err)
	}
	se, ok := errors.AsType[*jsonv2.SemanticError](err)
	if !ok {
		return badRequest(base, "%s could not be read: %v", what(base), err)
	}
	path := fieldPath(base, se.JSONPointer)
	if errors.Is(se.Err, jsonv2.ErrUnknownName) {
		return badRequest(path, "unknown field %q at %s; known fields: %v", se.JSONPointer.LastToken(), path, fieldNames(se.GoType))
	}
	want := "a JSON object"
	if se.GoType != nil {
		switch se.GoType.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Slice:
			want = "an array"
		}
	}
	return badRequest(path, "%s must be %s: found a JSON %s", what(path), want, kindName(se.JSONKind))
}

// kindName names a JSON kind in words.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '[':
		return "array"
	}
	return "object"
}

// fieldPath writes a JSON pointer below base as a path: responses/0/error
// becomes responses[0].error.
func fieldPath(base string, p jsontext.Pointer) string {
	path := base
	for tok := range p.Tokens() {
		if n, err := strconv.Atoi(tok); err == nil && n >= 0 {
			path = index(path, n)
		} else if tok != "" {
			path = join(path, tok)
		}
	}
	return path
}

// fieldNames lists the JSON names of a request struct's fields.
func fieldNames(t reflect.Type) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// given reports whether a raw field is present and not null.
func given(raw jsontext.Value) bool { return len(raw) > 0 && raw.Kind() != 'n' }

// what names the field at path in messages ("the body" for the whole body).
func what(path string) string {
	if path == "" {
		return "the body"
	}
	return path
}

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

// checkID refuses an id given at path that cannot name a thread or an interrupt.
func checkID(path, s string) error {
	if s != "" && !validID(s) {
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
			return nil, badRequest("messages", "messages must be an array: found a JSON %s", kindName(k))
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
		p := index("responses", i)
		if x == nil {
			return nil, badRequest(p, "%s must be a JSON object, not null", p)
		}
		if err := checkID(join(p, "interrupt_id"), x.InterruptID); err != nil {
			return nil, err
		}
		if x.InterruptID == "" {
			return nil, badRequest(join(p, "interrupt_id"), "%s is required", join(p, "interrupt_id"))
		}
		if _, dup := out[x.InterruptID]; dup {
			return nil, badRequest(join(p, "interrupt_id"), "interrupt %s is answered twice", x.InterruptID)
		}
		var res interlude.Resolution
		switch interlude.ResolutionStatus(x.Status) {
		case interlude.Resolved:
			if len(x.Response) == 0 {
				return nil, badRequest(join(p, "response"), "%s is required for status resolved", join(p, "response"))
			}
			if len(x.Error) > 0 {
				return nil, badRequest(join(p, "error"), "%s is only for status rejected", join(p, "error"))
			}
			res = interlude.Resolve(json.RawMessage(x.Response))
		case interlude.Rejected:
			if len(x.Response) > 0 {
				return nil, badRequest(join(p, "response"), "%s is only for status resolved", join(p, "response"))
			}
			var err error
			if res, err = parseRejection(join(p, "error"), x.Error); err != nil {
				return nil, err
			}
		case interlude.Cancelled:
			for k, raw := range map[string]jsontext.Value{"response": x.Response, "error": x.Error} {
				if len(raw) > 0 {
					return nil, badRequest(join(p, k), "%s is not allowed for status cancelled", join(p, k))
				}
			}
			res = interlude.Cancel()
		case "":
			return nil, badRequest(join(p, "status"), "%s is required: resolved, rejected or cancelled", join(p, "status"))
		default:
			return nil, badRequest(join(p, "status"), "%s %q is not one of resolved, rejected, cancelled", join(p, "status"), x.Status)
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
