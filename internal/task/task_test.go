package task

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
)

// TestInterruptIDsStayWhatTheyWere checks that interrupt ids are the ones
// stored threads hold: "int_" and the first 12 bytes of the SHA-256 of the
// step's identity, the task path and the call's slot, for top-level and nested
// steps, named and positional calls.
func TestInterruptIDsStayWhatTheyWere(t *testing.T) {
	reference := func(base string, path []string, slot string) string {
		h := sha256.New()
		h.Write([]byte(base))
		for _, p := range path {
			h.Write([]byte{0})
			h.Write([]byte(p))
		}
		h.Write([]byte{1})
		h.Write([]byte(slot))
		return "int_" + hex.EncodeToString(h.Sum(nil)[:12])
	}
	cases := []struct {
		name string
		step Step
		sub  []string
	}{
		{"top level", Step{Nonce: "a1b2c3d4e5f60708", Thread: "thread-1", Checkpoint: 7}, nil},
		{"nested", Step{Nested: "a1b2\x00t\x003\x00tools", Checkpoint: 12}, nil},
		{"sub-task", Step{Nonce: "n", Thread: "t", Checkpoint: 0}, []string{"call_1"}},
		{"long thread id", Step{Nonce: "n", Thread: strings.Repeat("x", 300), Checkpoint: 1 << 40}, []string{"a", "b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(&c.step, "review")
			path := []string{"review"}
			for _, k := range c.sub {
				s = s.Sub(k, "")
				path = append(path, k)
			}
			base := c.step.Nonce + "\x00" + c.step.Thread + "\x00" + strconv.FormatInt(c.step.Checkpoint, 10)
			if c.step.Nested != "" {
				base = c.step.Nested + "\x00" + strconv.FormatInt(c.step.Checkpoint, 10)
			}
			if got := c.step.IDBase(); got != base {
				t.Fatalf("IDBase() = %q, want %q", got, base)
			}
			for i, slot := range []string{"pos:0", "name:approve", "pos:1"} {
				name := ""
				if i == 1 {
					name = "approve"
				}
				got, err := s.NextID(name)
				if err != nil {
					t.Fatal(err)
				}
				if want := reference(base, path, slot); got != want || ID(base, path, slot) != want {
					t.Fatalf("id of %s = %q (ID gives %q), want %q", slot, got, ID(base, path, slot), want)
				}
			}
		})
	}
}
