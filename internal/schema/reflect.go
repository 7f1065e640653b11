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
	// Inline everything, which forms and readers handle best, unless the type refers
	// to itself: then named structs become local "$defs" references.
	inline := !recursive(t, map[reflect.Type]bool{})
	r := &jsonschema.Reflector{
		DoNotReference:             inline,
		ExpandedStruct:             inline,
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

// recursive reports whether t contains itself, through fields, elements or
// pointers.
func recursive(t reflect.Type, path map[reflect.Type]bool) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return recursive(t.Elem(), path)
	case reflect.Struct:
		if path[t] {
			return true
		}
		path[t] = true
		defer delete(path, t)
		for i := 0; i < t.NumField(); i++ {
			if recursive(t.Field(i).Type, path) {
				return true
			}
		}
	}
	return false
}
