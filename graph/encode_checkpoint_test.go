package graph

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/task"
)

// checkpointCases are checkpoints and records of waiting subgraphs as the
// runtime keeps them, and with the values that encoding/json writes in its
// own way (raw JSON to compact or escape, times in zones, odd strings).
func checkpointCases() map[string]*checkpoint {
	at := time.Date(2026, 12, 1, 23, 50, 1, 123456789, time.UTC)
	cet := at.Add(time.Hour).In(time.FixedZone("CET", 3600))
	q := interlude.Interruption{ID: "int_1", Node: "sub1", Path: []string{"sub1", "ask"}, Message: "ok?", Reason: "input_required",
		Schema: json.RawMessage(`{"type":"boolean"}`), CreatedAt: at}
	inner := &checkpoint{V: 2, Values: json.RawMessage(`{"n":0}`), Status: interlude.ThreadInterrupted, Next: []string{"ask"}, Mid: true,
		Exchanges: []interlude.Exchange{{Interrupt: q}}}
	innerJSON, _ := json.Marshal(progress{Version: 1, Checkpoint: inner})
	return map[string]*checkpoint{
		"empty":   {},
		"waiting": inner,
		"nested": {V: 2, Values: json.RawMessage(`{"n":0}`), Status: interlude.ThreadInterrupted, Next: []string{"sub1"}, Mid: true,
			Memo: task.MemoOf(map[string]json.RawMessage{"sub2\x1f\x00progress": innerJSON}), Exchanges: []interlude.Exchange{{Interrupt: q}}},
		"every field": {V: 2, Nonce: "n<1>", CreatedAt: cet, Values: json.RawMessage(`{"n":1,"s":"\u003c"}`), Step: 4, Status: interlude.ThreadFailed,
			Next: []string{"a", "b\u2028"}, Mid: true, Base: 9,
			Ledger: []ledgerEntry{{Node: "a", Writes: []write{{Field: "n", Value: json.RawMessage(`2`)}, {Field: "m", Value: nil}}}, {Node: "b"}},
			Memo:   task.MemoOf(map[string]json.RawMessage{"z": json.RawMessage(`1`), "a\x1fk": json.RawMessage(`"x"`), "m": nil, "é<": json.RawMessage(`[]`)}),
			Calls:  map[string]string{"b": "call_2", "a": "call_<1>"},
			Exchanges: []interlude.Exchange{
				{Interrupt: q, Resolution: &interlude.Resolution{Status: interlude.Resolved, Response: json.RawMessage(`true`), By: "ann", At: at}},
				{Interrupt: interlude.Interruption{ID: "int_2", Assignees: []string{"ops"}}, Resolution: &interlude.Resolution{InterruptID: "int_2", Status: interlude.Rejected, Error: &interlude.Rejection{Name: "Denied", Message: "no & never"}}},
			},
			Recent: []resolved{{ID: "int_0", R: interlude.Resolution{Status: interlude.Cancelled, At: cet}}},
			Break:  &Breakpoint{Node: "b", When: "before", Namespace: "sub1/sub2"}, Error: "node \"b\": <failed>\n"},
		"raw to compact":      {Values: json.RawMessage(" { \"n\" : 1 }"), Memo: task.MemoOf(map[string]json.RawMessage{"k": json.RawMessage("[ 1 ]")})},
		"raw to escape":       {Values: json.RawMessage(`{"s":"<b>"}`)},
		"answer to escape":    {Exchanges: []interlude.Exchange{{Interrupt: q, Resolution: &interlude.Resolution{Status: interlude.Resolved, Response: json.RawMessage(`"a & b"`)}}}},
		"write to compact":    {Ledger: []ledgerEntry{{Node: "a", Writes: []write{{Field: "n", Value: json.RawMessage(` 2`)}}}}},
		"question to compact": {Exchanges: []interlude.Exchange{{Interrupt: interlude.Interruption{ID: "q", Value: json.RawMessage(`{ "a": 1 }`)}}}},
	}
}

// A waiting subgraph's checkpoint is stored as encoding/json writes it, byte
// for byte, whatever it holds.
func TestASubgraphCheckpointIsWhatEncodingJSONWrites(t *testing.T) {
	for name, cp := range checkpointCases() {
		for _, p := range []progress{{Version: 3, Checkpoint: cp}, {Version: 0}} {
			got, _, gerr := encodeProgress(p, nil)
			want, werr := json.Marshal(p)
			if (gerr != nil) != (werr != nil) || string(got) != string(want) {
				t.Errorf("%s:\n got %s (%v)\nwant %s (%v)", name, got, gerr, want, werr)
			}
		}
	}
}

