package tool

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"
)

type flatIn struct {
	OrderID string  `json:"order_id"`
	Amount  float64 `json:"amount,omitempty"`
	Count   int     `json:"count"`
	Small   int8    `json:"small"`
	Big     uint64  `json:"big"`
	Ratio   float32 `json:"ratio"`
	Urgent  bool    `json:"urgent"`
	Note    string
	Skipped string `json:"-"`
	hidden  string //nolint:unused // encoding/json ignores it, and so must the decoder
}

// decodesAsUnmarshalDoes fails t if the flat decoder takes data and gives
// another value than json.Unmarshal, or takes data json.Unmarshal refuses.
func decodesAsUnmarshalDoes(t *testing.T, fa *flatArgs, data string) bool {
	t.Helper()
	var want flatIn
	err := json.Unmarshal([]byte(data), &want)
	var got flatIn
	if !fa.decode([]byte(data), unsafe.Pointer(&got)) {
		return false
	}
	if err != nil {
		t.Fatalf("%s: decoded, but json.Unmarshal refuses it: %v", data, err)
	}
	if got != want {
		t.Fatalf("%s: decoded as %+v, json.Unmarshal gives %+v", data, got, want)
	}
	return true
}

func TestFlatArgumentsDecodeAsUnmarshalDoes(t *testing.T) {
	fa := flatArgsOf(reflect.TypeFor[flatIn]())
	if fa == nil {
		t.Fatal("a struct of strings, numbers and booleans gets no flat decoder")
	}
	for _, data := range []string{
		`{}`, ` { } `, `{"order_id":"1","amount":10}`, `{"order_id":"1","amount":10.5e-3,"count":-3,"small":127,"big":18446744073709551615,"ratio":0.1,"urgent":true,"Note":"n"}`,
		"{\n\t\"order_id\" : \"x\" ,\r\n \"urgent\":false}", `{"order_id":null,"count":null}`, `{"order_id":"a","order_id":"b"}`,
	} {
		if !decodesAsUnmarshalDoes(t, fa, data) {
			t.Errorf("%s is left to json.Unmarshal; want it decoded", data)
		}
	}
	for _, data := range []string{
		``, `[]`, `{`, `{"order_id":"1"`, `{"order_id":"1",}`, `{"order_id":"1"} x`, `{"order_id":1}`, `{"count":1.5}`, `{"count":1e2}`,
		`{"small":128}`, `{"big":-1}`, `{"ratio":1e39}`, `{"amount":01}`, `{"amount":1.}`, `{"amount":-}`, `{"amount":.5}`, `{"amount":0x10}`,
		`{"urgent":"true"}`, `{"urgent":tru}`, `{"order_id":"\u0041"}`, `{"order_id":"é"}`, `{"ORDER_ID":"1"}`, `{"note":"n"}`, `{"other":1}`,
		`{"Skipped":"s"}`, `{"hidden":"h"}`, `{"order_id":nullx}`, `{"order_id":["1"]}`,
	} {
		decodesAsUnmarshalDoes(t, fa, data)
	}
}

func FuzzFlatArgumentsDecodeAsUnmarshalDoes(f *testing.F) {
	for _, s := range []string{`{"order_id":"1","amount":10}`, `{"count":-0,"small":1e1}`, `{"urgent":true,"Note":"x"}`, `{"ratio":3.4e38}`} {
		f.Add(s)
	}
	fa := flatArgsOf(reflect.TypeFor[flatIn]())
	f.Fuzz(func(t *testing.T, data string) { decodesAsUnmarshalDoes(t, fa, data) })
}

func TestInputTypesTheFlatDecoderLeavesToUnmarshal(t *testing.T) {
	type nested struct{ A struct{ B string } }
	type pointer struct{ A *string }
	type quoted struct {
		N int `json:"n,string"`
	}
	type folded struct {
		A string `json:"a"`
		B string `json:"A"`
	}
	type Embedded struct{ A string }
	type embeds struct{ Embedded }
	type decoder struct{ T json.Number }
	for _, typ := range []reflect.Type{reflect.TypeFor[nested](), reflect.TypeFor[pointer](), reflect.TypeFor[quoted](),
		reflect.TypeFor[folded](), reflect.TypeFor[embeds](), reflect.TypeFor[decoder](), reflect.TypeFor[map[string]any](), reflect.TypeFor[[]int]()} {
		if flatArgsOf(typ) != nil {
			t.Errorf("%s gets a flat decoder; want it left to json.Unmarshal", typ)
		}
	}
}
