// Package termform asks an interrupt's question in a terminal, as a form built from
// the question's response schema, and returns the answer as an
// interlude.Resolution.
//
// The form follows the schema (JSON Schema 2020-12):
//
//   - a boolean is a yes/no question;
//   - an enum is a numbered choice (answer with the number or the value);
//   - an object is one field per property, in the schema's order: strings, numbers
//     and integers (with their limits shown), booleans, enums, lists, and nested
//     objects asked as indented groups. Required fields are marked with *, defaults
//     are shown in brackets and taken with Enter, descriptions are printed as help;
//   - anything the form cannot shape (anyOf, free-form objects, a question with no
//     schema) is asked as one line of JSON.
//
// Every field is checked against the schema as soon as it is given and asked again
// when it is invalid; the whole answer is checked once more at the end.
//
// An agent's tool approval (reason tool_approval, with an action enum in its
// schema) is asked as a menu instead: approve, edit (each argument asked from the
// tool's input schema, pre-filled with the model's arguments), reject with a
// reason, respond in the tool's place, or cancel.
//
// At any prompt, "?" shows help, "!cancel" withdraws the question and
// "!reject REASON" rejects it. A line starting with a backslash is taken
// literally without it ("\?" is the text "?"). When the input ends (Ctrl-D) before
// the answer is complete, Ask returns an error matching io.EOF and nothing is
// answered: the question stays pending.
package termform

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/schema"
	"github.com/interludehq/interlude/internal/termtext"
	"github.com/interludehq/interlude/internal/vocab"
)

// Asker asks questions on a terminal: it reads answers line by line from an
// io.Reader and writes prompts to an io.Writer. Use one Asker per input stream,
// since it buffers what it reads. It is not safe for concurrent use.
type Asker struct {
	in  *bufio.Reader
	out io.Writer
}

// New returns an Asker reading answers from in and writing prompts to out.
func New(in io.Reader, out io.Writer) *Asker {
	return &Asker{in: bufio.NewReader(in), out: out}
}

// errAbort ends a form early because the person chose to cancel or reject the
// question from a prompt.
type errAbort struct{ res interlude.Resolution }

func (e *errAbort) Error() string { return "termform: the question was " + string(e.res.Status) }

// Ask asks q and returns the answer: a resolved answer that matches q's response
// schema, a rejection (interlude.Rejected) or a cancellation
// (interlude.Cancelled); for a tool approval, the agent's decision. When the
// input ends first it returns an error matching io.EOF, and the question should be
// left pending.
func (a *Asker) Ask(q interlude.Interruption) (interlude.Resolution, error) {
	a.header(q)
	res, err := a.ask(q)
	if ab, ok := errors.AsType[*errAbort](err); ok {
		res, err = ab.res, nil
	}
	if err != nil {
		return interlude.Resolution{}, err
	}
	a.printf("  -> %s\n", Describe(res))
	return res, nil
}

func (a *Asker) ask(q interlude.Interruption) (interlude.Resolution, error) {
	if ap, ok := approvalOf(q); ok {
		return a.approval(q, ap)
	}
	root, err := parseSchema(q.Schema)
	if err != nil {
		return interlude.Resolution{}, err
	}
	f, err := newForm(a, q.Schema, root)
	if err != nil {
		return interlude.Resolution{}, err
	}
	v, err := f.run(nil)
	if err != nil {
		return interlude.Resolution{}, err
	}
	return interlude.Resolution{Status: interlude.Resolved, Response: v}, nil
}

// Line prints prompt and reads one line of free text, for programs that chat with
// the person between questions. It returns an error matching io.EOF when the input
// has ended.
func (a *Asker) Line(prompt string) (string, error) {
	a.printf("%s", prompt)
	return a.readLine()
}

// Describe renders a resolution in a few words, such as `answered {"approved":true}`,
// "rejected: Needs a manager" or "cancelled".
func Describe(r interlude.Resolution) string {
	switch r.Status {
	case interlude.Resolved:
		var d struct {
			Action    string          `json:"action"`
			Arguments json.RawMessage `json:"arguments"`
			Message   *string         `json:"message"`
		}
		if json.Unmarshal(r.Response, &d) == nil && d.Action != "" {
			switch d.Action {
			case "edit":
				return "edit: run with " + compact(d.Arguments)
			case "reject", "respond":
				if d.Message != nil {
					return d.Action + ": " + *d.Message
				}
			}
			return d.Action
		}
		return "answered " + compact(r.Response)
	case interlude.Rejected:
		if r.Error != nil && r.Error.Message != "" {
			return "rejected: " + r.Error.Message
		}
		return "rejected"
	}
	return string(r.Status)
}

