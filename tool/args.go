package tool

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/interludehq/interlude/internal/jsonappend"
)

// flatArgs decodes the arguments of a tool whose input type is a struct of
// strings, booleans and numbers, as most are, directly into the struct: the
// arguments have just passed the tool's schema, and json.Unmarshal would
// allocate its decoder, a parse stack and a copy of the struct for each call.
// It decodes only what it reads exactly as json.Unmarshal would (keys that
// name a field exactly, strings without escapes, numbers that fit their
// field) and reports false for anything else, leaving the caller to
// json.Unmarshal.
type flatArgs struct {
	fields []flatField
}

// flatField is one field of the input struct, by its JSON name.
type flatField struct {
	name   string
	kind   reflect.Kind
	offset uintptr
}

// flatArgsOf returns the decoder for struct type t, or nil when t has a field
// the decoder leaves to json.Unmarshal: an embedded, pointer, composite or
// self-decoding or json.Number field, one with the ",string" option, or two fields one key
// could fill.
func flatArgsOf(t reflect.Type) *flatArgs {
	if t.Kind() != reflect.Struct || implementsDecoder(t) {
		return nil
	}
	fa := &flatArgs{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil
		}
		if !sf.IsExported() {
			continue // encoding/json ignores it too
		}
		tag, hasTag := sf.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",string,") || implementsDecoder(sf.Type) || sf.Type == reflect.TypeFor[json.Number]() {
			return nil
		}
		if name == "" || !validTagName(name) {
			if hasTag && name != "" {
				return nil // encoding/json would use the Go name: left to it
			}
			name = sf.Name
		}
		switch k := sf.Type.Kind(); k {
		case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			for _, f := range fa.fields {
				if strings.EqualFold(f.name, name) {
					return nil // two fields one key could fill: left to encoding/json's rules
				}
			}
			fa.fields = append(fa.fields, flatField{name: name, kind: k, offset: sf.Offset})
		default:
			return nil
		}
	}
	return fa
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func implementsDecoder(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || p.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// validTagName is a conservative version of encoding/json's check of a tag's
// name: letters, digits and a few punctuation characters.
func validTagName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// decode decodes data, a JSON object, into the struct at p, and reports
// whether it could; on false, p may be partly written, and the caller decodes
// into a fresh value.
func (fa *flatArgs) decode(data []byte, p unsafe.Pointer) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		key, j, ok := plainString(data, i)
		if !ok {
			return false
		}
		i = skipSpace(data, j)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		var f *flatField
		for k := range fa.fields {
			if fa.fields[k].name == string(key) {
				f = &fa.fields[k]
				break
			}
		}
		if f == nil {
			return false
		}
		if i, ok = f.set(data, i, unsafe.Add(p, f.offset)); !ok {
			return false
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// set reads the value at data[i:] into the field at p and returns where the
// value ends. A null leaves the field as it is, as json.Unmarshal does.
func (f *flatField) set(data []byte, i int, p unsafe.Pointer) (int, bool) {
	if strings.HasPrefix(string(data[i:]), "null") {
		return i + 4, true
	}
	switch f.kind {
	case reflect.String:
		s, j, ok := plainString(data, i)
		if ok {
			*(*string)(p) = string(s)
		}
		return j, ok
	case reflect.Bool:
		switch {
		case strings.HasPrefix(string(data[i:]), "true"):
			*(*bool)(p) = true
			return i + 4, true
		case strings.HasPrefix(string(data[i:]), "false"):
			*(*bool)(p) = false
			return i + 5, true
		}
		return i, false
	}
	j, ok := jsonappend.NumberEnd(data, i)
	if !ok {
		return i, false
	}
	n := string(data[i:j]) // not kept: the conversion does not allocate
	switch f.kind {
	case reflect.Float64, reflect.Float32:
		bits := 64
		if f.kind == reflect.Float32 {
			bits = 32
		}
		x, err := strconv.ParseFloat(n, bits)
		if err != nil {
			return i, false
		}
		if bits == 32 {
			*(*float32)(p) = float32(x)
		} else {
			*(*float64)(p) = x
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := intBits(f.kind)
		x, err := strconv.ParseInt(n, 10, bits)
		if err != nil {
			return i, false
		}
		switch f.kind {
		case reflect.Int:
			*(*int)(p) = int(x)
		case reflect.Int8:
			*(*int8)(p) = int8(x)
		case reflect.Int16:
			*(*int16)(p) = int16(x)
		case reflect.Int32:
			*(*int32)(p) = int32(x)
		default:
			*(*int64)(p) = x
		}
	default:
		bits := intBits(f.kind)
		x, err := strconv.ParseUint(n, 10, bits)
		if err != nil {
			return i, false
		}
		switch f.kind {
		case reflect.Uint:
			*(*uint)(p) = uint(x)
		case reflect.Uint8:
			*(*uint8)(p) = uint8(x)
		case reflect.Uint16:
			*(*uint16)(p) = uint16(x)
		case reflect.Uint32:
			*(*uint32)(p) = uint32(x)
		default:
			*(*uint64)(p) = x
		}
	}
	return j, true
}

func intBits(k reflect.Kind) int {
	switch k {
	case reflect.Int8, reflect.Uint8:
		return 8
	case reflect.Int16, reflect.Uint16:
		return 16
	case reflect.Int32, reflect.Uint32:
		return 32
	}
	return 64
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the JSON string at data[i:] if it holds printable ASCII
// and no escape, returning its contents and where it ends.
func plainString(data []byte, i int) ([]byte, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return data[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, i, false
		}
	}
	return nil, i, false
}
