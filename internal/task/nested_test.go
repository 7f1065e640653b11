package task

import (
	"strconv"
	"testing"
)

// IsNested holds exactly the id base and progress key that Nested makes, for a
// thread's own step and a nested one, at any depth of sub-task.
func TestIsNestedHoldsWhatNestedMakesAndNothingElse(t *testing.T) {
	for _, step := range []*Step{
		{Nonce: "n1", Thread: "t1", Checkpoint: 7},
		{Nested: "outer\x00base", Checkpoint: 12},
	} {
		var root Root
		s := root.Init(step, "node")
		for _, sc := range []*Scope{s, s.Sub("call", ""), s.Sub("call", "").Sub("inner", "")} {
			idBase, key := sc.Nested()
			if !sc.IsNested(idBase, key) {
				t.Errorf("%q %q: not what Nested makes", idBase, key)
			}
			for _, bad := range [][2]string{
				{idBase + "x", key}, {idBase[:len(idBase)-1], key}, {idBase, key + "x"}, {idBase, key[1:]}, {"", ""}, {idBase, ""},
			} {
				if sc.IsNested(bad[0], bad[1]) {
					t.Errorf("%q %q: taken for %q %q", bad[0], bad[1], idBase, key)
				}
			}
			for what, change := range map[string]func(*Step){
				"checkpoint": func(o *Step) { o.Checkpoint++ },
				"thread":     func(o *Step) { o.Thread += "x" },
				"nonce":      func(o *Step) { o.Nonce = "x" + o.Nonce },
				"nesting":    func(o *Step) { o.Nested += "x" },
			} {
				other := *step
				if change(&other); step.Nested != "" && other.Nested == step.Nested {
					continue // a nested step's identity is its Nested and checkpoint
				}
				if o := (&Scope{step: &other, path: sc.path}); o.IsNested(idBase, key) {
					t.Errorf("%q %q: taken for a step of another %s", idBase, key, what)
				}
			}
		}
	}
}

// Nested writes the id base and progress key in the format stored threads
// hold: a change would orphan their waiting subgraphs and change their ids.
func TestNestedKeepsItsFormat(t *testing.T) {
	for _, c := range []struct {
		step      Step
		sub       bool
		base, key string
	}{
		{Step{Nonce: "n1", Thread: "t1", Checkpoint: 7}, false, "n1\x00t1\x007\x02node", "node\x1f\x00progress"},
		{Step{Nested: "outer\x00base", Checkpoint: 12}, true, "outer\x00base\x0012\x02node\x1fcall", "node\x1fcall\x1f\x00progress"},
	} {
		var root Root
		s := root.Init(&c.step, "node")
		if c.sub {
			s = s.Sub("call", "")
		}
		if base, key := s.Nested(); base != c.base || key != c.key {
			t.Errorf("Nested() = %q, %q; want %q, %q", base, key, c.base, c.key)
		}
	}
}

// cutDecimal cuts exactly the decimal form strconv writes, and nothing else.
func TestCutDecimalCutsWhatStrconvWrites(t *testing.T) {
	for _, v := range []int64{0, 7, 10, 12, 1000, 9223372036854775807, -1, -45, -9223372036854775808} {
		n := strconv.FormatInt(v, 10)
		if rest, ok := cutDecimal("a\x00"+n, v); !ok || rest != "a\x00" {
			t.Errorf("cutDecimal(%q, %d) = %q, %v", "a\x00"+n, v, rest, ok)
		}
		for _, bad := range []string{"", "a", "x" + n[1:], n[:len(n)-1]} {
			if rest, ok := cutDecimal(bad, v); ok && rest+n != bad {
				t.Errorf("cutDecimal(%q, %d) = %q, true", bad, v, rest)
			}
		}
	}
}