func (a *Asker) header(q interlude.Interruption) {
	a.printf("\n? %s\n", oneLine(q.Message))
	var meta []string
	if q.Node != "" {
		meta = append(meta, "node "+termtext.Line(q.Node))
	}
	if q.Reason != "" {
		meta = append(meta, termtext.Line(q.Reason))
	}
	meta = append(meta, termtext.Line(q.ID))
	a.printf("  [%s]\n", strings.Join(meta, " · "))
	if q.ExpiresAt != nil {
		a.printf("  open until %s\n", q.ExpiresAt.Local().Format("2006-01-02 15:04:05"))
	}
	if _, ok := approvalOf(q); !ok && len(q.Value) > 0 && string(q.Value) != "null" {
		a.printf("  about: %s\n", compact(q.Value))
	}
}

// printf prints to the terminal. What it prints carries text from the question
// (its message, schema titles and descriptions, enum values, a tool's name and
// arguments), so control characters other than newlines and tabs are escaped:
// they would act on the terminal. Single-line fields are escaped further where
// they are formatted (termtext.Line).
func (a *Asker) printf(format string, args ...any) {
	fmt.Fprint(a.out, termtext.Block(fmt.Sprintf(format, args...)))
}

// readLine reads one line without its line ending. A last line without a newline
// counts; after it, io.EOF.
func (a *Asker) readLine() (string, error) {
	s, err := a.in.ReadString('\n')
	if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
		if errors.Is(err, io.EOF) {
			a.printf("\n")
			return "", fmt.Errorf("termform: the input ended before the answer was complete: %w", io.EOF)
		}
		return "", err
	}
	return strings.TrimRight(s, "\r\n"), nil
}

// input is one answer to a prompt after commands are handled.
type input struct {
	text    string // trimmed, or after a backslash exactly as typed
	literal bool   // typed after a backslash: never a default or a command
}

