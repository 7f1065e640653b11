package server

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/server/internal/httpstatus"
)

// FuzzParseRequestBody parses arbitrary bytes as the body of invoke (and stream)
// and of a thread's resume, reject and cancel. Parsing never panics; a refusal is
// a 4xx error naming a code; an accepted body parses the same way again, its input
// is a JSON object and every answer in it is well-formed JSON a question can check.
func FuzzParseRequestBody(f *testing.F) {
	for _, seed := range []string{
		`{"graph":"refund","input":{"amount":1},"config":{"thread_id":"r"}}`,
		`{"messages":[{"role":"user","content":"hi"}],"config":{"thread_id":"t"},"response_granularity":"full"}`,
		`{"resume":{"approved":true},"config":{"thread_id":"r"}}`,
		`{"resume":null}`,
		`{"responses":[{"interrupt_id":"int_1","status":"resolved","response":{"a":1}},{"interrupt_id":"int_2","status":"rejected","error":{"name":"n","message":"m"}},{"interrupt_id":"int_3","status":"cancelled"}]}`,
		`{"interrupt_id":"int_1","response":{"approved":true,"approved":false}}`,
		`{"interrupt_id":"int_1","error":{"name":"x"}}`,
		`{"responses":[]}`, `{"input":[1]}`, `{} {}`, `null`, ``, `{"config":{"thread_id":".."}}`,
		`{"responses":[{"interrupt_id":"a","status":"resolved","response":1},{"interrupt_id":"a","status":"cancelled"}]}`,
	} {
		for action := range uint8(4) {
			f.Add(action, []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, action uint8, body []byte) {
		var (
			got, again any
			answers    map[string]interlude.Resolution
			err        error
		)
		switch action % 4 {
		case 0:
			var req *invokeRequest
			if req, err = parseInvoke(body); err == nil {
				if req.kind == cmdInput && !(json.Valid(req.input) && req.input[0] == '{') {
					t.Fatalf("accepted input %q is not a JSON object", req.input)
				}
				answers, got = req.answers, req
				again, _ = parseInvoke(body)
			}
		default:
			name := [...]string{"", "resume", "reject", "cancel"}[action%4]
			var req *answerRequest
			if req, err = parseAnswer(body, name); err == nil {
				answers, got = req.answers, req
				again, _ = parseAnswer(body, name)
			}
		}
		if err != nil {
			ae, unexpected := toAPIError(err)
			var api *apiError
			if unexpected || !errors.As(err, &api) || ae.status < 400 || ae.status > 499 || ae.code == "" || ae.message == "" {
				t.Fatalf("refused with %d %q (%T %v), want a 4xx error with a code and a message", ae.status, ae.code, err, err)
			}
			return
		}
		if !reflect.DeepEqual(got, again) {
			t.Fatalf("the same body parsed twice differs: %+v then %+v", got, again)
		}
		for id, res := range answers {
			if res.Status == interlude.Resolved && !json.Valid(res.Response) {
				t.Fatalf("accepted answer to %q is not JSON: %q", id, res.Response)
			}
			if err := (interlude.Interruption{ID: "int_q"}).Check(res); err != nil {
				var ie *interlude.Error
				if !errors.As(err, &ie) || httpstatus.Of(ie.Code)/100 != 4 {
					t.Fatalf("checking an accepted answer: %v, want a 4xx *interlude.Error", err)
				}
			}
		}
	})
}
