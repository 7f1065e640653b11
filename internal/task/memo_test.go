package task

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// A Memo is encoded, in a struct or alone, as encoding/json encodes a map of
// its entries, whatever their number, and decodes back to the same entries.
func TestMemoIsEncodedAsAMapOfItsEntries(t *testing.T) {
	type holder struct {
		Memo Memo `json:"memo,omitzero"`
	}
	type mapHolder struct {
		Memo map[string]json.RawMessage `json:"memo,omitempty"`
	}
	for _, m := range []map[string]json.RawMessage{
		nil,
		{},
		{"a\x1fk": json.RawMessage(`{"x": [1, 2]}`)},
		{"<é>": nil},
		{"z": json.RawMessage(`1`), "a": json.RawMessage(`"x"`), "m": json.RawMessage(`null`)},
	} {
		want, err := json.Marshal(mapHolder{maps.Clone(m)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(holder{MemoOf(maps.Clone(m))})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("memo %v is encoded as\n%s\nwhere a map is\n%s", m, got, want)
		}
		var back holder
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		var wantBack mapHolder
		if err := json.Unmarshal(want, &wantBack); err != nil {
			t.Fatal(err)
		}
		if back.Memo.Len() != len(wantBack.Memo) {
			t.Fatalf("memo %s decodes to %d entries, want %d", got, back.Memo.Len(), len(wantBack.Memo))
		}
		for k, v := range wantBack.Memo {
			if g, ok := back.Memo.Get(k); !ok || string(g) != string(v) {
				t.Fatalf("memo %s decodes %q as %s, want %s", got, k, g, v)
			}
		}
	}
}

// A Memo keeps every entry set, the last under each key, and yields them
// sorted by key, as its one slot gives way to a map.
func TestMemoKeepsEveryEntrySet(t *testing.T) {
	var m Memo
	if m.Len() != 0 || !m.IsZero() {
		t.Fatalf("the zero memo holds %d entries", m.Len())
	}
	m.Set("b", json.RawMessage(`1`))
	m.Set("b", json.RawMessage(`2`))
	if v, ok := m.Get("b"); !ok || string(v) != "2" || m.Len() != 1 {
		t.Fatalf("after setting b twice, b is %s (%v) of %d entries", v, ok, m.Len())
	}
	if _, ok := m.Get("a"); ok {
		t.Fatal("a memo of b holds a")
	}
	m.Set("a", json.RawMessage(`3`))
	m.Set("c", json.RawMessage(`4`))
	var keys, vals []string
	for k, v := range m.Sorted() {
		keys, vals = append(keys, k), append(vals, string(v))
	}
	if !slices.Equal(keys, []string{"a", "b", "c"}) || !slices.Equal(vals, []string{"3", "2", "4"}) {
		t.Fatalf("the memo yields %v: %v", keys, vals)
	}
	for k, v := range m.All() {
		m.Set(k, append(json.RawMessage(`-`), v...))
	}
	if v, _ := m.Get("b"); string(v) != "-2" || m.Len() != 3 {
		t.Fatalf("after setting each entry as it is yielded, b is %s of %d entries", v, m.Len())
	}
	var nilMemo *Memo
	if _, ok := nilMemo.Get("a"); ok || nilMemo.Len() != 0 {
		t.Fatal("a nil memo holds entries")
	}
}
