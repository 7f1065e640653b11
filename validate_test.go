package interlude_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/interludehq/interlude"
)

func TestCheckRefusesAnswersGoWouldDecodeToAnotherValue(t *testing.T) {
	approval := json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}`)
	cases := []struct {
		name    string
		schema  json.RawMessage
		answer  string
		refused bool
		path    string
	}{
		{"keys differing in case, no schema", nil, `{"approved":false,"APPROVED":true}`, true, ""},
		{"a repeated key, no schema", nil, `{"note":{"ok":1,"ok":2}}`, true, "/note"},
		{"a plain answer, no schema", nil, `{"approved":false,"note":"APPROVED"}`, false, ""},
		{"keys differing in case, with a schema", approval, `{"approved":false,"APPROVED":true}`, true, ""},
		{"a plain answer, with a schema", approval, `{"approved":true}`, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := interlude.Interruption{ID: "int_1", Schema: c.schema}
			err := q.Check(interlude.Resolve(json.RawMessage(c.answer)))
			if !c.refused {
				if err != nil {
					t.Fatalf("refused a plain answer: %v", err)
				}
				return
			}
			var ie *interlude.Error
			if !errors.Is(err, interlude.ErrInvalidResponse) || !errors.As(err, &ie) || len(ie.Violations) == 0 {
				t.Fatalf("got %v, want an invalid_response error with violations", err)
			}
			if got := ie.Violations[0].Path; got != c.path {
				t.Errorf("violation at %q, want %q (%s)", got, c.path, ie.Violations[0].Message)
			}
		})
	}
}

func TestResolveTakesBytesAsJSONTextAsInputDoes(t *testing.T) {
	approval := json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}`)
	q := interlude.Interruption{ID: "int_1", Schema: approval}
	cases := []struct {
		name   string
		answer any
		want   string
		err    error
	}{
		{"bytes of a JSON object", []byte(`{"approved": true}`), `{"approved":true}`, nil},
		{"a raw message", json.RawMessage(`{"approved":true}`), `{"approved":true}`, nil},
		{"bytes that are not JSON", []byte(`approved`), "", interlude.ErrInvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := interlude.Resolve(c.answer)
			err := q.Check(r)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("got %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if string(r.Response) != c.want {
				t.Fatalf("recorded %s, want %s", r.Response, c.want)
			}
		})
	}
}
