// Package jsonbody reads request bodies within a size limit, decodes them
// into typed structs strictly (field names match exactly, unknown and repeated
// fields are refused) and words a refusal in the body's terms: the path of the
// field ("responses[0].eror") and the JSON types in plain words, never Go's.
package jsonbody

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Error is a refused body: what is wrong with the field at Path ("" for the
// whole body).
type Error struct {
	Path    string
	Message string
}

func (e *Error) Error() string { return e.Message }

func refuse(path, format string, args ...any) *Error {
	return &Error{Path: path, Message: fmt.Sprintf(format, args...)}
}

var (
	strict  = jsonv2.JoinOptions(jsonv2.RejectUnknownMembers(true), jsontext.AllowDuplicateNames(false))
	lenient = jsonv2.JoinOptions(strict, jsontext.AllowDuplicateNames(true))
)

var errTrailing = errors.New("data after the JSON object")

// Decode decodes body, which must be one JSON object, into v. A key given
// twice is refused, except where passedOn says the key lies within a value the
// request passes on to be checked by what receives it.
func Decode(body []byte, v any, passedOn func(jsontext.Pointer) bool) error {
	if t := bytes.TrimSpace(body); string(t) == "null" {
		return refuse("", "the body must be a JSON object, not null")
	}
	err := decodeOne(body, v, strict)
	if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok && errors.Is(se.Err, jsontext.ErrDuplicateName) && passedOn(se.JSONPointer) {
		err = decodeOne(body, v, lenient)
	}
	if errors.Is(err, errTrailing) {
		return refuse("", "the body has data after its JSON object")
	}
	if err != nil {
		return wordError("", err)
	}
	return nil
}

func decodeOne(body []byte, v any, opts jsonv2.Options) error {
	// Unmarshal accepts the same bodies as the decoder below and reuses its
	// decoders; a body it refuses is read again below, for the error's terms.
	if jsonv2.Unmarshal(body, v, opts) == nil {
		return nil
	}
	return decodeStream(body, v, opts)
}

// decodeStream decodes body as a stream of tokens, whose errors say where and
// why a body is refused: the value, then nothing but the end.
func decodeStream(body []byte, v any, opts jsonv2.Options) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body), opts)
	if err := jsonv2.UnmarshalDecode(dec, v, opts); err != nil {
		return err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return errTrailing
	}
	return nil
}

// DecodeValue decodes raw, the field at path, into v, strictly.
func DecodeValue(path string, raw jsontext.Value, v any) error {
	if err := jsonv2.Unmarshal(raw, v, strict); err != nil {
		return wordError(path, err)
	}
	return nil
}

// wordError words a decoding error of the value at base.
func wordError(base string, err error) error {
	if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		path := FieldPath(base, se.JSONPointer)
		switch {
		case errors.Is(se.Err, jsontext.ErrDuplicateName):
			return refuse(path, "field %q is given twice in %s; give each field once", se.JSONPointer.LastToken(), what(FieldPath(base, se.JSONPointer.Parent())))
		case errors.Is(se.Err, io.ErrUnexpectedEOF):
			return refuse(base, "%s must be a JSON object: the JSON is empty or cut short", what(base))
		}
		return refuse(base, "%s must be a JSON object: invalid JSON at byte %d: %v", what(base), se.ByteOffset, se.Err)
	}
	se, ok := errors.AsType[*jsonv2.SemanticError](err)
	if !ok {
		return refuse(base, "%s could not be read: %v", what(base), err)
	}
	path := FieldPath(base, se.JSONPointer)
	if errors.Is(se.Err, jsonv2.ErrUnknownName) {
		return refuse(path, "unknown field %q at %s; known fields: %v", se.JSONPointer.LastToken(), path, fieldNames(se.GoType))
	}
	want := "a JSON object"
	if se.GoType != nil {
		switch se.GoType.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Slice:
			want = "an array"
		}
	}
	return refuse(path, "%s must be %s: found a JSON %s", what(path), want, KindName(se.JSONKind))
}

// KindName names a JSON kind in words.
func KindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '[':
		return "array"
	}
	return "object"
}

// FieldPath writes a JSON pointer below base as a path: responses/0/error
// becomes responses[0].error.
func FieldPath(base string, p jsontext.Pointer) string {
	path := base
	for tok := range p.Tokens() {
		if n, err := strconv.Atoi(tok); err == nil && n >= 0 {
			path = Index(path, n)
		} else if tok != "" {
			path = Join(path, tok)
		}
	}
	return path
}

// fieldNames lists the JSON names of a struct's fields.
func fieldNames(t reflect.Type) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// Join is the path of field key of the value at path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index is the path of element i of the array at path.
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// what names the field at path in messages.
func what(path string) string {
	if path == "" {
		return "the body"
	}
	return path
}
