package graph

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// exchangesFixture is a snapshot holding a thread's question-and-answer pairs,
// as one format version stores them.
func exchangesFixture() *checkpoint {
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	expires := at.Add(time.Hour)
	answered := interlude.Resolve(map[string]any{"approved": true})
	answered.By, answered.At = "alice", at.Add(time.Minute)
	return &checkpoint{
		V: store.FormatVersion, Nonce: "5f1e2d3c4b5a6978", CreatedAt: at, Values: json.RawMessage(`{"amount":70,"attempts":1}`),
		Step: 2, Status: interlude.ThreadInterrupted, Next: []string{"refund"}, Mid: true, Base: 3,
		Exchanges: []interlude.Exchange{
			{Interrupt: interlude.Interruption{ID: "int_a1", Node: "approve", Message: "Refund 70?", Reason: "approval",
				Value: json.RawMessage(`{"amount":70}`), State: json.RawMessage(`{"try":1}`), CreatedAt: at}, Resolution: &answered},
			{Interrupt: interlude.Interruption{ID: "int_b2", Node: "refund", Path: []string{"refund", "call_1"}, ToolCallID: "call_1",
				Message: "Send the money?", Reason: "tool_call", CreatedAt: at.Add(2 * time.Minute), ExpiresAt: &expires,
				Assignees: []string{"finance"}}},
		},
	}
}

// TestStoredExchangesOfEveryFormatReadAlike reads the committed snapshots of
// each format version that stores question-and-answer pairs, and checks that
// they give the same exchanges. Run with -update to write the current
// version's snapshot.
func TestStoredExchangesOfEveryFormatReadAlike(t *testing.T) {
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		data, _, err := encodeSnapshot(exchangesFixture())
		if err != nil {
			t.Fatal(err)
		}
		var pretty map[string]any
		json.Unmarshal(data, &pretty)
		data, _ = json.MarshalIndent(pretty, "", "  ")
		path := filepath.Join("testdata", fmt.Sprintf("snapshot-v%d-exchanges.json", store.FormatVersion))
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "snapshot-v*-exchanges.json"))
	if len(files) == 0 {
		t.Fatal("no golden exchange snapshots in testdata")
	}
	want, _ := json.Marshal(exchangesFixture().Exchanges)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cp, _, err := decodeSnapshot(data)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(cp.Exchanges)
			if len(cp.Exchanges) != 2 || cp.Exchanges[0].Resolution == nil || string(got) != string(want) {
				t.Fatalf("format %d reads as\n%s\nwant\n%s", cp.V, got, want)
			}
		})
	}
}
