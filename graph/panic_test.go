package graph_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store/memory"
)

type panicState struct {
	Items []int `json:"items" graph:"append"`
}

func TestNodePanicFailsWithOneLineErrorAndKeepsStackInProcess(t *testing.T) {
	cases := []struct {
		name  string
		panic func(s panicState)
		want  string // the error Invoke returns and the thread stores
		value func(v any) bool
	}{
		{"runtime error", func(s panicState) { _ = s.Items[len(s.Items)-1] },
			`node "boom": panic: runtime error: index out of range [-1]`,
			func(v any) bool { _, ok := v.(interface{ RuntimeError() }); return ok }},
		{"multi-line string", func(panicState) { panic("first line\nsecond line\r\n") },
			`node "boom": panic: first line second line`,
			func(v any) bool { return v == "first line\nsecond line\r\n" }},
		{"error value", func(panicState) { panic(io.ErrUnexpectedEOF) },
			`node "boom": panic: unexpected EOF`,
			func(v any) bool { return v == io.ErrUnexpectedEOF }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st := memory.New()
			build := func() *graph.Graph[panicState] {
				g := graph.New[panicState]()
				g.AddNode("boom", func(ctx context.Context, s panicState) (panicState, error) {
					c.panic(s)
					return panicState{}, nil
				})
				g.AddEdge(graph.Start, "boom")
				app, err := g.Compile(graph.WithStore(st))
				if err != nil {
					t.Fatal(err)
				}
				return app
			}
			res, err := build().Invoke(ctx, "t", graph.Input(panicState{}))
			if err == nil || err.Error() != c.want {
				t.Fatalf("err = %q, want %q", err, c.want)
			}
			var pe *graph.PanicError
			if !errors.As(err, &pe) || !c.value(pe.Value) {
				t.Fatalf("errors.As(*PanicError) on %v: value %#v", err, pe)
			}
			if !bytes.Contains(pe.Stack, []byte("goroutine ")) || !bytes.Contains(pe.Stack, []byte("panic_test.go")) {
				t.Fatalf("the stack is not kept for the process:\n%s", pe.Stack)
			}
			var ie *interlude.Error
			if errors.As(err, &ie) {
				t.Fatalf("a panic took interlude code %q", ie.Code)
			}
			if res.Status != interlude.RunFailed || res.Error != c.want {
				t.Fatalf("result: %s %q", res.Status, res.Error)
			}
			snap, err := build().State(ctx, "t") // a fresh graph reads the stored error
			if err != nil || snap.Error != c.want {
				t.Fatalf("stored error %q (%v), want %q", snap.Error, err, c.want)
			}
			var end graph.Event
			var streamErr error
			for e, err := range build().Stream(ctx, "t", graph.Continue()) {
				if err != nil {
					streamErr = err
				} else if e.Type == graph.EventEnd {
					end = e
				}
			}
			if !errors.As(streamErr, &pe) || streamErr.Error() != c.want || end.Error != c.want || strings.Contains(end.Error, "\n") {
				t.Fatalf("stream: err %q, end event error %q", streamErr, end.Error)
			}
		})
	}
}
