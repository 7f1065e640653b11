package graph

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/interludehq/interlude"
)

// A notice's payload reads as encoding/json would write it, byte for byte,
// also where a value must be compacted or escaped.
func TestNoticePayloadsAreWhatEncodingJSONWrites(t *testing.T) {
	at := time.Date(2026, 12, 3, 8, 0, 0, 123456789, time.UTC)
	exp := at.Add(time.Hour)
	q := interlude.Interruption{ID: "q1", Node: "approve", Path: []string{"outer", "approve"}, Message: "Refund <b>€12</b> & more?\n",
		Reason: "approval", CreatedAt: at, ExpiresAt: &exp, Assignees: []string{"ana", "group:ops"}, Escalations: 2,
		Name: "refund", ToolCallID: "call_1", Value: json.RawMessage(`{"amount":12}`), Schema: json.RawMessage(`{"type":"boolean"}`)}
	spaced := q
	spaced.Value = json.RawMessage(`{ "amount" : "<12>" }`)
	invalid := q
	invalid.Message = "bad \xff byte"
	r := interlude.Resolution{InterruptID: "q1", Status: interlude.Resolved, Response: json.RawMessage(`true`), By: "ana", At: at}
	spacedR := r
	spacedR.Response = json.RawMessage(` [1, 2] `)
	for _, d := range []NoticeData{
		{ThreadID: "t1", Graph: "refund", Checkpoint: 1},
		{ThreadID: "t1", Graph: "refund", Checkpoint: 2, Interrupt: &interlude.Interruption{}},
		{ThreadID: "t<1>", Graph: "refund", Checkpoint: 3, Interrupt: &q},
		{ThreadID: "t1", Graph: "refund", Checkpoint: 4, Interrupt: &q, Resolution: &r},
		{ThreadID: "t1", Graph: "refund", Checkpoint: 5, Interrupt: &spaced, Resolution: &r},
		{ThreadID: "t1", Graph: "refund", Checkpoint: 6, Interrupt: &q, Resolution: &spacedR},
		{ThreadID: "t1", Graph: "refund", Checkpoint: 7, Interrupt: &invalid},
		{ThreadID: "t1", Graph: "refund", Checkpoint: 8, Error: "node \"x\": <failed> \u2028"},
		{ThreadID: "t1", Graph: "refund", Checkpoint: 9, Interrupt: &q, Escalation: &Escalation{InterruptID: "q1", Step: 1}},
		{ThreadID: "t1", Graph: "refund", Checkpoint: 10, Interrupt: &q,
			Escalation: &Escalation{InterruptID: "q1", Step: 2, Notify: []string{"#ops"}, ReassignTo: []string{"bo"}, By: "policy <late>"}},
	} {
		got, err := encodeNoticeData(&d)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(d)
		if string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

// TestEveryFieldOfANoticePayloadIsEncoded sets each field of a payload and of
// its escalation in turn, so that a field added to either is written, never
// dropped.
func TestEveryFieldOfANoticePayloadIsEncoded(t *testing.T) {
	check := func(d *NoticeData, what string) {
		got, err := encodeNoticeData(d)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(d)
		if string(got) != string(want) {
			t.Errorf("with %s set:\ngot  %s\nwant %s", what, got, want)
		}
	}
	typ := reflect.TypeFor[NoticeData]()
	for i := range typ.NumField() {
		d := &NoticeData{}
		if !fillForTest(reflect.ValueOf(d).Elem().Field(i)) {
			t.Fatalf("field %s has a type this test cannot fill; teach fillForTest", typ.Field(i).Name)
		}
		check(d, typ.Field(i).Name)
	}
	etyp := reflect.TypeFor[Escalation]()
	for i := range etyp.NumField() {
		d := &NoticeData{Escalation: &Escalation{}}
		if !fillForTest(reflect.ValueOf(d.Escalation).Elem().Field(i)) {
			t.Fatalf("field %s has a type this test cannot fill; teach fillForTest", etyp.Field(i).Name)
		}
		check(d, "Escalation."+etyp.Field(i).Name)
	}
}
