package task

import "testing"

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
			other := *step
			other.Checkpoint++
			if o := (&Scope{step: &other, path: sc.path}); o.IsNested(idBase, key) {
				t.Errorf("%q %q: taken for a step of another checkpoint", idBase, key)
			}
		}
	}
}
