package termform

import (
	"encoding/json"
	"testing"
)

// FuzzParseSchema reads arbitrary bytes as a response schema: it never panics, and
// a schema it reads can be asked about its kind, type, limits and any value.
func FuzzParseSchema(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","properties":{"approved":{"type":"boolean","default":true},"note":{"type":"string","maxLength":10}},"required":["approved"]}`,
		`{"type":["integer","null"],"minimum":1,"exclusiveMaximum":10,"multipleOf":0.5}`,
		`{"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"}`,
		`{"enum":["a","b",1,null],"const":"a"}`,
		`{"anyOf":[{"type":"string"},{"type":"number"}]}`,
		`{"type":"array","items":{"type":"string","minLength":2},"minItems":1,"maxItems":3}`,
		`{"properties":{"a":{"$ref":"#/properties/a"}}}`,
		`{"$ref":"#/$defs/missing"}`, `{"type":7,"properties":[],"required":{}}`, `true`, `null`, ``, `{`, `[]`,
		`{"minimum":"x","maxLength":-1,"minLength":1e99}`,
	} {
		f.Add([]byte(seed), []byte(`{"approved":true,"note":"x"}`))
	}
	f.Fuzz(func(t *testing.T, raw, value []byte) {
		n, err := parseSchema(json.RawMessage(raw))
		if err != nil || n == nil {
			return
		}
		var walk func(n *node, depth int)
		walk = func(n *node, depth int) {
			if n == nil || depth > 2*maxDepth+2 {
				return
			}
			n.kind()
			n.primaryType()
			n.limits()
			n.check(json.RawMessage(value))
			for _, p := range n.props {
				walk(p.node, depth+1)
			}
			walk(n.items, depth+1)
		}
		walk(n, 0)
	})
}
