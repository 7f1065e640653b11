package graph

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/interludehq/interlude"
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
		if v.Type() != reflect.TypeFor[time.Time]() {
			return false
		}
		v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 23, 50, 1, 5, time.UTC)))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("k"), reflect.Zero(v.Type().Elem()))
		v.Set(m)
	default:
		return false
	}
	return true
}
