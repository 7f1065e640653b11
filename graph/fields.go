package graph

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/internal/jsonerr"
)

// Reducer names how writes to a state field combine with its current value. It is
// declared with the struct tag `graph:"..."`; replace is the default.
type Reducer string

// The built-in reducers.
const (
	// ReplaceReducer sets the field to the written value. Two tasks of one step may
	// not both write a replace field.
	ReplaceReducer Reducer = "replace"
	// AppendReducer appends the written slice to the field's slice.
	AppendReducer Reducer = "append"
	// AddReducer adds the written number to the field's number.
	AddReducer Reducer = "add"
	// MergeReducer copies the written map's entries into the field's map.
	MergeReducer Reducer = "merge"
)

// field is one state field: its JSON name, its position in the struct and how writes
// combine.
type field struct {
	name    string
	index   int
	typ     reflect.Type
	reducer Reducer
	appends bool // a slice whose elements are JSON appenders (see jsonAppender)
	// plainInt: a signed integer type that encoding/json writes as its digits
	// (one with no JSON or text encoding of its own)
	plainInt bool
	// plainString: a string type that encoding/json writes as a JSON string
	// (one with no JSON or text encoding of its own)
	plainString bool
	omitEmpty   bool // tagged omitempty
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// isPlainInt reports whether encoding/json writes values of t as the digits
// of a signed integer.
func isPlainInt(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
	default:
		return false
	}
	return !encodesItself(t)
}

// isPlainString reports whether encoding/json writes values of t as JSON
// strings of their contents.
func isPlainString(t reflect.Type) bool {
	return t.Kind() == reflect.String && !encodesItself(t)
}

// encodesItself reports whether t, or a pointer to it, has a JSON or text
// encoding of its own.
func encodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonMarshalerType) || p.Implements(jsonMarshalerType) ||
		t.Implements(textMarshalerType) || p.Implements(textMarshalerType)
}

// jsonAppender is a value that appends its JSON encoding to dst, exactly as
// json.Marshal encodes it (compact, with HTML characters escaped).
// model.Message is one: the messages a step appends to a transcript are
// encoded once, without encoding/json checking and compacting each
// message's encoding again.
type jsonAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

var jsonAppenderType = reflect.TypeFor[jsonAppender]()

// appendsElems reports whether t is a slice whose elements (not pointers)
// append their own JSON.
func appendsElems(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Pointer && reflect.PointerTo(t.Elem()).Implements(jsonAppenderType)
}

// encodeField encodes a field's value as json.Marshal does.
func encodeField(f *field, v reflect.Value) ([]byte, error) {
	switch {
	case f.plainInt:
		return strconv.AppendInt(make([]byte, 0, 8), v.Int(), 10), nil
	case f.plainString:
		s := v.String()
		return jsonappend.String(make([]byte, 0, len(s)+2), s), nil
	case !f.appends || v.IsNil():
		return json.Marshal(v.Interface())
	}
	return appendField(make([]byte, 0, 256), f, v)
}

// appendField appends a field's value to b as json.Marshal encodes it.
func appendField(b []byte, f *field, v reflect.Value) ([]byte, error) {
	switch {
	case f.plainInt:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case f.plainString:
		return jsonappend.String(b, v.String()), nil
	case !f.appends || v.IsNil():
		data, err := json.Marshal(v.Interface())
		return append(b, data...), err
	}
	b = append(b, '[')
	for i := range v.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = v.Index(i).Addr().Interface().(jsonAppender).AppendJSON(b); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// plainName reports whether encoding/json takes name, from a field's tag, as
// the field's key and writes it unescaped: ASCII letters, digits, '_' and '-'.
func plainName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return name != ""
}

// appendValues appends the state value v as json.Marshal encodes it, field by
// field, so that fields whose elements append their own JSON (a transcript) are
// not checked and compacted again. It reports false if it cannot (the state
// is not flat, or a field fails to encode): the caller then uses json.Marshal,
// which gives its own error.
func (fs *fields) appendValues(b []byte, v reflect.Value) ([]byte, bool) {
	if !fs.flat {
		return b, false
	}
	b = append(b, '{')
	first := true
	for i := range fs.list {
		f := &fs.list[i]
		fv := v.Field(f.index)
		if f.omitEmpty && emptyValue(fv) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, f.name...)
		b = append(b, '"', ':')
		var err error
		if b, err = appendField(b, f, fv); err != nil {
			return b, false
		}
	}
	return append(b, '}'), true
}

