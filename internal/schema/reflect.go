package schema

import (
	"encoding/json"
	"reflect"
	"sync"

	"github.com/invopop/jsonschema"
)

var reflected sync.Map // reflect.Type -> json.RawMessage

// For returns the JSON Schema of the Go type t as a self-contained document (no
// references to definitions elsewhere), derived from its fields and their json and
// jsonschema struct tags. Results are cached per type.
func For(t reflect.Type) (json.RawMessage, error) {
	if v, ok := reflected.Load(t); ok {
		return v.(json.RawMessage), nil
	}
	r := &jsonschema.Reflector{
		DoNotReference:             true,
		ExpandedStruct:             true,
		Anonymous:                  true,
		AllowAdditionalProperties:  false,
		RequiredFromJSONSchemaTags: false,
	}
	s := r.ReflectFromType(t)
	s.Version = "" // the draft is implied: every schema here is 2020-12
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if _, err := Compile(raw); err != nil {
		return nil, err
	}
	reflected.Store(t, json.RawMessage(raw))
	return raw, nil
}
