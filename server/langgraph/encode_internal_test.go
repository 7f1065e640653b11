package langgraph

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/interludehq/interlude"
)

// TestRunRecordsAndEventsEncodeAsEncodingJSONDoes checks that the run
// records and events written field by field are the bytes encoding/json
// writes for them, whatever the run holds.
func TestRunRecordsAndEventsEncodeAsEncodingJSONDoes(t *testing.T) {
	at := time.Date(2026, 12, 2, 8, 30, 1, 123456789, time.UTC)
	zoned := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", -5*3600-30*60))
	cmd := &command{Resume: json.RawMessage(`{"approved":true}`)}
	// kw is what the kwargs of a case's run are made of.
	type kw struct {
		b         runCreate
		modes     []string
		temporary bool
	}
	cases := []struct {
		name   string
		o      runObject
		kw     *kw // nil: a run without kwargs
		out    json.RawMessage
		direct bool // written field by field, not by encoding/json
	}{
		{"a waited run with input", runObject{RunID: "r1", ThreadID: "t1", AssistantID: "a1", Metadata: map[string]any{}, Status: "success",
			Multitask: "reject", CreatedAt: at, UpdatedAt: at}, &kw{b: runCreate{Input: json.RawMessage(`{"amount":150}`)}, modes: []string{"values"}},
			json.RawMessage(`{"__interrupt__":[{"id":"x","value":1}],"amount":150}`), true},
		{"a resume with metadata and config", runObject{RunID: "r-2", ThreadID: "t:2@x", AssistantID: "a", Metadata: map[string]any{"b": 1.5, "a": []any{"x", nil}, "<&>": "\u2028"},
			Status: "running", Multitask: "enqueue", CreatedAt: zoned, UpdatedAt: at},
			&kw{b: runCreate{Command: cmd, Config: map[string]any{"configurable": map[string]any{"k": "v"}}, Context: map[string]any{},
				StreamSubgraphs: true, StreamResumable: true}, modes: []string{"updates", "values"}, temporary: true}, nil, true},
		{"values that are not compact", runObject{RunID: "r3", ThreadID: "t3", Status: "error", CreatedAt: at, UpdatedAt: at},
			&kw{b: runCreate{Input: json.RawMessage(`{ "a" : "<b>" }`), Command: &command{Update: json.RawMessage(` [ ["f", 1] ]`)}}},
			json.RawMessage(`{"a": 1}`), false},
		{"no kwargs nor metadata", runObject{RunID: "r4", ThreadID: "t4"}, nil, json.RawMessage(`{"x":"\u0026"}`), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if k := c.kw; k != nil {
				c.o.Kwargs = kwargsOf(&k.b, k.modes, k.temporary)
				want, _ := json.Marshal(map[string]any{"input": k.b.Input, "command": k.b.Command, "config": k.b.Config, "context": k.b.Context,
					"stream_mode": k.modes, "temporary": k.temporary, "subgraphs": k.b.StreamSubgraphs, "resumable": k.b.StreamResumable})
				if string(c.o.Kwargs) != string(want) {
					t.Fatalf("kwargs\n got %s\nwant %s", c.o.Kwargs, want)
				}
			}
			want, err := json.Marshal(storedRun{Run: c.o, Output: c.out})
			if err != nil {
				t.Fatal(err)
			}
			d, err := runDocument(c.o, c.out)
			if err != nil {
				t.Fatal(err)
			}
			if string(d.Data) != string(want) {
				t.Fatalf("record\n got %s\nwant %s", d.Data, want)
			}
			if _, direct := appendStoredRun(nil, c.o, c.out); direct != c.direct {
				t.Errorf("written field by field: %v, want %v", direct, c.direct)
			}
		})
	}
	for _, ids := range [][2]string{{"r1", "t1"}, {"0d6f-…", "a<b>&c\u2028"}} {
		ru := &run{ID: ids[0], ThreadID: ids[1]}
		want, _ := json.Marshal(map[string]any{"run_id": ru.ID, "thread_id": ru.ThreadID, "attempt": 1})
		if got := metadataEvent(ru); string(got) != string(want) {
			t.Errorf("metadata event\n got %s\nwant %s", got, want)
		}
	}
}

