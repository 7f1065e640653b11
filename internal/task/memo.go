package task

import (
	"encoding/json"
	"iter"
	"slices"
)

// Memo holds the recorded results of a step's finished sub-tasks, as JSON by
// ledger key. A held step usually records one (the run of the subgraph it
// calls, a tool call), which a Memo keeps in a slot of its own: building,
// ranging over and looking up a map of one entry costs more than the entry.
// It is encoded as the JSON object of its entries, as a map is.
//
// The zero Memo is empty. A copy of a Memo with more than one entry shares
// their map with the original: a Memo is handed on, not shared.
type Memo struct {
	one bool            // key and val hold the only entry
	key string          // the only entry's key, if one
	val json.RawMessage // the only entry's value, if one
	m   map[string]json.RawMessage
}

// MemoOf returns a Memo of the entries of m, which it may keep.
func MemoOf(m map[string]json.RawMessage) Memo {
	var memo Memo
	if len(m) == 1 {
		for k, v := range m {
			memo.Set(k, v)
		}
	} else if len(m) > 1 {
		memo.m = m
	}
	return memo
}

// Len counts the entries of m (none if m is nil).
func (m *Memo) Len() int {
	switch {
	case m == nil:
		return 0
	case m.one:
		return 1
	}
	return len(m.m)
}

// IsZero reports whether m has no entry, for encoding/json's omitzero.
func (m Memo) IsZero() bool { return m.Len() == 0 }

// Get returns the entry under key (none if m is nil).
func (m *Memo) Get(key string) (json.RawMessage, bool) {
	switch {
	case m == nil:
		return nil, false
	case m.one:
		if m.key == key {
			return m.val, true
		}
		return nil, false
	}
	v, ok := m.m[key]
	return v, ok
}

// Set makes v the entry under key.
func (m *Memo) Set(key string, v json.RawMessage) {
	switch {
	case m.one && m.key == key:
		m.val = v
	case m.one:
		m.m = map[string]json.RawMessage{m.key: m.val, key: v}
		m.one, m.key, m.val = false, "", nil
	case m.m == nil:
		m.one, m.key, m.val = true, key, v
	default:
		m.m[key] = v
	}
}

// All yields the entries of m in no particular order. The loop may Set the
// entry it is given.
func (m *Memo) All() iter.Seq2[string, json.RawMessage] {
	return func(yield func(string, json.RawMessage) bool) {
		if m.one {
			yield(m.key, m.val)
			return
		}
		for k, v := range m.m {
			if !yield(k, v) {
				return
			}
		}
	}
}

// Sorted yields the entries of m in the order of their keys.
func (m *Memo) Sorted() iter.Seq2[string, json.RawMessage] {
	return func(yield func(string, json.RawMessage) bool) {
		if m.one {
			yield(m.key, m.val)
			return
		}
		keys := make([]string, 0, len(m.m))
		for k := range m.m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !yield(k, m.m[k]) {
				return
			}
		}
	}
}

// MarshalJSON encodes m as the JSON object of its entries, as encoding/json
// encodes a map of them.
func (m Memo) MarshalJSON() ([]byte, error) {
	if m.one {
		return json.Marshal(map[string]json.RawMessage{m.key: m.val})
	}
	return json.Marshal(m.m)
}

// UnmarshalJSON decodes a JSON object of entries (or null, for none).
func (m *Memo) UnmarshalJSON(data []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	*m = MemoOf(all)
	return nil
}
