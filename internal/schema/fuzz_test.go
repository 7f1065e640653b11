package schema

import (
	"testing"
)

// fuzzSchemas are the schemas answers are validated against while fuzzing.
var fuzzSchemas = []string{
	listSchema,
	choiceSchema,
	`{}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","pattern":"^x+$"}}}`,
	`{"oneOf":[{"type":"array","items":{"$ref":"#"}},{"type":"object","additionalProperties":{"$ref":"#"}},{"type":"integer","multipleOf":3}]}`,
}

// FuzzValidateAnswer validates arbitrary bytes against each schema: it never
// panics, describes at most MaxViolations violations, counts at least as many as
// it describes, and agrees with AmbiguousKeys on repeated keys.
func FuzzValidateAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"approved":true}`, `{"approved":"yes","items":[1,{"id":1.5}]}`, `{"a":1,"A":2,"a":3}`,
		`[[[[[[[[[[]]]]]]]]]]`, `{"items":["xxxx",{"id":"x","tags":[[1,2,3]]}]}`, `{`, ``, `null`,
		"{\"kind\":1,\"\u212aind\":2}", `{"a":"\u0000","a/b~c":{"x":1,"x":2}}`, `3e400`, `"\ud800"`,
	} {
		for i := range fuzzSchemas {
			f.Add(uint8(i), []byte(seed))
		}
	}
	f.Add(uint8(0), hostile("items", 2<<10))
	f.Add(uint8(1), hostile("choice", 2<<10))
	f.Add(uint8(0), hostile("nesting", 2<<10))
	compiled := make([]*Schema, len(fuzzSchemas))
	for i, raw := range fuzzSchemas {
		compiled[i] = mustCompile(f, raw)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		s := compiled[int(which)%len(compiled)]
		vs, total := s.Validate(data)
		if len(vs) > MaxViolations || total < len(vs) || (total == 0) != (len(vs) == 0) {
			t.Fatalf("Validate described %d of %d violations", len(vs), total)
		}
		for _, v := range vs {
			if len(v.Path) > maxText+len("…") || len(v.Message) > maxText+len("…") || v.Message == "" {
				t.Fatalf("violation %+v is empty or too long", v)
			}
		}
		ks, keyTotal := AmbiguousKeys(data)
		if len(ks) > MaxViolations || keyTotal < len(ks) {
			t.Fatalf("AmbiguousKeys described %d of %d", len(ks), keyTotal)
		}
	})
}
