package graph

import (
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// fuzzState has a reducer field, so deltas exercise merging as well as decoding.
type fuzzState struct {
	Items []string `json:"items,omitempty" graph:"append"`
	N     int      `json:"n,omitempty"`
}

// FuzzLoadStoredRecords feeds arbitrary bytes as a thread's snapshot and as a
// record after it. Loading never panics, and whatever it refuses is an
// *interlude.Error with a code a caller can match; a format this build does not
// know is refused as unknown_format with a message naming the format.
func FuzzLoadStoredRecords(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"v":1,"values":{"items":["a"],"n":1},"step":1,"status":"idle"}`, `{"v":1,"input":{"items":["b"]}}`},
		{`{"v":1}`, `{"v":1,"status":"interrupted"}`},
		{`{"v":2,"values":{}}`, `{"v":99}`},
		{`{"v":0}`, `{"v":-1}`},
		{`{"v":1,"values":{"items":"no"}}`, `{"v":1,"reset":{"v":1,"values":{"n":"x"}}}`},
		{"\x01" + deflate(`{"v":1,"values":{"n":2}}`), `not json`},
		{"\x01garbage", ``},
		{``, `{"v":1,"update":{"items":[1]}}`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	g, err := New[fuzzState]().AddNode("n", func(ctx context.Context, s fuzzState) (fuzzState, error) { return s, nil }).
		AddEdge(Start, "n").Compile()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, snap, rec []byte) {
		l := &store.Loaded{Snapshot: &store.Snapshot{Version: 1, Format: store.FormatVersion, Data: snap}}
		if len(rec) > 0 {
			l.Records = []store.Record{{Version: 2, Format: store.FormatVersion, Kind: "step", Data: rec}}
		}
		_, _, err := g.codec.load(l)
		if err == nil {
			return
		}
		var ie *interlude.Error
		if !errors.As(err, &ie) || ie.Code == "" || ie.Message == "" {
			t.Fatalf("load refused with %T %v, want an *interlude.Error with a code and a message", err, err)
		}
		if ie.Code == interlude.CodeUnknownFormat && strings.Contains(ie.Message, "has format") && !strings.Contains(ie.Message, "this build reads 1 to") {
			t.Fatalf("an unknown format is refused without saying which formats are read: %v", err)
		}
	})
}

func deflate(s string) string {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestSpeed)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}
