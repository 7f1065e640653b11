package graph

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store/memory"
)

type nestedN struct {
	N int `json:"n"`
}

// keptBytes lists, outermost first, the memo entries of st and of the
// subgraphs kept below it, with the bytes their kept entries hold.
func keptBytes(t *testing.T, st *state[nestedN]) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for e := &st.waiting.one; e.st != nil; {
		if v, _ := st.memo.Get(e.key); !sameBytes(v, e.raw) {
			t.Fatalf("the memo entry of %q is not the kept bytes", e.key)
		}
		out = append(out, e.raw)
		st = &e.st.(*nestedRun[nestedN]).st
		e = &st.waiting.one
	}
	return out
}

// A pause three subgraphs down keeps each level's checkpoint inside the
// record the top level stored, byte for byte, and other pauses encoded later
// leave those bytes as they were.
func TestANestedPauseKeepsEveryLevelInsideTheStoredRecord(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	g := New[nestedN]()
	g.AddNode("ask", func(ctx context.Context, s nestedN) (nestedN, error) {
		if _, err := interlude.Interrupt(ctx, interlude.Request{Message: "ok?"}); err != nil {
			return s, err
		}
		return nestedN{N: s.N + 1}, nil
	})
	g.AddEdge(Start, "ask")
	app, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for l := 1; l <= 3; l++ {
		w := New[nestedN]()
		w.AddNode("sub"+strconv.Itoa(l), SubgraphNode(app, func(s nestedN) nestedN { return s }, func(_ nestedN, out nestedN) nestedN { return out }))
		w.AddEdge(Start, "sub"+strconv.Itoa(l))
		var opts []Option
		if l == 3 {
			opts = append(opts, WithStore(mem))
		}
		if app, err = w.Compile(opts...); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := app.Invoke(ctx, "a", Input(nestedN{})); err != nil || res.Status != interlude.RunInterrupted {
		t.Fatal(err, res)
	}
	c, ok := app.cache.take("a")
	if !ok {
		t.Fatal("the thread is not cached")
	}
	levels := keptBytes(t, c.st)
	if len(levels) != 3 {
		t.Fatalf("%d levels kept, want 3", len(levels))
	}
	for i := 1; i < len(levels); i++ {
		if _, ok := movedTo(levels[i], levels[i-1], levels[i-1]); !ok {
			t.Errorf("level %d's checkpoint does not lie in level %d's", i+1, i)
		}
	}
	recs, err := mem.Records(ctx, "a", 0, 0, 0)
	if err != nil || len(recs) == 0 {
		t.Fatal(err, recs)
	}
	var last struct {
		Memo map[string]json.RawMessage `json:"memo"`
	}
	if err := json.Unmarshal(recs[len(recs)-1].Data, &last); err != nil {
		t.Fatal(err)
	}
	if got := string(levels[0]); got != string(last.Memo[c.st.waiting.one.key]) {
		t.Fatalf("the kept checkpoint is\n%s\nthe record holds\n%s", got, last.Memo[c.st.waiting.one.key])
	}
	was := make([]string, len(levels))
	for i, b := range levels {
		was[i] = string(b)
	}
	app.cache.put(c)
	for i := range 20 {
		if _, err := app.Invoke(ctx, "other"+strconv.Itoa(i), Input(nestedN{})); err != nil {
			t.Fatal(err)
		}
	}
	for i, b := range levels {
		if string(b) != was[i] {
			t.Errorf("level %d's kept checkpoint changed after other pauses:\n%s\nwas\n%s", i+1, b, was[i])
		}
	}
	if res, err := app.Invoke(ctx, "a", Resume(interlude.Resolve(true))); err != nil || res.Values.N != 1 {
		t.Fatal(err, res)
	}
}
