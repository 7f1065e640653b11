package jsonerr

import (
	"encoding/json"
	"strings"
	"testing"
)

type block struct {
	Text string `json:"text"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

func TestDecodingErrorsAreWordedInJSONTerms(t *testing.T) {
	cases := []struct {
		name, data string
		into       any
		explain    string
	}{
		{"a string for a number", `"150"`, new(float64), "must be a number, got a string"},
		{"a fraction for a whole number", `1.5`, new(int), "must be a whole number, got the number 1.5"},
		{"an array for an object", `[1]`, new(map[string]json.RawMessage), "must be an object, got an array"},
		{"an object for an array", `{}`, new([]int), "must be an array, got an object"},
		{"a number for a boolean", `1`, new(bool), "must be true or false, got a number"},
		{"a field of a struct", `{"role": 1}`, new(message), `field "role" must be a string, got a number`},
		{"a field in a list", `{"content": [{"text": 5}]}`, new(message), `field "text" must be a string, got a number`},
		{"a string for a list", `{"content": "hi"}`, new(message), `field "content" must be an array, got a string`},
		{"broken JSON", `{"a": }`, new(any), "is not valid JSON: invalid character '}' looking for beginning of value (at byte 7)"},
		{"nothing", ``, new(any), "is empty or cut short"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(c.data), c.into)
			if c.data == "" {
				err = json.NewDecoder(strings.NewReader("")).Decode(c.into)
			}
			if err == nil {
				t.Fatal("no error")
			}
			got := Explain(err)
			if got != c.explain {
				t.Errorf("Explain = %q, want %q (from %q)", got, c.explain, err)
			}
			for _, bad := range []string{"Go ", "float64", "map[", "interface", "jsonerr.", "json:"} {
				if strings.Contains(got, bad) {
					t.Errorf("Explain shows %q: %s", bad, got)
				}
			}
		})
	}
}

func TestFieldNamesTheFieldAndTheOneInside(t *testing.T) {
	var f float64
	err := json.Unmarshal([]byte(`"x"`), &f)
	if got, want := Field("amount", err), `field "amount" must be a number, got a string`; got != want {
		t.Errorf("Field = %q, want %q", got, want)
	}
	var ms []message
	err = json.Unmarshal([]byte(`[{"content": [{"text": 5}]}]`), &ms)
	if got, want := Field("messages", err), `field "text" in "messages" must be a string, got a number`; got != want {
		t.Errorf("Field = %q, want %q", got, want)
	}
}
