// Package schema compiles and applies JSON Schema (draft 2020-12) documents.
//
// It wraps github.com/santhosh-tekuri/jsonschema/v6 with the two things the rest of
// Interlude needs: a bounded cache of compiled schemas keyed by their bytes, and
// validation errors flattened into a list of violations a person can read and a
// client can place next to the field they concern. Schemas never load remote
// references: a "$ref" to anything outside the document is refused.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Violation is one way a value fails a schema.
type Violation struct {
	// Path is the JSON Pointer of the offending value inside the instance ("" is the root).
	Path string `json:"path"`
	// Message says what is wrong, in English.
	Message string `json:"message"`
}

// Schema is a compiled JSON Schema, safe for concurrent use.
type Schema struct {
	raw      json.RawMessage
	compiled *jsonschema.Schema
	simple   *shape // set when the schema is a plain object schema
}

// Raw returns the schema document as given.
func (s *Schema) Raw() json.RawMessage { return s.raw }

var printer = message.NewPrinter(language.English)

// MaxViolations is how many violations Validate describes. It counts the rest
// without describing them, so that refusing an answer built to fail in many places
// costs little and says enough.
const MaxViolations = 20

// MaxDepth is how deeply objects and arrays may nest in a document Validate
// accepts. Answers people write are shallow; a deeper document is refused before
// the schema applies, which bounds the work recursive schemas can be made to do.
const MaxDepth = 64

// MaxValues is how many JSON values (objects, arrays, strings, numbers, booleans
// and nulls, counted wherever they nest) a document Validate accepts may hold.
// Answers people give hold far fewer; the limit bounds the validator's work,
// which grows with the number of values times the branches of anyOf or oneOf.
const MaxValues = 10000

// maxText is how many bytes of a violation's path or message are kept; longer
// ones are cut at a character boundary and end in "…".
const maxText = 200

// Validate checks the JSON document data against the schema. It returns the first
// MaxViolations violations (ordered by path) and how many there are in all; both
// are empty when data is valid. Data that is not JSON is one violation, and so is
// data nested deeper than MaxDepth or holding more than MaxValues values. So is every object key that repeats, or
// differs only in case from, another key of the same object (see AmbiguousKeys):
// encoding/json would decode such data to a different value than the one
// validated, so it is refused before the schema applies.
func (s *Schema) Validate(data []byte) ([]Violation, int) {
	return s.ValidateN(data, MaxViolations)
}

// ValidateN is Validate describing at most limit violations, for callers that
// validate documents they built themselves and want every violation.
func (s *Schema) ValidateN(data []byte, limit int) ([]Violation, int) {
	if s.simple != nil && s.simple.acceptsJSON(data) {
		return nil, 0
	}
	if doc, ok := parseClean(data); ok {
		if s.simple != nil && s.simple.accepts(doc) {
			return nil, 0
		}
		return s.validateValue(doc, limit)
	}
	vs, total, syntaxOK := scanKeys(data, MaxDepth, limit)
	if syntaxOK && total > 0 {
		return vs, total
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return []Violation{{Path: "", Message: clip("not valid JSON: " + err.Error())}}, 1
	}
	if s.simple != nil && s.simple.accepts(doc) {
		return nil, 0
	}
	return s.validateValue(doc, limit)
}

// ValidateJSON is Validate for callers that must tell data that is not JSON
// from data that fails the schema: isJSON reports whether data is one JSON
// value, and when it is not, the violations are Validate's. A small valid
// document is read once for both answers.
func (s *Schema) ValidateJSON(data []byte) (vs []Violation, total int, isJSON bool) {
	if s.simple != nil && s.simple.acceptsJSON(data) {
		return nil, 0, true
	}
	if doc, ok := parseClean(data); ok {
		if s.simple != nil && s.simple.accepts(doc) {
			return nil, 0, true
		}
		vs, total = s.validateValue(doc, MaxViolations)
		return vs, total, true
	}
	vs, total = s.Validate(data)
	return vs, total, json.Valid(data)
}