// A record that pauses for a subgraph's question, answers one, or holds
// finished tasks is stored as encoding/json writes it.
func TestPauseAndAnswerRecordsAreWhatEncodingJSONWrites(t *testing.T) {
	at := time.Date(2026, 12, 1, 23, 50, 1, 0, time.UTC)
	for name, cp := range checkpointCases() {
		d := &delta{V: 2, Nonce: cp.Nonce, Ledger: cp.Ledger, Memo: cp.Memo, Calls: cp.Calls, Status: cp.Status, Next: cp.Next, Mid: cp.Mid,
			Base: cp.Base, Step: cp.Step, Break: cp.Break, Error: cp.Error, Writes: []write{{Field: "n", Value: json.RawMessage(`1`)}}}
		for _, x := range cp.Exchanges {
			d.Raised = append(d.Raised, x.Interrupt)
			if x.Resolution != nil {
				d.Resolve = append(d.Resolve, resolved{ID: x.Interrupt.ID, R: *x.Resolution})
			}
		}
		d.Resolve = append(d.Resolve, cp.Recent...)
		d.Resolve = append(d.Resolve, resolved{ID: "int_9", R: interlude.Resolution{Status: interlude.Expired, At: at}})
		got, gerr := encodeDelta(d, nil)
		want, werr := json.Marshal(d)
		if (gerr != nil) != (werr != nil) || string(got) != string(want) {
			t.Errorf("%s:\n got %s (%v)\nwant %s (%v)", name, got, gerr, want, werr)
		}
	}
}

// TestEveryFieldOfACheckpointIsEncoded sets each field of a checkpoint in
// turn, so that a field added to it is written by hand or the test fails.
func TestEveryFieldOfACheckpointIsEncoded(t *testing.T) {
	typ := reflect.TypeFor[checkpoint]()
	for i := range typ.NumField() {
		if !typ.Field(i).IsExported() {
			continue // how it is encoded, not what
		}
		cp := &checkpoint{V: 1}
		if !fillForTest(reflect.ValueOf(cp).Elem().Field(i)) {
			t.Fatalf("field %s has a type this test cannot fill; teach fillForTest", typ.Field(i).Name)
		}
		got, _, _ := encodeProgress(progress{Checkpoint: cp}, nil)
		want, _ := json.Marshal(progress{Checkpoint: cp})
		if string(got) != string(want) {
			t.Errorf("with %s set:\ngot  %s\nwant %s", typ.Field(i).Name, got, want)
		}
	}
}