// emptyValue reports whether omitempty leaves v out, as encoding/json decides.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// fields describes the fields of a state type S.
type fields struct {
	typ    reflect.Type
	list   []field
	byName map[string]*field
	// flat: encoding/json writes the state as an object of its fields in
	// order, each under its plain name, so appendValues can write it field by
	// field (no embedded fields, no tag options but omitempty, no encoding of
	// the type's own).
	flat bool
	// slices: a field is a slice (see clipped)
	slices bool
}

func describe(t reflect.Type) (*fields, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("graph state must be a struct type, not %s", t)
	}
	p := reflect.PointerTo(t)
	fs := &fields{typ: t, byName: make(map[string]*field), flat: !t.Implements(jsonMarshalerType) && !p.Implements(jsonMarshalerType) &&
		!t.Implements(textMarshalerType) && !p.Implements(textMarshalerType)}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if sf.Anonymous {
			fs.flat = false
		}
		if !sf.IsExported() {
			continue
		}
		name, opts := sf.Name, ""
		if tag, ok := sf.Tag.Lookup("json"); ok {
			n, o, _ := strings.Cut(tag, ",")
			if n == "-" {
				if o != "" {
					fs.flat = false // encoding/json writes it, named "-"
				}
				continue
			}
			if n != "" {
				name = n
			}
			opts = o
		}
		if (opts != "" && opts != "omitempty") || !plainName(name) {
			fs.flat = false
		}
		f := field{name: name, index: i, typ: sf.Type, reducer: ReplaceReducer, appends: appendsElems(sf.Type), plainInt: isPlainInt(sf.Type), plainString: isPlainString(sf.Type), omitEmpty: opts == "omitempty"}
		if tag := sf.Tag.Get("graph"); tag != "" {
			f.reducer = Reducer(tag)
		}
		if err := checkReducer(f); err != nil {
			return nil, fmt.Errorf("state field %s: %w", sf.Name, err)
		}
		if _, dup := fs.byName[name]; dup {
			return nil, fmt.Errorf("state fields share the JSON name %q", name)
		}
		fs.list = append(fs.list, f)
		fs.slices = fs.slices || sf.Type.Kind() == reflect.Slice
		fs.byName[name] = &fs.list[len(fs.list)-1]
	}
	// byName points into list; rebuild after list stopped growing.
	for i := range fs.list {
		fs.byName[fs.list[i].name] = &fs.list[i]
	}
	return fs, nil
}

func checkReducer(f field) error {
	k := f.typ.Kind()
	switch f.reducer {
	case ReplaceReducer:
		return nil
	case AppendReducer:
		if k == reflect.Slice {
			return nil
		}
	case AddReducer:
		switch k {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			return nil
		}
	case MergeReducer:
		if k == reflect.Map {
			return nil
		}
	default:
		return fmt.Errorf("unknown reducer %q (use replace, append, add or merge)", f.reducer)
	}
	return fmt.Errorf("reducer %q does not apply to a %s", f.reducer, f.typ)
}

// write is one field write as recorded: the field's JSON name and the written value.
// A write made in this process also holds the written value itself (val), which
// is applied as it is: decoding Value again would only rebuild it.
type write struct {
	Field string          `json:"f"`
	Value json.RawMessage `json:"x"`
	val   reflect.Value   // the written value, if the write was made here
}

// writesOf returns the writes an update makes: one per field that is not its zero
// value, encoded as JSON. A value that cannot be encoded is refused with the path of
// the offending value.
func (fs *fields) writesOf(update reflect.Value, who string) ([]write, error) {
	return fs.writesBy(update, who, false)
}

// writesOfNode is writesOf for a Write by node: the node is named, as
// `node "name"`, only in an error.
func (fs *fields) writesOfNode(update reflect.Value, node string) ([]write, error) {
	return fs.writesBy(update, node, true)
}

// writesBy is writesOf, with who a node's name to quote if node is set.
func (fs *fields) writesBy(update reflect.Value, who string, node bool) ([]write, error) {
	var out []write
	for i := range fs.list {
		f := &fs.list[i]
		v := update.Field(f.index)
		if v.IsZero() {
			continue
		}
		if out == nil {
			out = make([]write, 0, len(fs.list)-i) // room for every field left
		}
		data, err := encodeField(f, v)
		if err != nil {
			if node {
				who = fmt.Sprintf("node %q", who)
			}
			return nil, unencodable(who, f.name, v, err)
		}
		out = append(out, write{Field: f.name, Value: data, val: v})
	}
	return out, nil
}