// outputByMap is a run's output as encoding/json writes it from a map, which
// outputOf must match.
func outputByMap(values, interrupts json.RawMessage) string {
	out := map[string]json.RawMessage{}
	if json.Unmarshal(values, &out); out == nil { // values null
		out = map[string]json.RawMessage{}
	}
	if interrupts != nil {
		out[interruptKey] = interrupts
	}
	data, _ := json.Marshal(out)
	return string(data)
}

var outputSeeds = []string{
	`{"amount":150,"attempts":1}`,
	`{"amount":150,"attempts":2,"outcome":"refunded"}`,
	`{}`,
	`{"A":1,"Z":[1,{"b":2}],"_":null,"a":"x,}]"}`,
	`{"b":1,"a":2}`,
	`{"Amount":150,"Z":1}`,
	`{"":""}`,
	`{"a":1,"a":2}`,
	`{"a": 1}`,
	`{"a":"<b>"}`,
	`{"a":"\u2028"}`,
	`{"a\"b":1}`,
	`{"a\u0062":1}`,
	`{"__interrupt__":1,"b":2}`,
	`{"zz":{"__interrupt__":1}}`,
	`{"a":"\\","b":"\"}"}`,
	`{"ok":"€"}`,
	`{"k":"` + "\xff" + `"}`,
	"{\"\xff\":1}",
	`[1,2]`,
	`null`,
	``,
	`{"a":1}x`,
}

// TestRunOutputsEncodeAsEncodingJSONDoes checks that a run's output, with
// and without interrupts, is what encoding/json writes from the map of its
// fields, whatever the values hold.
func TestRunOutputsEncodeAsEncodingJSONDoes(t *testing.T) {
	direct := 0
	for _, v := range outputSeeds {
		for _, in := range []json.RawMessage{nil, json.RawMessage(`[{"id":"x","value":{"message":"ok?"}}]`)} {
			if got, want := string(outputOf(json.RawMessage(v), in)), outputByMap(json.RawMessage(v), in); got != want {
				t.Errorf("values %s, interrupts %s:\n got %s\nwant %s", v, in, got, want)
			}
		}
		if _, ok := canonicalObject(json.RawMessage(v), interruptKey); ok {
			direct++
		}
	}
	if direct < 4 {
		t.Errorf("%d of the values were copied as they are; the refund graph's at least should be", direct)
	}
}

func FuzzRunOutputsEncodeAsEncodingJSONDoes(f *testing.F) {
	for _, v := range outputSeeds {
		f.Add(v, true)
	}
	f.Fuzz(func(t *testing.T, v string, paused bool) {
		var in json.RawMessage
		if paused {
			in = json.RawMessage(`[{"id":"x"}]`)
		}
		if got, want := string(outputOf(json.RawMessage(v), in)), outputByMap(json.RawMessage(v), in); got != want {
			t.Errorf("values %q, interrupts %s:\n got %s\nwant %s", v, in, got, want)
		}
	})
}

// TestACreatedThreadEncodesAsEncodingJSONDoes checks that a thread just
// created, written field by field, is the bytes encoding/json writes for it,
// and that any other thread is left to encoding/json.
func TestACreatedThreadEncodesAsEncodingJSONDoes(t *testing.T) {
	at := time.Date(2026, 12, 2, 8, 30, 1, 123456789, time.UTC)
	zoned := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", -5*3600-30*60))
	empty := func(id string, created, updated time.Time, status string) thread {
		return thread{ThreadID: id, CreatedAt: created, UpdatedAt: updated, StateUpdatedAt: updated, Metadata: map[string]any{}, Status: status,
			Config: map[string]any{}, Interrupts: map[string][]lgInterrupt{}}
	}
	for _, th := range []thread{empty("0d6f1c2e-1111-4222-8333-944445555666", at, at, "idle"), empty("a<b>&c\u2028", zoned, at, "busy")} {
		want, _ := json.Marshal(th)
		got, ok := appendEmptyThread(nil, &th)
		if !ok || string(got) != string(want) {
			t.Errorf("thread (written: %v)\n got %s\nwant %s", ok, got, want)
		}
	}
	withMetadata := empty("t", at, at, "idle")
	withMetadata.Metadata = map[string]any{"a": 1}
	withValues := empty("t", at, at, "idle")
	withValues.Values = json.RawMessage(`{}`)
	outOfRange := empty("t", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), at, "idle")
	for _, th := range []thread{withMetadata, withValues, outOfRange, {ThreadID: "t"}} {
		if got, ok := appendEmptyThread(nil, &th); ok {
			t.Errorf("%+v was written field by field: %s", th, got)
		}
	}
}

