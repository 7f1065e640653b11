package client

import (
	"context"
	"strings"
	"testing"
)

func TestReadSSEJoinsDataLinesSkipsCommentsAndKeepsTheLastID(t *testing.T) {
	in := ": hello\r\n\r\nevent: updates\r\ndata: {\"a\":\r\ndata: 1}\r\nid: 7\r\n\r\ndata:{\"b\":2}\n\nevent: end\nid\ndata: {}\n\n: trailing\n"
	var got []Event
	readSSE(context.Background(), strings.NewReader(in), func(e Event, err error) bool {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
		return true
	})
	want := []Event{
		{ID: "7", Event: "updates", Data: []byte("{\"a\":\n1}")},
		{ID: "7", Event: "message", Data: []byte(`{"b":2}`)},
		{ID: "", Event: "end", Data: []byte(`{}`)},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events: %+v", len(got), got)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Event != want[i].Event || string(got[i].Data) != string(want[i].Data) {
			t.Errorf("event %d = %+v (%s), want %+v (%s)", i, got[i], got[i].Data, want[i], want[i].Data)
		}
	}
}

func TestReadNDJSONYieldsEachLineAndStopsOnGarbage(t *testing.T) {
	in := "{\"event\":\"metadata\",\"data\":{\"x\":1}}\n\n{\"event\":\"end\",\"data\":{}}\nnot json\n{\"event\":\"never\",\"data\":{}}\n"
	var evs []string
	var errs int
	readNDJSON(context.Background(), strings.NewReader(in), func(e Event, err error) bool {
		if err != nil {
			errs++
			return true
		}
		evs = append(evs, e.Event)
		return true
	})
	if strings.Join(evs, ",") != "metadata,end" || errs != 1 {
		t.Fatalf("events %v, %d errors", evs, errs)
	}
}