// writesOfJSON returns the writes of a JSON object: one per key present. Keys that
// are not fields and values of the wrong type are refused with their path.
func (fs *fields) writesOfJSON(data []byte, who string) ([]write, error) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&obj); err != nil {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: who + " must be a JSON object of state fields: it " + jsonerr.Explain(err), Err: err}
	}
	out := make([]write, 0, len(obj))
	for _, f := range fs.list { // field order, not map order, so records are deterministic
		raw, ok := obj[f.name]
		if !ok {
			continue
		}
		delete(obj, f.name)
		if err := checkDecodes(raw, f); err != nil {
			e := &interlude.Error{Code: interlude.CodeInvalidRequest, Message: who + ": " + jsonerr.Field(f.name, err), Err: err}
			if problem := jsonerr.Explain(err); !strings.HasPrefix(problem, "field ") { // the field's own value, not one inside it
				e.Violations = []interlude.Violation{{Path: "/" + f.name, Message: problem}}
			}
			return nil, e
		}
		compact, err := compactRaw(raw) // as a write made here is encoded
		if err != nil {
			return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: who + ": " + jsonerr.Field(f.name, err), Err: err}
		}
		out = append(out, write{Field: f.name, Value: compact})
	}
	for k := range obj {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: fmt.Sprintf("%s: unknown field %q", who, k)}
	}
	return out, nil
}

// compactRaw returns raw as json.Marshal encodes it: raw itself when it is
// already so (jsonappend.Plain), without encoding/json's second reading.
func compactRaw(raw json.RawMessage) (json.RawMessage, error) {
	if raw != nil && jsonappend.Plain(raw) {
		return raw, nil
	}
	return json.Marshal(raw)
}

func checkDecodes(raw json.RawMessage, f field) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(reflect.New(f.typ).Interface())
}

// grows returns the bytes the writes append or merge into the state, as encoded.
func (fs *fields) grows(ws []write) int {
	n := 0
	for _, w := range ws {
		if f := fs.field(w.Field); f != nil && (f.reducer == AppendReducer || f.reducer == MergeReducer) {
			n += len(w.Value)
		}
	}
	return n
}

// field returns the field named name, or nil: a state of a few fields is
// searched in order, which costs less than hashing the name.
func (fs *fields) field(name string) *field {
	if len(fs.list) <= 8 {
		for i := range fs.list {
			if fs.list[i].name == name {
				return &fs.list[i]
			}
		}
		return nil
	}
	return fs.byName[name]
}

// apply applies writes to the state value dst (addressable) with each field's
// reducer.
func (fs *fields) apply(dst reflect.Value, ws []write) error {
	for _, w := range ws {
		f := fs.field(w.Field)
		if f == nil {
			return &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: fmt.Sprintf("recorded write to unknown state field %q; was the state type changed incompatibly?", w.Field)}
		}
		if w.val.IsValid() {
			reduce(dst.Field(f.index), w.val, f.reducer)
			continue
		}
		nv := reflect.New(f.typ)
		if err := json.Unmarshal(w.Value, nv.Interface()); err != nil {
			return &interlude.Error{Code: interlude.CodeInvalidUpdate, Message: "state " + jsonerr.Field(w.Field, err), Err: err}
		}
		reduce(dst.Field(f.index), nv.Elem(), f.reducer)
	}
	return nil
}

// applyToCopy applies ws to dst, a copy of a state value, leaving the original
// as it was, so that a step can be given up after its writes were combined.
// Appends to the copy's slices only write past the end of the original's (whose
// views, clipped, never reach there); a map that ws merge into is copied first.
func (fs *fields) applyToCopy(dst reflect.Value, ws []write) error {
	var copied []int
	for _, w := range ws {
		f := fs.field(w.Field)
		if f == nil || f.reducer != MergeReducer || slices.Contains(copied, f.index) {
			continue
		}
		copied = append(copied, f.index)
		if m := dst.Field(f.index); !m.IsNil() {
			c := reflect.MakeMapWithSize(m.Type(), m.Len())
			for it := m.MapRange(); it.Next(); {
				c.SetMapIndex(it.Key(), it.Value())
			}
			m.Set(c)
		}
	}
	return fs.apply(dst, ws)
}

