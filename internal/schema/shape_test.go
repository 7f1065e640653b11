package schema

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A plain object schema checked directly must answer as the general validator
// does: every document it accepts is one the validator accepts.
func TestPlainObjectSchemaAnswersAsTheValidator(t *testing.T) {
	schemas := []string{
		`{"properties":{"order_id":{"type":"string"},"amount":{"type":"number"},"n":{"type":"integer"},"ok":{"type":"boolean","description":"d"}},"additionalProperties":false,"type":"object","required":["order_id","amount"]}`,
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a","b"]}`,
		`{"type":"object","properties":{"order_id":{"type":"string"},"amount":{"type":"number","minimum":0,"maximum":1000}},"required":["order_id","amount"],"additionalProperties":false}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":-3},"a":{"type":"number","maximum":0.5},"amount":{"type":"number","minimum":9007199254740992}}}`,
	}
	docs := []string{
		`{"order_id":"1","amount":10}`, `{"order_id":"1","amount":10.5,"n":3,"ok":true}`,
		`{"order_id":1,"amount":10}`, `{"order_id":"1"}`, `{"order_id":"1","amount":"10"}`,
		`{"order_id":"1","amount":10,"extra":1}`, `{"order_id":"1","amount":10,"n":1.5}`,
		`{"order_id":"1","amount":10,"n":2.0}`, `{"order_id":"1","amount":10,"n":1e2}`,
		`{"order_id":"1","amount":10,"ok":"yes"}`, `{"order_id":null,"amount":10}`,
		`{"a":"x"}`, `{"a":1}`, `{"a":1,"b":2}`, `{}`, `[]`, `"s"`, `null`, `{"a":-3,"b":null}`,
		`{"order_id":"1","amount":0}`, `{"order_id":"1","amount":1000}`, `{"order_id":"1","amount":-0.0000001}`,
		`{"order_id":"1","amount":1000.0000000000000001}`, `{"order_id":"1","amount":999.9999999999999999}`, `{"order_id":"1","amount":1e3}`,
		`{"order_id":"1","amount":1e-400}`, `{"order_id":"1","amount":-1e-400}`, `{"n":-3}`, `{"n":-4}`, `{"n":-2}`, `{"a":0.5}`, `{"a":0.49999999999999999999}`,
		`{"a":0.50000000000000000001}`, `{"amount":9007199254740993}`, `{"amount":9007199254740992}`, `{"amount":9007199254740994}`,
	}
	for _, raw := range schemas {
		s, err := Compile([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if s.simple == nil {
			t.Fatalf("schema %s is not taken as a plain object schema", raw)
		}
		for _, d := range docs {
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(d)))
			if err != nil {
				t.Fatal(err)
			}
			full, _ := s.validateValue(doc, MaxViolations)
			if s.simple.accepts(doc) && len(full) > 0 {
				t.Errorf("schema %s: %s accepted directly, but the validator says %v", raw, d, full)
			}
			got, _ := s.Validate([]byte(d))
			if len(got) != len(full) {
				t.Errorf("schema %s: %s gives %v, the validator %v", raw, d, got, full)
			}
		}
	}
}

// Schemas beyond plain object schemas go to the general validator only.
func TestOtherSchemasAreNotTakenAsPlainObjects(t *testing.T) {
	for _, raw := range []string{
		`{"type":"object","properties":{"a":{"type":"string","minLength":2}}}`,
		`{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
		`{"properties":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"$schema":"http://json-schema.org/draft-07/schema#"}`,
		`{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"integer"}}}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","properties":{"a":{"enum":["x"]}}}`,
		`{"type":"object","properties":{"a":{"type":"number","exclusiveMaximum":3}}}`,
		`{"type":"object","properties":{"a":{"type":"string","minimum":3}}}`,
		`{"type":"object","properties":{"a":{"type":"number","maximum":0.1}}}`,
		`{"type":"object","properties":{"a":{"type":"number","maximum":9007199254740993}}}`,
	} {
		s, err := Compile([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if s.simple != nil {
			t.Errorf("schema %s taken as a plain object schema", raw)
		}
	}
}

var scanSchemas = []string{
	`{"properties":{"order_id":{"type":"string"},"amount":{"type":"number","minimum":0,"maximum":1000},"n":{"type":"integer"},"ok":{"type":"boolean"}},"additionalProperties":false,"type":"object","required":["order_id"]}`,
	`{"type":"object","properties":{"a":{"type":"string"},"k":{"type":"integer","minimum":-3}}}`,
}

// agreeWithReadAndAccept fails t if the in-place check of data accepts what
// reading it (parseClean) and checking the read value (accepts) would not.
func agreeWithReadAndAccept(t *testing.T, sh *shape, data []byte) bool {
	t.Helper()
	if !sh.acceptsJSON(data) {
		return false
	}
	doc, ok := parseClean(data)
	if !ok || !sh.accepts(doc) {
		t.Fatalf("%q is accepted in place, but read (%v) and checked it is not", data, ok)
	}
	return true
}

// A document checked in place, without being read into a value, is accepted
// only if reading it and checking the value would accept it; the common tool
// arguments are accepted in place.
func TestAPlainDocumentIsCheckedInPlaceAsWhenRead(t *testing.T) {
	sh := shapeOf([]byte(scanSchemas[0]))
	open := shapeOf([]byte(scanSchemas[1]))
	for _, d := range []string{`{"order_id":"1"}`, ` { "order_id" : "1" , "amount" : 10.5 , "n" : -2 , "ok" : false } `, "{\"order_id\":\"\u00e9t\u00e9\"}"} {
		if !agreeWithReadAndAccept(t, sh, []byte(d)) {
			t.Errorf("%s is not accepted in place", d)
		}
	}
	for _, d := range []string{`{"a":"x","other":null,"more":[1]}`, `{"a":"x","other":1e3,"b":true}`, `{}`} {
		agreeWithReadAndAccept(t, open, []byte(d))
	}
	for _, d := range append(append([]string{}, cleanDocs...), declinedDocs...) {
		agreeWithReadAndAccept(t, sh, []byte(d))
		agreeWithReadAndAccept(t, open, []byte(d))
	}
}

// FuzzCheckingInPlaceAgreesWithReading: whatever the bytes, the in-place check
// accepts them only if reading and checking the value accepts them.
func FuzzCheckingInPlaceAgreesWithReading(f *testing.F) {
	for _, d := range append(append([]string{`{"order_id":"1","amount":1000,"n":1.0,"ok":null}`, `{"K":1,"k":2}`}, cleanDocs...), declinedDocs...) {
		f.Add([]byte(d), false)
		f.Add([]byte(d), true)
	}
	closed, open := shapeOf([]byte(scanSchemas[0])), shapeOf([]byte(scanSchemas[1]))
	f.Fuzz(func(t *testing.T, data []byte, useOpen bool) {
		sh := closed
		if useOpen {
			sh = open
		}
		agreeWithReadAndAccept(t, sh, data)
	})
}
