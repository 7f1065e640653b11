package termform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// node is the part of a JSON Schema that shapes a form: the type, the fields of an
// object in the order the schema lists them, and what a prompt shows (description,
// default, limits). Everything else is left to the validator.
type node struct {
	types       []string // "type", as a list; empty when not given
	title       string
	description string
	enum        []json.RawMessage
	constant    json.RawMessage
	def         json.RawMessage
	props       []prop
	required    map[string]bool
	items       *node
	complex     bool // anyOf, oneOf, not, ... : asked as a JSON line

	minimum, maximum                   *json.Number
	exclusiveMinimum, exclusiveMaximum *json.Number
	multipleOf                         *json.Number
	minLength, maxLength               *int
	minItems, maxItems                 *int
	pattern, format                    string
}

type prop struct {
	name string
	node *node
}

// maxDepth bounds the nesting of groups (and of local $ref chains), so that a
// recursive schema ends in a JSON line instead of an endless form.
const maxDepth = 8

// parseSchema reads a schema document into a node. A nil or empty schema gives
// nil: any JSON answer is accepted.
func parseSchema(raw json.RawMessage) (*node, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("the response schema is not JSON: %w", err)
	}
	p := parser{root: raw}
	return p.parse(raw, 0), nil
}

type parser struct{ root json.RawMessage }

// schemaFields are the keywords decoded directly.
type schemaFields struct {
	Type             json.RawMessage   `json:"type"`
	Title            string            `json:"title"`
	Description      string            `json:"description"`
	Enum             []json.RawMessage `json:"enum"`
	Const            json.RawMessage   `json:"const"`
	Default          json.RawMessage   `json:"default"`
	Properties       json.RawMessage   `json:"properties"`
	Required         []string          `json:"required"`
	Items            json.RawMessage   `json:"items"`
	Ref              string            `json:"$ref"`
	AnyOf            json.RawMessage   `json:"anyOf"`
	OneOf            json.RawMessage   `json:"oneOf"`
	Not              json.RawMessage   `json:"not"`
	Minimum          *json.Number      `json:"minimum"`
	Maximum          *json.Number      `json:"maximum"`
	ExclusiveMinimum *json.Number      `json:"exclusiveMinimum"`
	ExclusiveMaximum *json.Number      `json:"exclusiveMaximum"`
	MultipleOf       *json.Number      `json:"multipleOf"`
	MinLength        *int              `json:"minLength"`
	MaxLength        *int              `json:"maxLength"`
	MinItems         *int              `json:"minItems"`
	MaxItems         *int              `json:"maxItems"`
	Pattern          string            `json:"pattern"`
	Format           string            `json:"format"`
}

func (p parser) parse(raw json.RawMessage, depth int) *node {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "true", "{}":
		return &node{}
	case "false":
		return &node{complex: true}
	}
	var f schemaFields
	if depth > maxDepth || json.Unmarshal(raw, &f) != nil {
		return &node{complex: true}
	}
	if f.Ref != "" {
		target, ok := p.resolve(f.Ref)
		if !ok {
			return &node{complex: true, description: f.Description}
		}
		n := p.parse(target, depth+1)
		if f.Description != "" {
			n.description = f.Description
		}
		if f.Default != nil {
			n.def = f.Default
		}
		return n
	}
	n := &node{
		title: f.Title, description: f.Description, enum: f.Enum, constant: f.Const, def: f.Default,
		minimum: f.Minimum, maximum: f.Maximum, exclusiveMinimum: f.ExclusiveMinimum, exclusiveMaximum: f.ExclusiveMaximum,
		multipleOf: f.MultipleOf, minLength: f.MinLength, maxLength: f.MaxLength, minItems: f.MinItems, maxItems: f.MaxItems,
		pattern: f.Pattern, format: f.Format,
		complex: f.AnyOf != nil || f.OneOf != nil || f.Not != nil,
	}
	n.types = parseTypes(f.Type)
	if f.Properties != nil {
		props, err := orderedObject(f.Properties)
		if err != nil {
			n.complex = true
		}
		for _, kv := range props {
			n.props = append(n.props, prop{name: kv.key, node: p.parse(kv.value, depth+1)})
		}
	}
	if len(f.Required) > 0 {
		n.required = make(map[string]bool, len(f.Required))
		for _, r := range f.Required {
			n.required[r] = true
		}
	}
	if f.Items != nil {
		n.items = p.parse(f.Items, depth+1)
	}
	return n
}