func reduce(cur, v reflect.Value, r Reducer) {
	switch r {
	case AppendReducer:
		appendTo(cur, v)
	case AddReducer:
		switch {
		case cur.CanInt():
			cur.SetInt(cur.Int() + v.Int())
		case cur.CanUint():
			cur.SetUint(cur.Uint() + v.Uint())
		default:
			cur.SetFloat(cur.Float() + v.Float())
		}
	case MergeReducer:
		if cur.IsNil() {
			cur.Set(reflect.MakeMapWithSize(cur.Type(), v.Len()))
		}
		it := v.MapRange()
		for it.Next() {
			cur.SetMapIndex(it.Key(), it.Value())
		}
	default:
		// A written slice or map is copied, so that the state does not change
		// if the writer reuses its own.
		switch v.Kind() {
		case reflect.Slice:
			if !v.IsNil() {
				c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
				reflect.Copy(c, v)
				v = c
			}
		case reflect.Map:
			if !v.IsNil() {
				c := reflect.MakeMapWithSize(v.Type(), v.Len())
				for it := v.MapRange(); it.Next(); {
					c.SetMapIndex(it.Key(), it.Value())
				}
				v = c
			}
		}
		cur.Set(v)
	}
}

// appendTo appends the slice v to the slice cur (addressable), as
// cur.Set(reflect.AppendSlice(cur, v)) does. A few elements (a step's new
// messages) are set one by one into cur grown in place, which allocates
// nothing but the grown array; AppendSlice would allocate two slice headers
// besides.
func appendTo(cur, v reflect.Value) {
	n, m := cur.Len(), v.Len()
	if m == 0 || m > 8 || overlaps(cur, v) {
		cur.Set(reflect.AppendSlice(cur, v))
		return
	}
	cur.Grow(m)
	cur.SetLen(n + m)
	for i := range m {
		cur.Index(n + i).Set(v.Index(i))
	}
}

// overlaps reports whether the elements of slice v lie in the array of slice
// cur, so that setting them one by one could read what it has just written.
func overlaps(cur, v reflect.Value) bool {
	if cur.Cap() == 0 {
		return false
	}
	size := cur.Type().Elem().Size()
	start, end := cur.Pointer(), cur.Pointer()+uintptr(cur.Cap())*size
	vs, ve := v.Pointer(), v.Pointer()+uintptr(v.Len())*size
	return vs < end && start < ve
}

// clipped returns a copy of the state value whose slices have no spare
// capacity, so a caller appending to them cannot write into memory the
// runtime will append to. A state without slices is copied as it is.
func clipped[S any](fs *fields, s S) S {
	if !fs.slices {
		return s
	}
	v := reflect.ValueOf(&s).Elem()
	for _, f := range fs.list {
		if fv := v.Field(f.index); fv.Kind() == reflect.Slice && !fv.IsNil() {
			fv.SetCap(fv.Len())
		}
	}
	return s
}

// unencodable explains why a written value cannot be stored, naming the path of the
// offending value inside the field.
func unencodable(who, fieldName string, v reflect.Value, err error) error {
	path := fieldName
	if p := badPath(v, 0); p != "" {
		path += p
	}
	return &interlude.Error{
		Code:    interlude.CodeInvalidUpdate,
		Message: fmt.Sprintf("%s wrote state field %q, which cannot be stored as JSON at %s: %v", who, fieldName, path, err),
		Err:     err,
	}
}

// badPath finds the first value under v that JSON cannot encode and returns its
// path relative to v ("" if v itself is the culprit or none is found).
func badPath(v reflect.Value, depth int) string {
	if depth > 64 || !v.IsValid() {
		return ""
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		return badPath(v.Elem(), depth+1)
	case reflect.Float32, reflect.Float64:
		return ""
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() || sf.Tag.Get("json") == "-" {
				continue
			}
			fv := v.Field(i)
			if bad(fv) {
				name := sf.Name
				if n, _, _ := strings.Cut(sf.Tag.Get("json"), ","); n != "" {
					name = n
				}
				return "." + name + badPath(fv, depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if bad(v.Index(i)) {
				return "[" + strconv.Itoa(i) + "]" + badPath(v.Index(i), depth+1)
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if bad(it.Value()) {
				return "[" + fmt.Sprint(it.Key().Interface()) + "]" + badPath(it.Value(), depth+1)
			}
		}
	}
	return ""
}

// bad reports whether JSON cannot encode v.
func bad(v reflect.Value) bool {
	if !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		return math.IsNaN(f) || math.IsInf(f, 0)
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return true
	}
	if !v.CanInterface() {
		return false
	}
	_, err := json.Marshal(v.Interface())
	return err != nil
}
