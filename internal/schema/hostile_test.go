package schema

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// listSchema asks for an approval and a list of objects with integer ids.
const listSchema = `{"type":"object","properties":{"approved":{"type":"boolean"},"items":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}}},"required":["approved"]}`

// choiceSchema asks for a list of nodes, each one of three shapes, two of them
// holding more nodes: every failing node fails every branch.
const choiceSchema = `{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/$defs/node"}}},"$defs":{"node":{"anyOf":[{"type":"string","maxLength":3},{"type":"object","properties":{"id":{"type":"integer"},"tags":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["id"]},{"type":"array","maxItems":2,"items":{"$ref":"#/$defs/node"}}]}}}`

// hostile builds a document of about size bytes crafted to fail in many places:
// "items" has thousands of failing list items, "keys" thousands of repeated keys,
// "nesting" repeated keys under deep nesting, "choice" thousands of nodes failing
// every branch of an anyOf.
func hostile(kind string, size int) []byte {
	var b strings.Builder
	switch kind {
	case "items":
		b.WriteString(`{"approved":true,"items":[1`)
		for b.Len() < size-2 {
			b.WriteString(`,1`)
		}
		b.WriteString(`]}`)
	case "keys":
		b.WriteString(`{"approved":true`)
		for i := 0; b.Len() < size-1; i++ {
			fmt.Fprintf(&b, `,"k%d":1,"K%d":1`, i, i)
		}
		b.WriteString(`}`)
	case "nesting":
		depth := MaxDepth - 1
		b.WriteString(strings.Repeat(`{"a":`, depth) + `{"k":1`)
		for b.Len() < size-depth-1 {
			b.WriteString(`,"k":1`)
		}
		b.WriteString(`}` + strings.Repeat(`}`, depth))
	case "choice":
		b.WriteString(`{"items":[{"id":"x","tags":[true]}`)
		for b.Len() < size-2 {
			b.WriteString(`,{"id":"x","tags":[true]}`)
		}
		b.WriteString(`]}`)
	default:
		panic("no hostile document " + kind)
	}
	return []byte(b.String())
}

