package graph_test

import (
	"context"
	"strings"
	"testing"

	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store/memory"
)

type growingState struct {
	Lines []string `json:"lines" graph:"append"`
	Note  string   `json:"note,omitempty"`
}

// A conversation that only grows is rebuilt from its records, so its turns do
// not write ever larger snapshots; a state whose fields are replaced still gets
// snapshots, so loading it does not replay every record.
func TestAGrowingConversationIsNotSnapshottedAgainAndAgain(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		input     func(i int) growingState
		snapshots bool
	}{
		{"appended", func(i int) growingState { return growingState{Lines: []string{strings.Repeat("x", 200)}} }, false},
		{"replaced", func(i int) growingState { return growingState{Note: strings.Repeat(string(rune('a'+i%26)), 1000)} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := memory.New()
			b := graph.New[growingState]()
			b.AddNode("noop", func(context.Context, growingState) (growingState, error) { return growingState{}, nil })
			b.AddEdge(graph.Start, "noop")
			b.AddEdge("noop", graph.End)
			g, err := b.Compile(graph.WithStore(st))
			if err != nil {
				t.Fatal(err)
			}
			const turns = 300
			for i := range turns {
				if _, err := g.Invoke(ctx, "t", graph.Input(tc.input(i))); err != nil {
					t.Fatal(err)
				}
			}
			l, err := st.Load(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Snapshot != nil; got != tc.snapshots {
				t.Errorf("snapshot stored: %v, want %v", got, tc.snapshots)
			}
			// A fresh graph (no cached state) reads the same state back.
			g2, _ := b.Compile(graph.WithStore(st))
			s, err := g2.State(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.input(turns - 1).Note; s.Values.Note != want || (!tc.snapshots && len(s.Values.Lines) != turns) {
				t.Errorf("read back %d lines, note %.3q...; want %d lines, note %.3q...", len(s.Values.Lines), s.Values.Note, turns, want)
			}
		})
	}
}
