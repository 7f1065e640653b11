package graph

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/task"
)

// A step's record reads as encoding/json would write it, byte for byte.
func TestStepRecordsAreWhatEncodingJSONWrites(t *testing.T) {
	ws := []write{{Field: "messages", Value: json.RawMessage(`["a","\u003cb\u003e"]`)}, {Field: "turns", Value: json.RawMessage(`1`)}}
	for _, d := range []*delta{
		{V: 1},
		{V: 1, Nonce: "n1", Input: ws, Writes: ws, Status: interlude.ThreadRunning, Next: []string{"model", "tools"}, Step: 3},
		{V: 1, Writes: ws[:1], Mid: true, Base: 7, Step: 2, Error: "node \"x\": <failed> \u00e9\n"},
		{V: 1, Status: interlude.ThreadFailed, Next: []string{"ü"}, Error: "e"},
	} {
		got, err := encodeDelta(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(d)
		if string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

// TestEveryFieldOfAStepRecordIsEncoded sets each field of a record in turn, so
// that a field added to the record is either written by hand or sent through
// encoding/json, never dropped.
func TestEveryFieldOfAStepRecordIsEncoded(t *testing.T) {
	typ := reflect.TypeFor[delta]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Tag.Get("json") == "-" {
			continue
		}
		d := &delta{V: 1}
		v := reflect.ValueOf(d).Elem().Field(i)
		if !fillForTest(v) {
			t.Fatalf("field %s has a type this test cannot fill; teach fillForTest", f.Name)
		}
		got, err := encodeDelta(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(d)
		if string(got) != string(want) {
			t.Errorf("with %s set:\ngot  %s\nwant %s", f.Name, got, want)
		}
	}
}

// fillForTest sets v to a value that is not empty, and reports whether it could.
func fillForTest(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(2)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		if v.Type().Elem().Kind() == reflect.Uint8 { // raw JSON
			s = reflect.ValueOf([]byte(`1`)).Convert(v.Type())
		} else if v.Type().Elem() == reflect.TypeFor[write]() {
			s.Index(0).Set(reflect.ValueOf(write{Field: "f", Value: json.RawMessage(`1`)}))
		}
		v.Set(s)
	case reflect.Struct:
		switch v.Type() {
		case reflect.TypeFor[time.Time]():
			v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 23, 50, 1, 5, time.UTC)))
		case reflect.TypeFor[task.Memo]():
			v.Set(reflect.ValueOf(task.MemoOf(map[string]json.RawMessage{"k": nil})))
		default:
			return false
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("k"), reflect.Zero(v.Type().Elem()))
		v.Set(m)
	default:
		return false
	}
	return true
}

type textCount int

func (c textCount) MarshalText() ([]byte, error) { return []byte("n" + strconv.Itoa(int(c))), nil }

type jsonCount int8

func (c *jsonCount) MarshalJSON() ([]byte, error) { return []byte(`{"n":1}`), nil }

// A state field's write is encoded as encoding/json encodes the field's value,
// whatever the integer type and its own encodings.
func TestIntegerWritesAreWhatEncodingJSONWrites(t *testing.T) {
	type state struct {
		A int            `json:"a"`
		B int8           `json:"b"`
		C int64          `json:"c" graph:"add"`
		D textCount      `json:"d"`
		E jsonCount      `json:"e"`
		F uint16         `json:"f"`
		G []jsonCount    `json:"g"`
		H map[string]int `json:"h"`
	}
	fs, err := describe(reflect.TypeFor[state]())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []state{
		{A: -1, B: -128, C: math.MaxInt64, D: 7, E: 3, F: 65535, G: []jsonCount{1}, H: map[string]int{"x": 1}},
		{A: math.MinInt64, B: 127, C: math.MinInt64, D: -2, E: -1, F: 1},
	} {
		writesAreWhatEncodingJSONWrites(t, fs, reflect.ValueOf(s))
	}
}

// textLabel is a string type with a text encoding of its own.
type textLabel string

