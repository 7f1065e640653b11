// Package jsonerr words encoding/json's decoding errors for the people who sent
// the JSON: the field and the JSON types involved ("field "amount" must be a
// number, got a string"), never the Go types the JSON was decoded into.
package jsonerr

import (
	"encoding"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// Explain says what is wrong with JSON that err (from encoding/json) refused:
// "must be a number, got a string", naming the innermost field when the
// problem is inside the value ("field "text" must be a string, got a number").
func Explain(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		problem := "must be " + want(te.Type) + ", got " + got(te.Value)
		if f := innermost(te.Field); f != "" {
			return "field " + strconv.Quote(f) + " " + problem
		}
		return problem
	case errors.As(err, &se):
		return "is not valid JSON: " + strings.TrimPrefix(se.Error(), "json: ") + " (at byte " + strconv.FormatInt(se.Offset, 10) + ")"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "is empty or cut short"
	}
	var ie *json.InvalidUnmarshalError
	if errors.As(err, &ie) {
		return "cannot be decoded"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// Field says what is wrong with the value of the named field: "field "amount"
// must be a number, got a string", or with the field inside it that is wrong,
// "field "text" in "messages" must be a string, got a number".
func Field(name string, err error) string {
	s := Explain(err)
	switch {
	case strings.HasPrefix(s, "field "):
		f, rest, _ := strings.Cut(strings.TrimPrefix(s, "field "), " must be ")
		return "field " + f + " in " + strconv.Quote(name) + " must be " + rest
	case strings.HasPrefix(s, "must be "), strings.HasPrefix(s, "is "):
		return "field " + strconv.Quote(name) + " " + s
	}
	return "field " + strconv.Quote(name) + ": " + s
}

// innermost returns the last name of a dotted field path: the JSON name of the
// field at fault (the path's outer parts may name Go types).
func innermost(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// want names the JSON a Go type takes.
func want(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return "a base64 string"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another kind of value"
}

// got names the JSON value encoding/json found ("string", "number 1.5", ...).
func got(v string) string {
	switch {
	case v == "string":
		return "a string"
	case v == "number":
		return "a number"
	case strings.HasPrefix(v, "number "):
		return "the number " + strings.TrimPrefix(v, "number ")
	case v == "object":
		return "an object"
	case v == "array":
		return "an array"
	case v == "bool":
		return "true or false"
	case v == "null":
		return "null"
	}
	return "a JSON " + v
}
