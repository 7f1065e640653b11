package interlude

import (
	"encoding/json"

	"github.com/interludehq/interlude/internal/jsonappend"
)

// EncodeJSON encodes v as JSON for storage in an interrupt. A json.RawMessage or
// []byte is taken as JSON text and checked; a string that is valid JSON text is kept
// as is only for Schema (see encodeSchema); anything else is marshalled.
func encodeValue(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if !json.Valid(x) {
			return nil, errInvalidJSON
		}
		return x, nil
	}
	// The plain values a request usually carries (a map of strings and
	// numbers) are written without encoding/json's reflection.
	if data, ok := jsonappend.Value(make([]byte, 0, 64), v); ok {
		return data, nil
	}
	return json.Marshal(v)
}

func encodeSchema(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case []byte:
		return encodeValue(json.RawMessage(x))
	case string:
		return encodeValue(json.RawMessage(x))
	}
	return encodeValue(v)
}

var errInvalidJSON = &Error{Code: CodeInvalidRequest, Message: "value is not valid JSON"}