// TestAResumeSkippedAsAMapIsNoMapOfIDs checks that every resume value
// mayBeKeyed lets through undecoded is one the decoding would not have taken
// for a map of interrupt ids either.
func TestAResumeSkippedAsAMapIsNoMapOfIDs(t *testing.T) {
	for _, v := range []string{
		`{"approved": true}`, ` { "approved" : true }`, `{"int_1": 1}`, `{"int_1": 1, "approved": 2}`, `{"approved": 1, "int_1": 2}`,
		`{"0123456789abcdef0123456789abcdef": {"approved": true}}`, `{"\u0069nt_1": 1}`, `{"in\"t": 1}`, `{}`, `[]`, `"int_1"`, `true`, `null`,
		`{"int_` + "\xff" + `": 1}`, `{"` + "\xff" + `int_": 1}`, `{"approved": tru}`, `{"approved"`, `{"`, ``,
	} {
		var keyed map[string]json.RawMessage
		decoded := json.Unmarshal([]byte(v), &keyed) == nil && len(keyed) > 0 && looksLikeIDs(keyed)
		if !mayBeKeyed(json.RawMessage(v)) && decoded {
			t.Errorf("%q is a map of interrupt ids, but mayBeKeyed skips it", v)
		}
	}
}

// TestPausedRunsInterruptsEncodeAsEncodingJSONDoes checks that the
// interrupts of a paused run's output, written field by field, are the bytes
// encoding/json writes for them, and that what is not written so (tool
// approvals, values that are not compact) is left to it.
func TestPausedRunsInterruptsEncodeAsEncodingJSONDoes(t *testing.T) {
	h := &Handler{formats: map[string]InterruptFormat{}}
	plain := interlude.Interruption{ID: "int_1", Node: "approve", Message: "Approve a refund of 150?", Reason: "input_required",
		Value: json.RawMessage(`{"amount":150}`), Schema: json.RawMessage(`{"type":"object"}`)}
	escaped := interlude.Interruption{ID: "int_<2>", Node: "n", Message: "a \"quoted\" <b>&\u2028 question\n", Reason: "r"}
	loose := interlude.Interruption{ID: "int_3", Node: "n", Message: "m", Value: json.RawMessage(`{ "a" : 1 }`)}
	approval := interlude.Interruption{ID: "int_4", Node: "tools", Message: "run it?", Reason: interlude.ReasonToolApproval, ToolCallID: "call_1",
		Value: json.RawMessage(`{"tool":"refund","tool_call_id":"call_1","arguments":{"amount":1}}`)}
	cases := []struct {
		name    string
		pending []interlude.Interruption
		direct  bool
	}{
		{"none", nil, true},
		{"one question", []interlude.Interruption{plain}, true},
		{"questions with escapes", []interlude.Interruption{plain, escaped}, true},
		{"a value that is not compact", []interlude.Interruption{plain, loose}, false},
		{"a tool approval", []interlude.Interruption{plain, approval}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := json.Marshal(flat(h.group("g", c.pending)))
			if err != nil {
				t.Fatal(err)
			}
			got, direct := appendInterrupts([]byte("x"), c.pending)
			if direct != c.direct {
				t.Fatalf("written field by field: %v, want %v", direct, c.direct)
			}
			if !direct {
				if string(got) != "x" {
					t.Fatalf("a refusal left %q, want the slice as it was", got)
				}
				return
			}
			if string(got) != "x"+string(want) {
				t.Fatalf("interrupts\n got %s\nwant %s", got[1:], want)
			}
		})
	}
}