// prompt prints label and reads an answer, handling the commands every prompt
// accepts. help is shown for "?".
func (a *Asker) prompt(label string, help func()) (input, error) {
	for {
		a.printf("%s", label)
		line, err := a.readLine()
		if err != nil {
			return input{}, err
		}
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, `\`):
			return input{text: strings.TrimPrefix(strings.TrimLeft(line, " \t"), `\`), literal: true}, nil
		case t == "?":
			if help != nil {
				help()
			}
			a.printf("  Commands: Enter takes the default in [brackets]; !cancel withdraws the question; !reject REASON rejects it;\n" +
				"  start a line with \\ to type it literally. Ctrl-D leaves the question unanswered.\n")
			continue
		case t == "!cancel":
			return input{}, &errAbort{interlude.Cancel()}
		case t == "!reject" || strings.HasPrefix(t, "!reject "):
			return input{}, &errAbort{rejection(strings.TrimSpace(strings.TrimPrefix(t, "!reject")))}
		}
		return input{text: t}, nil
	}
}

// rejection is a plain rejection with the reason given, or none.
func rejection(reason string) interlude.Resolution {
	if reason == "" {
		return interlude.Reject(nil)
	}
	return interlude.Reject(&interlude.RejectedError{Name: "Rejected", Message: reason})
}

// form asks the answer to one schema.
type form struct {
	a        *Asker
	root     *node
	compiled *schema.Schema // nil without a schema
	doc      any            // the answer so far: *object, json.RawMessage or nil
}

func newForm(a *Asker, raw json.RawMessage, root *node) (*form, error) {
	f := &form{a: a, root: root}
	if root != nil {
		s, err := schema.Compile(raw)
		if err != nil {
			return nil, fmt.Errorf("termform: the response schema cannot be used: %w", err)
		}
		f.compiled = s
	}
	return f, nil
}

// run asks the whole answer, pre-filled with defaults (a JSON document, or nil),
// and returns it once it matches the schema.
func (f *form) run(defaults json.RawMessage) (json.RawMessage, error) {
	for {
		f.doc = nil
		v, present, err := f.field(f.root, "answer", "", defaults, true, "  ", func(v any) { f.doc = v })
		if err != nil {
			return nil, err
		}
		if !present {
			v = json.RawMessage("null")
		}
		f.doc = v
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		vs := f.violations("", true)
		if len(vs) == 0 {
			return data, nil
		}
		f.a.printf("  The answer does not match the question's schema:\n")
		for _, v := range vs {
			f.a.printf("    %s\n", formatViolation(v))
		}
		f.a.printf("  Let's go over it again (your answers are kept as defaults).\n")
		defaults = data
	}
}

// violations validates the answer so far and keeps those at pointer (or below it,
// unless exact).
func (f *form) violations(pointer string, below bool) []schema.Violation {
	if f.compiled == nil {
		return nil
	}
	data, err := json.Marshal(f.doc)
	if err != nil {
		return []schema.Violation{{Path: pointer, Message: err.Error()}}
	}
	var out []schema.Violation
	all, _ := f.compiled.ValidateN(data, math.MaxInt)
	for _, v := range all {
		if v.Path == pointer || (below && strings.HasPrefix(v.Path, pointer+"/")) {
			out = append(out, v)
		}
	}
	return out
}

func formatViolation(v schema.Violation) string {
	if v.Path == "" {
		return oneLine(v.Message)
	}
	return termtext.Line(strings.TrimPrefix(strings.ReplaceAll(v.Path, "/", "."), ".")) + ": " + oneLine(v.Message)
}

// field asks the value of n at pointer, labelled name. def pre-fills it (the
// caller's default, else the schema's). set places a candidate value in the answer
// so that it can be validated in context. It reports whether a value was given.
func (f *form) field(n *node, name, pointer string, def json.RawMessage, required bool, indent string, set func(any)) (any, bool, error) {
	if def == nil && n != nil {
		def = n.def
	}
	name = termtext.Line(name)
	label := name
	if required {
		label += "*"
	}
	help := func() {
		if n != nil && n.description != "" {
			f.a.printf("%s  %s\n", indent, n.description)
		}
		if n != nil {
			if l := n.limits(); len(l) > 0 {
				f.a.printf("%s  must be %s\n", indent, strings.Join(l, ", "))
			}
		}
	}
	if n != nil && n.description != "" && n.kind() != "object" {
		f.a.printf("%s%s\n", indent, oneLine(n.description))
	}
	switch n.kind() {
	case "const":
		f.a.printf("%s%s: %s (fixed)\n", indent, name, compact(n.constant))
		set(n.constant)
		return n.constant, true, nil
	case "null":
		set(json.RawMessage("null"))
		return json.RawMessage("null"), true, nil
	case "object":
		return f.group(n, name, pointer, def, required, indent, set)
	}
	for {
		v, present, err := f.scalar(n, label, def, required, indent, help)
		if err != nil {
			return nil, false, err
		}
		if !present {
			set(nil)
			return nil, false, nil
		}
		if msg := n.check(v); msg != "" {
			f.a.printf("%s  ! %s\n", indent, msg)
			continue
		}
		set(v)
		vs := f.violations(pointer, true)
		if len(vs) == 0 {
			return v, true, nil
		}
		for _, v := range vs {
			f.a.printf("%s  ! %s\n", indent, formatViolation(schema.Violation{Path: strings.TrimPrefix(v.Path, pointer), Message: v.Message}))
		}
	}
}

// group asks the fields of an object.
func (f *form) group(n *node, name, pointer string, def json.RawMessage, required bool, indent string, set func(any)) (any, bool, error) {
	var defs map[string]json.RawMessage
	_ = json.Unmarshal(def, &defs)
	inner := indent
	if pointer != "" {
		heading := name
		if required {
			heading += "*"
		}
		if n.description != "" {
			heading += "  (" + oneLine(n.description) + ")"
		}
		if !required {
			include, err := f.yesNo(indent+"include "+name+"?", def != nil && string(def) != "null", indent)
			if err != nil {
				return nil, false, err
			}
			if !include {
				set(nil)
				return nil, false, nil
			}
		}
		f.a.printf("%s%s:\n", indent, heading)
		inner = indent + "  "
	} else if n.description != "" {
		f.a.printf("%s%s\n", indent, oneLine(n.description))
	}
	for {
		obj := &object{}
		set(obj)
		// Properties the schema does not list but the defaults carry are kept.
		for _, kv := range orderedDefaults(def) {
			if !n.has(kv.key) {
				obj.set(kv.key, kv.value)
			}
		}
		for _, p := range n.props {
			ptr := pointer + "/" + escapePointer(p.name)
			_, _, err := f.field(p.node, p.name, ptr, defs[p.name], n.required[p.name], inner, func(v any) { obj.set(p.name, v) })
			if err != nil {
				return nil, false, err
			}
		}
		vs := f.violations(pointer, false)
		if len(vs) == 0 || pointer == "" {
			return obj, true, nil // the root is checked as a whole by run
		}
		for _, v := range vs {
			f.a.printf("%s  ! %s\n", indent, formatViolation(v))
		}
		data, _ := json.Marshal(obj)
		def, defs = data, nil
		_ = json.Unmarshal(def, &defs)
	}
}

func (n *node) has(name string) bool {
	return slices.ContainsFunc(n.props, func(p prop) bool { return p.name == name })
}

func orderedDefaults(def json.RawMessage) []keyValue {
	if len(def) == 0 {
		return nil
	}
	kvs, _ := orderedObject(def)
	return kvs
}

// scalar asks one value that is not a group. It reports false when the person
// left an optional value out.
func (f *form) scalar(n *node, label string, def json.RawMessage, required bool, indent string, help func()) (json.RawMessage, bool, error) {
	kind := n.kind()
	if kind == "boolean" {
		var d *bool
		var b bool
		if json.Unmarshal(def, &b) == nil {
			d = &b
		}
		for {
			hint := "yes/no"
			switch {
			case d != nil && *d:
				hint = "Y/n"
			case d != nil:
				hint = "y/N"
			}
			in, err := f.a.prompt(fmt.Sprintf("%s%s (%s): ", indent, label, hint), help)
			if err != nil {
				return nil, false, err
			}
			if in.text == "" {
				if d != nil {
					return boolJSON(*d), true, nil
				}
				if !required {
					return nil, false, nil
				}
				f.a.printf("%s  ! answer yes or no\n", indent)
				continue
			}
			if v, ok := parseBool(in.text); ok {
				return boolJSON(v), true, nil
			}
			f.a.printf("%s  ! answer yes or no\n", indent)
		}
	}
	if kind == "enum" {
		return f.choice(n, label, def, required, indent, help)
	}
	var hint string
	switch kind {
	case "string":
		hint = "text"
	case "number":
		hint = "number"
	case "integer":
		hint = "whole number"
	case "array":
		if k := n.items.kind(); n.items != nil && isScalarKind(k) {
			hint = "list of " + plural(k) + ", comma-separated"
		} else {
			hint = "JSON array"
		}
	default:
		hint = "JSON"
	}
	if n != nil {
		if l := n.limits(); len(l) > 0 {
			hint += ", " + strings.Join(l, ", ")
		}
	}
	shownDef := ""
	if def != nil {
		shownDef = " [" + termtext.Line(displayValue(def, kind)) + "]"
	}
	for {
		in, err := f.a.prompt(fmt.Sprintf("%s%s (%s)%s: ", indent, label, hint, shownDef), help)
		if err != nil {
			return nil, false, err
		}
		if in.text == "" && !in.literal {
			if def != nil {
				return def, true, nil
			}
			if !required {
				return nil, false, nil
			}
			if kind == "string" {
				f.a.printf("%s  ! a value is required (type \\ and Enter for empty text)\n", indent)
			} else {
				f.a.printf("%s  ! a value is required\n", indent)
			}
			continue
		}
		v, err := parseValue(n, kind, in)
		if err != nil {
			f.a.printf("%s  ! %s\n", indent, err)
			continue
		}
		return v, true, nil
	}
}

// choice asks for one of an enum's values.
func (f *form) choice(n *node, label string, def json.RawMessage, required bool, indent string, help func()) (json.RawMessage, bool, error) {
	defIdx := -1
	for i, v := range n.enum {
		if def != nil && vocab.JSONEqual(v, def) {
			defIdx = i
		}
	}
	for i, v := range n.enum {
		mark := ""
		if i == defIdx {
			mark = "  (default)"
		}
		f.a.printf("%s  %d) %s%s\n", indent, i+1, termtext.Line(displayValue(v, "")), mark)
	}
	shown := ""
	if defIdx >= 0 {
		shown = fmt.Sprintf(" [%d]", defIdx+1)
	}
	for {
		in, err := f.a.prompt(fmt.Sprintf("%s%s (1-%d)%s: ", indent, label, len(n.enum), shown), help)
		if err != nil {
			return nil, false, err
		}
		if in.text == "" {
			if defIdx >= 0 {
				return n.enum[defIdx], true, nil
			}
			if !required {
				return nil, false, nil
			}
			f.a.printf("%s  ! choose one of 1-%d\n", indent, len(n.enum))
			continue
		}
		if i, err := strconv.Atoi(in.text); err == nil && i >= 1 && i <= len(n.enum) {
			return n.enum[i-1], true, nil
		}
		// The value itself, as text or as JSON.
		for _, v := range n.enum {
			if displayValue(v, "") == in.text || vocab.JSONEqual(v, json.RawMessage(in.text)) {
				return v, true, nil
			}
		}
		f.a.printf("%s  ! choose one of 1-%d\n", indent, len(n.enum))
	}
}

func (f *form) yesNo(label string, def bool, indent string) (bool, error) {
	hint := "y/N"
	if def {
		hint = "Y/n"
	}
	for {
		in, err := f.a.prompt(fmt.Sprintf("%s (%s): ", label, hint), nil)
		if err != nil {
			return false, err
		}
		if in.text == "" {
			return def, nil
		}
		if v, ok := parseBool(in.text); ok {
			return v, nil
		}
		f.a.printf("%s  ! answer yes or no\n", indent)
	}
}

var (
	numberRE  = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	integerRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
)

func parseValue(n *node, kind string, in input) (json.RawMessage, error) {
	switch kind {
	case "string":
		return json.Marshal(in.text)
	case "number":
		if !numberRE.MatchString(in.text) {
			return nil, fmt.Errorf("%q is not a number", in.text)
		}
		return json.RawMessage(in.text), nil
	case "integer":
		if !integerRE.MatchString(in.text) {
			return nil, fmt.Errorf("%q is not a whole number", in.text)
		}
		return json.RawMessage(in.text), nil
	case "array":
		if strings.HasPrefix(in.text, "[") || n.items == nil || !isScalarKind(n.items.kind()) {
			return parseJSON(in.text)
		}
		items := []json.RawMessage{}
		for _, part := range strings.Split(in.text, ",") {
			it := input{text: strings.TrimSpace(part)}
			var v json.RawMessage
			var err error
			switch k := n.items.kind(); k {
			case "boolean":
				b, ok := parseBool(it.text)
				if !ok {
					return nil, fmt.Errorf("%q is not yes or no", it.text)
				}
				v = boolJSON(b)
			case "enum":
				v, err = enumValue(n.items, it.text)
			default:
				v, err = parseValue(n.items, k, it)
			}
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		return json.Marshal(items)
	}
	return parseJSON(in.text)
}

func enumValue(n *node, text string) (json.RawMessage, error) {
	for _, v := range n.enum {
		if displayValue(v, "") == text || vocab.JSONEqual(v, json.RawMessage(text)) {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%q is not one of the choices", text)
}

func parseJSON(text string) (json.RawMessage, error) {
	if !json.Valid([]byte(text)) {
		return nil, fmt.Errorf("that is not JSON (text goes in quotes: \"like this\")")
	}
	return json.RawMessage(text), nil
}

func isScalarKind(k string) bool {
	switch k {
	case "string", "number", "integer", "boolean", "enum":
		return true
	}
	return false
}

func plural(kind string) string {
	switch kind {
	case "string":
		return "texts"
	case "number":
		return "numbers"
	case "integer":
		return "whole numbers"
	case "boolean":
		return "yes/no"
	}
	return "choices"
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "y", "yes", "true":
		return true, true
	case "n", "no", "false":
		return false, true
	}
	return false, false
}

func boolJSON(b bool) json.RawMessage {
	if b {
		return json.RawMessage("true")
	}
	return json.RawMessage("false")
}

// displayValue shows a JSON value as a person types it: strings without quotes
// (for text fields and choices), anything else as compact JSON.
func displayValue(v json.RawMessage, kind string) string {
	var s string
	if json.Unmarshal(v, &s) == nil && kind != "json" {
		return s
	}
	return compact(v)
}

// compact shows a JSON value on one line, its control characters escaped.
func compact(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return termtext.Line(string(v))
	}
	return termtext.Line(b.String())
}

// oneLine shows text on one line: runs of white space become one space and
// control characters are escaped.
func oneLine(s string) string { return termtext.Line(strings.Join(strings.Fields(s), " ")) }

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// object is a JSON object that keeps its keys in the order they were set.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if v == nil {
		if _, ok := o.vals[k]; ok {
			delete(o.vals, k)
			o.keys = slices.DeleteFunc(o.keys, func(x string) bool { return x == k })
		}
		return
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// MarshalJSON writes the object's keys in order.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
