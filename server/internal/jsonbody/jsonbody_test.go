package jsonbody

import (
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type probe struct {
	Graph  string         `json:"graph"`
	Input  jsontext.Value `json:"input"`
	Config *struct {
		ThreadID string `json:"thread_id"`
	} `json:"config"`
	List []int `json:"list"`
}

// FuzzABodyDecodesAsItsStreamDoes checks that decodeOne accepts exactly the
// bodies the streamed decoding accepts, into the same value, and refuses the
// others with the streamed decoding's error.
func FuzzABodyDecodesAsItsStreamDoes(f *testing.F) {
	for _, s := range []string{
		`{"graph":"refund","input":{"amount":150},"config":{"thread_id":"t"}}`,
		`{"graph":"a"} `, `{"graph":"a"} {}`, `{"graph":"a","graph":"b"}`, `{"nope":1}`,
		`{"input":{"a":1,"a":2}}`, `{"list":[1,2,"x"]}`, ``, `null`, `[]`, `{"graph":"\u003c"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, opts := range []jsonv2.Options{strict, lenient} {
			var fast, slow probe
			errFast, errSlow := decodeOne(body, &fast, opts), decodeStream(body, &slow, opts)
			if (errFast == nil) != (errSlow == nil) {
				t.Fatalf("%q: decodeOne: %v, streamed: %v", body, errFast, errSlow)
			}
			if errFast != nil {
				if errFast.Error() != errSlow.Error() {
					t.Fatalf("%q: decodeOne refuses with %q, streamed with %q", body, errFast, errSlow)
				}
				continue
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%q: decodeOne read %+v, streamed %+v", body, fast, slow)
			}
		}
	})
}