func (l textLabel) MarshalText() ([]byte, error) { return []byte("label:" + string(l)), nil }

// A string field's write is encoded as encoding/json encodes the field's value:
// escapes, invalid UTF-8 and the type's own encoding included.
func TestStringWritesAreWhatEncodingJSONWrites(t *testing.T) {
	type name string
	type state struct {
		A string    `json:"a"`
		B name      `json:"b"`
		C textLabel `json:"c"`
		D string    `json:"d,omitempty"`
		E string    `json:"e,string"`
	}
	fs, err := describe(reflect.TypeFor[state]())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []state{
		{A: "refunded", B: "<b>&</b>", C: "x", D: "\u2028\u2029 \"q\" \\ \n\t\x01", E: "\xff\xfe é"},
		{A: "", B: "", C: "", D: "", E: ""},
	} {
		writesAreWhatEncodingJSONWrites(t, fs, reflect.ValueOf(s))
	}
}

// Appending a step's writes to a slice field gives what reflect.AppendSlice
// gives, the capacity included, whether the elements are few or many and
// whether or not they lie in the field's own array.
func TestAppendedWritesAreWhatAppendGives(t *testing.T) {
	// Each case makes its slices afresh from an array of 3 elements and room
	// for 2 more, so that both ways of appending start from the same memory.
	cases := map[string]func(b []int) (cur, in []int){
		"to nil":    func(b []int) ([]int, []int) { return nil, []int{1} },
		"nothing":   func(b []int) ([]int, []int) { return b[:2], nil },
		"in room":   func(b []int) ([]int, []int) { return b[:3], []int{9, 8} },
		"growing":   func(b []int) ([]int, []int) { return b[:3], []int{9, 8, 7} },
		"many":      func(b []int) ([]int, []int) { return b[:1], []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} },
		"itself":    func(b []int) ([]int, []int) { return b[:3], b[:3] },
		"its tail":  func(b []int) ([]int, []int) { return b[:1], b[1:3] },
		"its spare": func(b []int) ([]int, []int) { return b[:3], b[3:5] },
	}
	fresh := func() []int { b := make([]int, 5); copy(b, []int{1, 2, 3, 4, 5}); return b[:3] }
	for name, slicesOf := range cases {
		t.Run(name, func(t *testing.T) {
			cur, in := slicesOf(fresh())
			want := reflect.AppendSlice(reflect.ValueOf(cur), reflect.ValueOf(in)).Interface().([]int)
			cur, in = slicesOf(fresh())
			appendTo(reflect.ValueOf(&cur).Elem(), reflect.ValueOf(in))
			if !slices.Equal(cur, want) || cap(cur) != cap(want) {
				t.Errorf("got %v (cap %d), want %v (cap %d)", cur, cap(cur), want, cap(want))
			}
		})
	}
}

// appendedNote appends its own JSON, as model.Message does.
type appendedNote struct {
	Text string `json:"text"`
}

func (n *appendedNote) AppendJSON(dst []byte) ([]byte, error) {
	data, err := json.Marshal(*n)
	return append(dst, data...), err
}

type ownEncoding struct {
	N int `json:"n"`
}

func (o ownEncoding) MarshalJSON() ([]byte, error) { return []byte(`"own"`), nil }

type embeddedPart struct {
	X int `json:"x"`
}