// FuzzCheckpointEncoding compares the checkpoint and record encoders with
// encoding/json on strings, raw values and times from the fuzzer.
func FuzzCheckpointEncoding(f *testing.F) {
	f.Add("n", "sub\x1f\x00progress", `{"n":1}`, `true`, "ok?", int64(0), int64(0))
	f.Add("<&>", "\u2028", ` [1, 2] `, `"<x>"`, "\xff\x01", int64(-62135596800), int64(5))
	f.Add("é", "k", `{"a":"\u00e9"}`, `nul`, "", int64(253402300800), int64(999999999))
	f.Fuzz(func(t *testing.T, s, key, raw, answer, msg string, sec, nsec int64) {
		at := time.Unix(sec, nsec).UTC()
		q := interlude.Interruption{ID: s, Node: key, Path: []string{s, key}, Message: msg, Value: json.RawMessage(raw), CreatedAt: at}
		res := &interlude.Resolution{InterruptID: s, Status: interlude.ResolutionStatus(msg), Response: json.RawMessage(answer), By: s, At: at,
			Error: &interlude.Rejection{Name: key, Message: msg}}
		cp := &checkpoint{V: 2, Nonce: s, CreatedAt: at, Values: json.RawMessage(raw), Step: int(nsec), Status: interlude.ThreadStatus(key),
			Next: []string{s, msg}, Mid: sec%2 == 0, Base: sec,
			Ledger:    []ledgerEntry{{Node: key, Writes: []write{{Field: s, Value: json.RawMessage(answer)}}}},
			Memo:      task.MemoOf(map[string]json.RawMessage{key: json.RawMessage(raw), s: json.RawMessage(answer)}),
			Calls:     map[string]string{key: s, msg: key},
			Exchanges: []interlude.Exchange{{Interrupt: q}, {Interrupt: q, Resolution: res}},
			Recent:    []resolved{{ID: s, R: *res}},
			Break:     &Breakpoint{Node: key, When: s, Namespace: msg}, Error: msg}
		p := progress{Version: sec, Checkpoint: cp}
		got, _, gerr := encodeProgress(p, nil)
		want, werr := json.Marshal(p)
		if (gerr != nil) != (werr != nil) || string(got) != string(want) {
			t.Fatalf("checkpoint:\n got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
		}
		d := &delta{V: 2, Nonce: s, Resolve: cp.Recent, Ledger: cp.Ledger, Memo: cp.Memo, Calls: cp.Calls, Raised: []interlude.Interruption{q},
			Status: cp.Status, Next: cp.Next, Mid: cp.Mid, Base: cp.Base, Step: cp.Step, Break: cp.Break, Error: cp.Error}
		got, gerr = encodeDelta(d, nil)
		want, werr = json.Marshal(d)
		if (gerr != nil) != (werr != nil) || string(got) != string(want) {
			t.Fatalf("record:\n got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
		}
	})
}

// Only the very bytes kept for a waiting subgraph are copied unchecked: a
// checkpoint under the same key read from elsewhere is written as
// encoding/json writes it.
func TestOnlyAKeptCheckpointIsCopiedUnchecked(t *testing.T) {
	key := "sub\x1f\x00progress"
	kept, _, _ := encodeProgress(progress{Version: 1, Checkpoint: checkpointCases()["waiting"]}, nil)
	spaced := json.RawMessage(" " + string(kept))
	for name, raw := range map[string]json.RawMessage{"kept": kept, "equal copy": append(json.RawMessage(nil), kept...), "spaced": spaced, "prefix": kept[:len(kept)-1]} {
		var w waitingSubgraphs
		w.put(key, "", kept, &state[struct{}]{}, nil)
		p := progress{Version: 2, Checkpoint: &checkpoint{V: 2, Memo: task.MemoOf(map[string]json.RawMessage{key: raw})}}
		got, _, gerr := encodeProgress(p, &w)
		want, werr := json.Marshal(p)
		if (gerr != nil) != (werr != nil) || string(got) != string(want) {
			t.Errorf("%s:\n got %s (%v)\nwant %s (%v)", name, got, gerr, want, werr)
		}
		d := &delta{V: 2, Memo: p.Checkpoint.Memo}
		got, gerr = encodeDelta(d, &w)
		want, werr = json.Marshal(d)
		if (gerr != nil) != (werr != nil) || string(got) != string(want) {
			t.Errorf("%s record:\n got %s (%v)\nwant %s (%v)", name, got, gerr, want, werr)
		}
	}
}

// Each encoded checkpoint is the caller's own: encoding others afterwards
// leaves it as it was written.
func TestAnEncodedSubgraphCheckpointKeepsItsBytes(t *testing.T) {
	cases := checkpointCases()
	got := map[string][]byte{}
	for name, cp := range cases {
		b, _, err := encodeProgress(progress{Version: 2, Checkpoint: cp}, nil)
		if err != nil {
			t.Fatal(name, err)
		}
		got[name] = b
	}
	for name, cp := range cases {
		want, _ := json.Marshal(progress{Version: 2, Checkpoint: cp})
		if string(got[name]) != string(want) {
			t.Errorf("%s changed after later encodings:\n got %s\nwant %s", name, got[name], want)
		}
	}
}

// A subgraph's checkpoint that refers to the questions it forwarded reads
// back as it was written once the parent's questions fill it in, and not
// without them.
func TestAForwardedCheckpointReadsBackOnlyWithItsParentsQuestions(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	ask := interlude.Interruption{ID: "int_1", Node: "ask", Path: []string{"ask"}, Message: "ok?", Reason: "input_required",
		Schema: json.RawMessage(`{"type":"boolean"}`), CreatedAt: at, Assignees: []string{"ops"}}
	answered := interlude.Interruption{ID: "int_0", Node: "ask", Path: []string{"ask", "k"}, ToolCallID: "call_1", Message: "first?", CreatedAt: at}
	res := &interlude.Resolution{Status: interlude.Resolved, Response: json.RawMessage(`true`), At: at}
	inner := &checkpoint{V: 3, Values: json.RawMessage(`{"n":0}`), Status: interlude.ThreadInterrupted, Next: []string{"ask"}, Mid: true,
		Exchanges: []interlude.Exchange{{Interrupt: answered, Resolution: res}, {Interrupt: ask}}, forwarded: true}
	data, _, err := encodeProgress(progress{Version: 1, Checkpoint: inner}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The parent's copies: under its node and path, with its task's tool call.
	parent := make([]interlude.Exchange, 2)
	for i, x := range inner.Exchanges {
		q := x.Interrupt
		q.Node, q.Path, q.ToolCallID = "sub", append([]string{"sub"}, q.Path...), "call_sub"
		parent[i] = interlude.Exchange{Interrupt: q, Resolution: x.Resolution}
	}
	var p progress
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if err := (codec[struct{}]{}).restore(&state[struct{}]{}, p.Checkpoint); !errors.Is(err, interlude.ErrUnknownFormat) {
		t.Fatalf("restoring it without its parent: %v, want an unknown format", err)
	}
	if p.Checkpoint.resolveForwarded(exchangesLookup(parent[1:])) {
		t.Fatal("it read back with a question its parent does not hold")
	}
	json.Unmarshal(data, &p)
	if !p.Checkpoint.resolveForwarded(exchangesLookup(parent)) {
		t.Fatal("it did not read back with its parent's questions")
	}
	if !reflect.DeepEqual(p.Checkpoint.Exchanges, inner.Exchanges) {
		t.Fatalf("its exchanges read back as\n%+v\nwant\n%+v", p.Checkpoint.Exchanges, inner.Exchanges)
	}
}