func mustCompile(t testing.TB, raw string) *Schema {
	t.Helper()
	s, err := Compile([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestValidateDescribesTheFirstViolationsAndCountsTheRest(t *testing.T) {
	cases := []struct {
		kind, schema string
		size         int
		total        int // 0: at least MaxViolations+1
	}{
		{"items", listSchema, 4 << 10, 0},
		{"keys", listSchema, 4 << 10, 0},
		{"nesting", listSchema, 4 << 10, 0},
		{"choice", choiceSchema, 4 << 10, 0},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			s := mustCompile(t, c.schema)
			data := hostile(c.kind, c.size)
			got, total := s.Validate(data)
			all, allTotal := s.ValidateN(data, math.MaxInt)
			if total <= MaxViolations || total != allTotal || len(all) != total {
				t.Fatalf("total = %d, ValidateN total %d with %d described; want more than %d, all equal", total, allTotal, len(all), MaxViolations)
			}
			if len(got) != MaxViolations {
				t.Fatalf("described %d violations, want %d", len(got), MaxViolations)
			}
			// The described ones are the first of all of them in path order.
			if !slices.IsSortedFunc(all, func(a, b Violation) int { return strings.Compare(a.Path, b.Path) }) {
				t.Fatalf("violations are not ordered by path: %v", all[:MaxViolations])
			}
			if !slices.Equal(got, all[:MaxViolations]) {
				t.Fatalf("described %v\nwant the first of all: %v", got, all[:MaxViolations])
			}
		})
	}
}

func TestAmbiguousKeysDescribesTheFirstRepeatsAndCountsTheRest(t *testing.T) {
	data := []byte(`{"items":[{` + strings.Repeat(`"a":1,`, 100) + `"a":1}]}`)
	vs, total := AmbiguousKeys(data)
	if total != 100 || len(vs) != MaxViolations {
		t.Fatalf("AmbiguousKeys described %d of %d, want %d of 100", len(vs), total, MaxViolations)
	}
	for _, v := range vs {
		if v.Path != "/items/0" || v.Message != `key "a" appears twice; send it once` {
			t.Fatalf("violation %+v, want key \"a\" at /items/0", v)
		}
	}
}

func TestValidateRefusesValuesNestedTooDeeply(t *testing.T) {
	s := mustCompile(t, `{}`)
	nest := func(depth int) []byte {
		return []byte(strings.Repeat(`[`, depth) + strings.Repeat(`]`, depth))
	}
	if vs, total := s.Validate(nest(MaxDepth)); total != 0 {
		t.Fatalf("%d levels refused: %v", MaxDepth, vs)
	}
	vs, total := s.Validate(nest(MaxDepth + 1))
	if total != 1 || !strings.Contains(vs[0].Message, "nested more than 64 levels") || vs[0].Path != strings.Repeat("/0", MaxDepth) {
		t.Fatalf("%d levels: %d violations %v, want one saying it is nested too deeply", MaxDepth+1, total, vs)
	}
	// Deeper than encoding/json would read is refused the same way.
	if _, total := s.Validate(nest(100000)); total != 1 {
		t.Fatalf("100000 levels: %d violations, want 1", total)
	}
}

func TestValidateRefusesValuesHoldingTooManyValues(t *testing.T) {
	s := mustCompile(t, `{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"boolean"}]}}`)
	list := func(n int) []byte {
		return []byte("[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]")
	}
	// The array counts as one value: MaxValues-1 items fit, one more does not.
	if vs, total := s.Validate(list(MaxValues - 1)); total < MaxValues-1 || strings.Contains(vs[0].Message, "values") {
		t.Fatalf("%d items: %d violations %v, want the items checked against the schema", MaxValues-1, total, vs)
	}
	vs, total := s.Validate(list(MaxValues))
	if total != 1 || !strings.Contains(vs[0].Message, "holds more than 10000 values") {
		t.Fatalf("%d items: %d violations %v, want one saying the value is too large", MaxValues, total, vs)
	}
}

func TestValidateRefusesNumbersTooCostlyToCheck(t *testing.T) {
	s := mustCompile(t, `{"type":"array","items":{"type":"integer","multipleOf":3}}`)
	cases := []struct {
		doc   string
		total int
	}{
		{`[3, 3e2, 3E+2, 6e400, 3.0, -0.3e1, 1e-400, 3e0400]`, 1}, // only 1e-400 is no integer
		{`[1e401, 1e-401, 1e99999999, 3e+0000000000001]`, 3},
		{`[` + strings.Repeat("3", 101) + `]`, 1},
	}
	for _, c := range cases {
		vs, total := s.Validate([]byte(c.doc))
		if total != c.total {
			t.Errorf("%s: %d violations %v, want %d", c.doc, total, vs, c.total)
		}
	}
	// The violation is placed at the number, also when it is the whole document.
	for doc, path := range map[string]string{`1e999`: "", `[0,{"a":[1e999]}]`: "/1/a/0"} {
		if vs, _ := s.Validate([]byte(doc)); len(vs) != 1 || vs[0].Path != path || !strings.Contains(vs[0].Message, "too long or too large") {
			t.Errorf("%s: violations %v, want one at %q", doc, vs, path)
		}
	}
}

func TestViolationsNamingHugeKeysStaySmall(t *testing.T) {
	key := strings.Repeat("é", 50000)
	s := mustCompile(t, `{"type":"object","additionalProperties":false}`)
	for _, doc := range []string{
		`{"` + key + `":1,"` + key + `":2}`,
		`{"` + key + `":1}`,
		`{"` + key + `":{"` + key + `":[[[[[]]]]]}}`,
	} {
		vs, total := s.Validate([]byte(doc))
		if total != 1 {
			t.Fatalf("%d violations, want 1", total)
		}
		if v := vs[0]; len(v.Path) > maxText+len("…") || len(v.Message) > maxText+len("…") || !strings.HasSuffix(v.Message, "…") {
			t.Fatalf("violation of %d+%d bytes, want each at most %d ending in …", len(v.Path), len(v.Message), maxText)
		}
	}
}

func TestComparePointersOrdersAsTheirStrings(t *testing.T) {
	locs := [][]string{nil, {""}, {"a"}, {"a", ""}, {"a", "b"}, {"ab"}, {"a~"}, {"a/"}, {"a/b"}, {"a", "~"}, {"10"}, {"2"}, {"1", "0"}, {"1"}, {"~1"}, {"-"}, {"a.", "x"}, {"é"}}
	for _, a := range locs {
		for _, b := range locs {
			if got, want := comparePointers(a, b), strings.Compare(pointer(a), pointer(b)); sign(got) != want {
				t.Errorf("comparePointers(%q, %q) = %d, want %d (%q vs %q)", a, b, got, want, pointer(a), pointer(b))
			}
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// BenchmarkValidateHostileAnswer measures refusing documents built to fail in many
// places; time and allocations per byte stay flat as the size grows.
func BenchmarkValidateHostileAnswer(b *testing.B) {
	schemas := map[string]string{"items": listSchema, "keys": listSchema, "nesting": listSchema, "choice": choiceSchema}
	for _, kind := range []string{"items", "keys", "nesting", "choice"} {
		s := mustCompile(b, schemas[kind])
		for _, size := range []int{64 << 10, 256 << 10, 1 << 20} {
			data := hostile(kind, size)
			b.Run(fmt.Sprintf("%s/%dKiB", kind, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if vs, total := s.Validate(data); total == 0 || len(vs) > MaxViolations {
						b.Fatalf("%d of %d violations", len(vs), total)
					}
				}
			})
		}
	}
}
