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
}

// Raw returns the schema document as given.
func (s *Schema) Raw() json.RawMessage { return s.raw }

var printer = message.NewPrinter(language.English)

// Validate checks the JSON document data against the schema and returns every
// violation found, or nil when data is valid. Data that is not JSON is one violation.
// So is every object key that repeats, or differs only in case from, another key of
// the same object (see AmbiguousKeys): encoding/json would decode such data to a
// different value than the one validated, so it is refused before the schema applies.
func (s *Schema) Validate(data []byte) []Violation {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return []Violation{{Path: "", Message: "not valid JSON: " + err.Error()}}
	}
	if vs := AmbiguousKeys(data); len(vs) > 0 {
		return vs
	}
	return s.ValidateValue(doc)
}

// ValidateValue checks an already decoded JSON value (as produced by
// jsonschema.UnmarshalJSON, with numbers as json.Number) against the schema.
// Decoding has already dropped repeated keys, so it cannot refuse them: callers
// holding the JSON text should use Validate.
func (s *Schema) ValidateValue(doc any) []Violation {
	err := s.compiled.Validate(doc)
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Violation{{Message: err.Error()}}
	}
	var out []Violation
	collect(verr, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// collect appends the leaves of a validation error tree: the leaves name the
// concrete failures, the inner nodes only say "some subschema failed".
func collect(e *jsonschema.ValidationError, out *[]Violation) {
	if len(e.Causes) == 0 {
		*out = append(*out, Violation{
			Path:    pointer(e.InstanceLocation),
			Message: e.ErrorKind.LocalizedString(printer),
		})
		return
	}
	for _, c := range e.Causes {
		collect(c, out)
	}
}

func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
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
	key := string(raw)
	cache.Lock()
	s, ok := cache.m[key]
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
	s = &Schema{raw: append(json.RawMessage(nil), raw...), compiled: compiled}
	cache.Lock()
	if len(cache.m) >= cacheLimit {
		clear(cache.m) // schemas are few in practice; a full reset keeps memory bounded
	}
	cache.m[key] = s
	cache.Unlock()
	return s, nil
}
