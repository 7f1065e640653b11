package interlude

import (
	"bytes"
	"encoding/json"
)

// jsonEqual reports whether two JSON documents mean the same value, whatever their
// spacing or key order. Two empty documents are equal; "null" equals empty.
func jsonEqual(a, b json.RawMessage) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if bytes.Equal(a, b) {
		return true
	}
	if isNull(a) && isNull(b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

func isNull(b []byte) bool { return len(b) == 0 || string(b) == "null" }

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