// ValidateValue checks an already decoded JSON value (as produced by
// jsonschema.UnmarshalJSON, with numbers as json.Number) against the schema, and
// returns what Validate does. Decoding has already dropped repeated keys, so it
// cannot refuse them, nor does it limit nesting: callers holding the JSON text
// should use Validate.
func (s *Schema) ValidateValue(doc any) ([]Violation, int) {
	return s.validateValue(doc, MaxViolations)
}

func (s *Schema) validateValue(doc any, limit int) ([]Violation, int) {
	err := s.compiled.Validate(doc)
	if err == nil {
		return nil, 0
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Violation{{Message: clip(err.Error())}}, 1
	}
	// Only the first limit leaves, in path order, are described: each is placed
	// among the kept ones by comparing locations token by token, so no pointer or
	// message is built for the others.
	var (
		kept  []*jsonschema.ValidationError
		total int
	)
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		total++
		if limit <= 0 || (len(kept) == limit && comparePointers(kept[limit-1].InstanceLocation, e.InstanceLocation) <= 0) {
			return // after every kept one
		}
		// The first leaf after all kept ones with an equal location keeps the
		// order of a stable sort.
		i := sort.Search(len(kept), func(i int) bool {
			return comparePointers(kept[i].InstanceLocation, e.InstanceLocation) > 0
		})
		if i >= limit {
			return
		}
		if len(kept) < limit {
			kept = append(kept, nil)
		}
		copy(kept[i+1:], kept[i:])
		kept[i] = e
	}
	walk(verr)
	out := make([]Violation, len(kept))
	for i, e := range kept {
		out[i] = Violation{Path: clip(pointer(e.InstanceLocation)), Message: clip(e.ErrorKind.LocalizedString(printer))}
	}
	return out, total
}

// comparePointers orders two instance locations as their JSON Pointers would
// sort as strings, without building them.
func comparePointers(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		x, y := escapeToken(a[i]), escapeToken(b[i])
		n := min(len(x), len(y))
		if c := strings.Compare(x[:n], y[:n]); c != 0 {
			return c
		}
		// One escaped token is a prefix of the other: after the shorter one
		// comes a '/' if more tokens follow, else the end of the pointer.
		if len(x) < len(y) {
			if i+1 == len(a) {
				return -1
			}
			return cmpByte('/', y[n])
		}
		if i+1 == len(b) {
			return 1
		}
		return cmpByte(x[n], '/')
	}
	return len(a) - len(b)
}

func cmpByte(a, b byte) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func escapeToken(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	t = strings.ReplaceAll(t, "~", "~0")
	return strings.ReplaceAll(t, "/", "~1")
}

func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

// clip cuts s to maxText bytes at a character boundary, marking the cut with "…",
// so that a violation naming a huge key or listing many stays small.
func clip(s string) string {
	if len(s) <= maxText {
		return s
	}
	n := maxText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// FormatViolations renders violations as one line each, for error messages.
func FormatViolations(vs []Violation) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteString("; ")
		}
		p := v.Path
		if p == "" {
			p = "(root)"
		}
		fmt.Fprintf(&b, "%s: %s", p, v.Message)
	}
	return b.String()
}

// refuseLoader refuses every external reference so that a schema never makes the
// process read a file or the network.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %q: external references are not allowed", url)
}

const cacheLimit = 512

var cache = struct {
	sync.Mutex
	m map[string]*Schema
}{m: make(map[string]*Schema)}

// Compile parses and compiles a schema document (draft 2020-12 unless the document
// names another draft in "$schema"). Compiled schemas are cached by their bytes, so
// compiling the same document again is a map lookup.
func Compile(raw []byte) (*Schema, error) {
	cache.Lock()
	s, ok := cache.m[string(raw)]
	cache.Unlock()
	if ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	const loc = "urn:interlude:schema"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("schema is invalid: %w", err)
	}
	compiled, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schema is invalid: %w", err)
	}
	s = &Schema{raw: append(json.RawMessage(nil), raw...), compiled: compiled, simple: shapeOf(raw)}
	key := string(raw)
	cache.Lock()
	if len(cache.m) >= cacheLimit {
		clear(cache.m) // schemas are few in practice; a full reset keeps memory bounded
	}
	cache.m[key] = s
	cache.Unlock()
	return s, nil
}
