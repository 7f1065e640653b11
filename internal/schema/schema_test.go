package schema

import (
	"reflect"
	"strings"
	"testing"
)

func TestValidateReportsEveryViolationWithItsPath(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"approved":{"type":"boolean"},"amount":{"type":"number","maximum":100}},"required":["approved"]}`))
	if err != nil {
		t.Fatal(err)
	}
	runValidateCases(t, s, []validateCase{
		{"valid", `{"approved":true,"amount":5}`, nil},
		{"missing required", `{}`, []Violation{{Path: ""}}},
		{"wrong type and too large", `{"approved":"yes","amount":500}`, []Violation{{Path: "/amount"}, {Path: "/approved"}}},
		{"not json", `{`, []Violation{{Path: ""}}},
	})
}

// validateCase is a document and the violations Validate should find in it: the
// same paths in order, each with a message, and the same message where one is given.
type validateCase struct {
	name string
	doc  string
	want []Violation
}

// runValidateCases validates each case's document against s in a subtest of t.
func runValidateCases(t *testing.T, s *Schema, cases []validateCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, total := s.Validate([]byte(c.doc))
			if total != len(got) {
				t.Errorf("total = %d, want %d", total, len(got))
			}
			if len(got) != len(c.want) {
				t.Fatalf("violations = %+v, want %+v", got, c.want)
			}
			for i, v := range got {
				if w := c.want[i]; v.Path != w.Path || v.Message == "" || (w.Message != "" && v.Message != w.Message) {
					t.Errorf("violation %d = %+v, want %+v", i, v, w)
				}
			}
		})
	}
}

func TestCompileRefusesExternalReferences(t *testing.T) {
	_, err := Compile([]byte(`{"$ref":"http://127.0.0.1:1/x.json"}`))
	if err == nil || !strings.Contains(err.Error(), "external references") {
		t.Fatalf("err = %v, want refusal of external reference", err)
	}
}

func TestCompileRefusesInvalidSchema(t *testing.T) {
	if _, err := Compile([]byte(`{"type":"nonsense"}`)); err == nil {
		t.Fatal("want error for an invalid schema")
	}
}

func TestCompileCachesByBytes(t *testing.T) {
	a, _ := Compile([]byte(`{"type":"boolean"}`))
	b, _ := Compile([]byte(`{"type":"boolean"}`))
	if a != b {
		t.Fatal("same document compiled twice")
	}
}

type node struct {
	Name     string `json:"name"`
	Children []node `json:"children,omitempty"`
}

func TestForHandlesRecursiveTypes(t *testing.T) {
	raw, err := For(reflect.TypeFor[node]())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if vs, _ := s.Validate([]byte(`{"name":"a","children":[{"name":"b","children":[{"name":7}]}]}`)); len(vs) != 1 || vs[0].Path != "/children/0/children/0/name" {
		t.Fatalf("violations = %v (schema %s)", vs, raw)
	}
}

func TestForInlinesPlainStructs(t *testing.T) {
	type args struct {
		OrderID string `json:"order_id"`
	}
	raw, _ := For(reflect.TypeFor[args]())
	if strings.Contains(string(raw), "$ref") {
		t.Fatalf("schema of a plain struct uses references: %s", raw)
	}
}
