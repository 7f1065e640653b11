package host

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/interludehq/interlude"
)

// inputRules are what a graph's input schema says of input fields.
type inputRules struct {
	fields   []string // the state's fields, sorted; nil when the schema allows others
	required []string
}

// rulesOf reads the top-level properties of an input schema (when it allows
// no others) and the ones it requires.
func rulesOf(schema json.RawMessage) inputRules {
	var s struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
		Required             []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return inputRules{}
	}
	r := inputRules{required: s.Required}
	if s.Properties != nil && s.AdditionalProperties != nil && !*s.AdditionalProperties {
		r.fields = []string{}
		for k := range s.Properties {
			r.fields = append(r.fields, k)
		}
		slices.Sort(r.fields)
	}
	return r
}

// CheckInput refuses the fields of input to a thread of graphName that its
// state does not have, or, when the input creates the thread (fresh), lacks
// a field the graph's input schema requires; input to an existing thread
// updates some fields and needs none. The refusal is an *interlude.Error of
// code invalid_request whose one violation points at the field.
func (h *Host) CheckInput(graphName string, fields map[string]json.RawMessage, fresh bool) error {
	r := h.inputs[graphName]
	refuse := func(field, problem, format string, args ...any) error {
		return &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf(format, args...),
			Violations: []interlude.Violation{{Path: "/" + field, Message: problem}}}
	}
	if r.fields != nil {
		var unknown []string
		for k := range fields {
			if !slices.Contains(r.fields, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return refuse(unknown[0], "is not a field of the state", "graph %q's state has %s", graphName, strings.Join(r.fields, ", "))
		}
	}
	if fresh {
		for _, k := range r.required {
			if _, ok := fields[k]; !ok {
				return refuse(k, "is required to start a thread", "graph %q's input_schema lists what it needs", graphName)
			}
		}
	}
	return nil
}

// ValidID reports whether s can name a thread or a question on every surface:
// 1 to 256 letters, digits or -_.:@~+=, other than "." and "..", which a URL
// path cannot carry as a segment.
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > 256 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.:@~+=", c) >= 0) {
			return false
		}
	}
	return true
}