// A state is encoded as encoding/json encodes it, byte for byte, whether it is
// written field by field or left to encoding/json (embedded fields, tag
// options, keys encoding/json escapes or does not take, an encoding of its own).
func TestStateValuesAreWhatEncodingJSONWrites(t *testing.T) {
	type flat struct {
		Notes   []appendedNote    `json:"notes" graph:"append"`
		Count   int               `json:"count,omitempty" graph:"add"`
		Seen    map[string]string `json:"seen,omitempty" graph:"merge"`
		Name    string            `json:"name,omitempty"`
		On      bool              `json:"on,omitempty"`
		Ratio   float64           `json:"ratio,omitempty"`
		Ptr     *int              `json:"ptr,omitempty"`
		Any     any               `json:"any,omitempty"`
		Text    textCount         `json:"text"`
		Plain   string
		Skipped string `json:"-"`
		hidden  int
	}
	type embedded struct {
		embeddedPart
		N int `json:"n"`
	}
	type options struct {
		N int    `json:"n,string"`
		D string `json:"-,"`
		K string `json:"a<b"`
	}
	one := 1
	check := func(t *testing.T, v any) {
		t.Helper()
		fs, err := describe(reflect.TypeOf(v))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(v)
		got, ok := fs.appendValues(nil, reflect.ValueOf(v))
		if !ok {
			got, _ = json.Marshal(v)
		}
		if string(got) != string(want) {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	for _, v := range []flat{
		{},
		{Notes: []appendedNote{{"a<b>"}, {"c"}}, Count: -3, Seen: map[string]string{"z": "1", "a": "2"}, Name: "n", On: true,
			Ratio: 0.5, Ptr: &one, Any: []int{1}, Text: 4, Plain: "p", Skipped: "s", hidden: 2},
		{Notes: []appendedNote{}, Seen: map[string]string{}, Any: 0},
	} {
		check(t, v)
	}
	check(t, embedded{embeddedPart{1}, 2})
	check(t, options{N: 3, D: "d", K: "k"})
	check(t, ownEncoding{N: 1})
	for _, typ := range []reflect.Type{reflect.TypeFor[embedded](), reflect.TypeFor[options](), reflect.TypeFor[ownEncoding]()} {
		if fs, err := describe(typ); err == nil && fs.flat {
			t.Errorf("%s is written field by field", typ)
		}
	}
	if fs, _ := describe(reflect.TypeFor[flat]()); !fs.flat {
		t.Error("a state of plain fields is left to encoding/json")
	}
}

// writesAreWhatEncodingJSONWrites checks that each of v's writes holds what
// encoding/json writes for its field.
func writesAreWhatEncodingJSONWrites(t *testing.T, fs *fields, v reflect.Value) {
	t.Helper()
	ws, err := fs.writesOf(v, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		want, _ := json.Marshal(v.Field(fs.byName[w.Field].index).Interface())
		if string(w.Value) != string(want) {
			t.Errorf("field %s: got %s, want %s", w.Field, w.Value, want)
		}
	}
}

// An update event's object of writes reads as json.Marshal writes the map of
// the writes, each field with its last value, byte for byte.
func TestUpdateObjectsAreWhatEncodingJSONWrites(t *testing.T) {
	many := make([]write, 10)
	for i := range many {
		many[i] = write{Field: "f" + strconv.Itoa(9-i), Value: json.RawMessage(strconv.Itoa(i))}
	}
	for _, ws := range [][]write{
		nil,
		{{Field: "outcome", Value: json.RawMessage(`"refunded"`)}},
		{{Field: "b", Value: json.RawMessage(`1`)}, {Field: "a", Value: json.RawMessage(`{"x":[true,null]}`)}, {Field: "b", Value: json.RawMessage(`2`)}},
		{{Field: "<&>\u2028", Value: json.RawMessage(`"<b>"`)}, {Field: "z", Value: nil}},
		{{Field: "a", Value: json.RawMessage(`{ "spaced" : 1 }`)}},
		many,
	} {
		obj := make(map[string]json.RawMessage, len(ws))
		for _, w := range ws {
			obj[w.Field] = w.Value
		}
		want, _ := json.Marshal(obj)
		if got := writesObject(ws); string(got) != string(want) {
			t.Errorf("%v:\n got %s\nwant %s", ws, got, want)
		}
	}
}

// A write of an input's field is the field's value as json.Marshal writes it.
func TestInputWritesAreWhatEncodingJSONWrites(t *testing.T) {
	for _, raw := range []string{`150`, `"a"`, `{"a":[1,2]}`, `{ "a" : 1 }`, `"<&>"`, `null`} {
		want, err := json.Marshal(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		got, err := compactRaw(json.RawMessage(raw))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: got %s, %v; want %s", raw, got, err, want)
		}
	}
}