// resolve finds a local reference ("#" or "#/json/pointer") in the root document.
func (p parser) resolve(ref string) (json.RawMessage, bool) {
	if ref == "#" {
		return p.root, true
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	cur := p.root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) == nil {
			v, ok := obj[tok]
			if !ok {
				return nil, false
			}
			cur = v
			continue
		}
		var arr []json.RawMessage
		i, err := strconv.Atoi(tok)
		if json.Unmarshal(cur, &arr) != nil || err != nil || i < 0 || i >= len(arr) {
			return nil, false
		}
		cur = arr[i]
	}
	return cur, true
}

func parseTypes(raw json.RawMessage) []string {
	if raw == nil {
		return nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}

type keyValue struct {
	key   string
	value json.RawMessage
}

// orderedObject decodes a JSON object keeping its keys in document order, which is
// the order a schema's author meant the fields to be asked in.
func orderedObject(raw json.RawMessage) ([]keyValue, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []keyValue
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, keyValue{key, v})
	}
	return out, nil
}

// kind is how a node is asked.
func (n *node) kind() string {
	switch {
	case n == nil:
		return "json"
	case n.constant != nil:
		return "const"
	case len(n.enum) > 0:
		return "enum"
	}
	t := n.primaryType()
	if (t == "" || t == "object") && len(n.props) > 0 {
		return "object" // combinators (anyOf, ...) are left to the final check
	}
	if n.complex {
		return "json"
	}
	switch t {
	case "boolean", "string", "number", "integer", "object", "array", "null":
		if t == "object" && len(n.props) == 0 {
			return "json" // a free-form object: no fields to ask for
		}
		return t
	}
	return "json"
}

// primaryType is the node's type, ignoring "null" in a list of types.
func (n *node) primaryType() string {
	var out string
	for _, t := range n.types {
		if t == "null" {
			if out == "" && len(n.types) == 1 {
				out = t
			}
			continue
		}
		if out != "" && out != "null" {
			return "" // several types: ask for JSON
		}
		out = t
	}
	return out
}

// limits describes the node's constraints for a prompt, such as "> 0, <= 10000".
func (n *node) limits() []string {
	var out []string
	add := func(op string, v *json.Number) {
		if v != nil {
			out = append(out, op+" "+v.String())
		}
	}
	add(">=", n.minimum)
	add(">", n.exclusiveMinimum)
	add("<=", n.maximum)
	add("<", n.exclusiveMaximum)
	add("multiple of", n.multipleOf)
	if n.minLength != nil && n.maxLength != nil {
		out = append(out, fmt.Sprintf("%d to %d characters", *n.minLength, *n.maxLength))
	} else if n.minLength != nil {
		out = append(out, fmt.Sprintf("at least %d characters", *n.minLength))
	} else if n.maxLength != nil {
		out = append(out, fmt.Sprintf("at most %d characters", *n.maxLength))
	}
	if n.minItems != nil {
		out = append(out, fmt.Sprintf("at least %d items", *n.minItems))
	}
	if n.maxItems != nil {
		out = append(out, fmt.Sprintf("at most %d items", *n.maxItems))
	}
	if n.format != "" {
		out = append(out, "format "+n.format)
	}
	if n.pattern != "" {
		out = append(out, "matching "+n.pattern)
	}
	return out
}

// check tells in plain words why v breaks one of the node's simple limits, or "".
// The validator has the last word; this only makes the common refusals readable.
func (n *node) check(v json.RawMessage) string {
	if n == nil {
		return ""
	}
	var num json.Number
	if b := bytes.TrimSpace(v); len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) && json.Unmarshal(b, &num) == nil {
		x, err := num.Float64()
		if err != nil {
			return ""
		}
		bad := func(lim *json.Number, fails func(x, l float64) bool) bool {
			if lim == nil {
				return false
			}
			l, err := lim.Float64()
			return err == nil && fails(x, l)
		}
		switch {
		case bad(n.minimum, func(x, l float64) bool { return x < l }):
			return "must be >= " + n.minimum.String()
		case bad(n.exclusiveMinimum, func(x, l float64) bool { return x <= l }):
			return "must be > " + n.exclusiveMinimum.String()
		case bad(n.maximum, func(x, l float64) bool { return x > l }):
			return "must be <= " + n.maximum.String()
		case bad(n.exclusiveMaximum, func(x, l float64) bool { return x >= l }):
			return "must be < " + n.exclusiveMaximum.String()
		}
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		l := len([]rune(s))
		switch {
		case n.minLength != nil && l < *n.minLength:
			return fmt.Sprintf("must be at least %d characters", *n.minLength)
		case n.maxLength != nil && l > *n.maxLength:
			return fmt.Sprintf("must be at most %d characters", *n.maxLength)
		}
	}
	return ""
}
