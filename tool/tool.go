// Package tool defines the tools an agent's model can call: a name, a description,
// a JSON Schema for the arguments, and a function. Func builds a typed tool whose
// schema comes from its Go input type.
//
// Run is how the agent calls a tool: arguments are validated against the schema
// first, and a validation failure, a returned error or a panic becomes an error
// result the model sees, never a crash. A tool may call interlude.Interrupt or
// interlude.Ask to ask a person something; the pause passes through Run untouched.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/internal/jsonerr"
	"github.com/interludehq/interlude/internal/schema"
	"github.com/interludehq/interlude/model"
)

// Tool is something a model can call.
type Tool interface {
	// Name is how the model calls it; unique among an agent's tools.
	Name() string
	// Description tells the model what it does and when to use it.
	Description() string
	// InputSchema is the JSON Schema (2020-12) of the arguments object.
	InputSchema() json.RawMessage
	// Call runs the tool on arguments that already passed the schema.
	Call(ctx context.Context, args json.RawMessage) (Result, error)
}

// Result is what a tool call returns to the model.
type Result struct {
	// Content is the text the model sees.
	Content string `json:"content"`
	// IsError marks a failed call.
	IsError bool `json:"is_error,omitempty"`
	// Blocks, when set, are the result's content as the model sees it in place
	// of Content alone: text and images, as a tool that returns pictures or
	// several parts gives them. Content stays the result's text for readers
	// that show text only.
	Blocks []model.Block `json:"blocks,omitempty"`
}

// Errorf returns an error result.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Func returns a tool whose arguments decode into In and whose result Out is shown
// to the model (a string as is, anything else as JSON). The input schema is derived
// from In: its fields, json tags and jsonschema tags (for example
// `jsonschema:"description=The order id,minimum=0"`). In must be a struct type.
func Func[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) Tool {
	t := &funcTool[In, Out]{name: name, description: description, fn: fn,
		args: flatArgsOf(reflect.TypeFor[In]()), plainOut: plainValue(reflect.TypeFor[Out]())}
	s, err := schema.For(reflect.TypeFor[In]())
	if err != nil {
		t.err = fmt.Errorf("tool %q: input schema: %w", name, err)
		s = json.RawMessage(`{"type":"object"}`)
	}
	t.schema = s
	return t
}

type funcTool[In, Out any] struct {
	name, description string
	schema            json.RawMessage
	err               error
	fn                func(ctx context.Context, in In) (Out, error)
	args              *flatArgs                     // decodes In directly, or nil
	plainOut          bool                          // Out is a value jsonappend.Value encodes
	compiled          atomic.Pointer[schema.Schema] // schema, once compiled
}

// compiledSchema returns the tool's input schema compiled, compiling it on
// first use: its schema never changes.
func (t *funcTool[In, Out]) compiledSchema() (*schema.Schema, error) {
	if s := t.compiled.Load(); s != nil {
		return s, nil
	}
	s, err := schema.Compile(t.schema)
	if err != nil {
		return nil, err
	}
	t.compiled.Store(s)
	return s, nil
}

// precompiled is a tool that keeps its input schema compiled, as Func's tools
// do, sparing each validation the look-up of the schema by its text.
type precompiled interface {
	compiledSchema() (*schema.Schema, error)
}

func (t *funcTool[In, Out]) Name() string                 { return t.name }
func (t *funcTool[In, Out]) Description() string          { return t.description }
func (t *funcTool[In, Out]) InputSchema() json.RawMessage { return t.schema }

func (t *funcTool[In, Out]) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	if t.err != nil {
		return Result{}, t.err
	}
	var in In
	if t.args == nil || !t.args.decode(args, unsafe.Pointer(&in)) {
		var fresh In // only this one escapes, when the fast decoding could not
		if err := json.Unmarshal(args, &fresh); err != nil {
			return Errorf("the arguments do not fit %s: %s", t.name, jsonerr.Explain(err)), nil
		}
		in = fresh
	}
	out, err := t.fn(ctx, in)
	if err != nil {
		return Result{}, err
	}
	if s, ok := any(out).(string); ok {
		return Result{Content: s}, nil
	}
	if t.plainOut {
		if data, ok := jsonappend.Value(make([]byte, 0, 64), any(out)); ok {
			// data is never written again: the content shares its bytes.
			return Result{Content: unsafe.String(unsafe.SliceData(data), len(data))}, nil
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return Result{}, fmt.Errorf("the result cannot be encoded as JSON: %w", err)
	}
	return Result{Content: string(data)}, nil
}

// plainValue reports whether values of type t are ones jsonappend.Value
// encodes (it may still refuse one, such as a number that is not finite).
func plainValue(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[map[string]any](), reflect.TypeFor[[]any](), reflect.TypeFor[[]string](),
		reflect.TypeFor[bool](), reflect.TypeFor[int](), reflect.TypeFor[int64](), reflect.TypeFor[int32](),
		reflect.TypeFor[uint](), reflect.TypeFor[uint64](), reflect.TypeFor[float64](), reflect.TypeFor[float32]():
		return true
	}
	return false
}

// Violation is one way arguments fail a tool's schema.
type Violation = interlude.Violation

// Validate checks args against the tool's input schema and returns the first 20
// violations, ordered by path, or nil when they are valid.
func Validate(t Tool, args json.RawMessage) ([]Violation, error) {
	var s *schema.Schema
	var err error
	if p, ok := t.(precompiled); ok {
		s, err = p.compiledSchema()
	} else {
		s, err = schema.Compile(t.InputSchema())
	}
	if err != nil {
		return nil, fmt.Errorf("tool %q has an unusable input schema: %w", t.Name(), err)
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	vs, _ := s.Validate(args)
	out := make([]Violation, len(vs))
	for i, v := range vs {
		out[i] = Violation(v)
	}
	return out, nil
}

// Run validates args and calls the tool. Invalid arguments, a returned error and a
// panic all become an error Result for the model. The only error Run returns is a
// pause (matching interlude.ErrPaused), which the caller must pass up.
func Run(ctx context.Context, t Tool, args json.RawMessage) (Result, error) {
	vs, err := Validate(t, args)
	if err != nil {
		return Errorf("%v", err), nil
	}
	return RunChecked(ctx, t, args, vs)
}

// RunChecked is Run for a caller that has just validated args itself: vs is
// what Validate(t, args) returned. Invalid arguments (vs not empty) become an
// error Result as with Run, and the tool is not called; valid ones are not
// validated again.
func RunChecked(ctx context.Context, t Tool, args json.RawMessage, vs []Violation) (res Result, err error) {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if len(vs) > 0 {
		return Errorf("invalid arguments for %s: %s", t.Name(), describe(vs)), nil
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = Errorf("%s failed: panic: %v", t.Name(), p), nil
		}
	}()
	res, err = t.Call(ctx, args)
	if err != nil {
		if errors.Is(err, interlude.ErrPaused) {
			return Result{}, err
		}
		return Errorf("%s failed: %v", t.Name(), err), nil
	}
	return res, nil
}

// describe renders violations on one line, for the model.
func describe(vs []Violation) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		p := v.Path
		if p == "" {
			p = "(arguments)"
		}
		parts[i] = p + ": " + v.Message
	}
	return strings.Join(parts, "; ")
}
