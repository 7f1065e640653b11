package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server"
)

// hostileText sets the terminal's title, clears the screen, moves the cursor
// with a C1 CSI and reverses the text after it.
const hostileText = "\x1b]0;owned\x07\x1b[2J\u009b2J ok\r\u202eevil"

type hostileState struct {
	Text string `json:"text"`
	Done bool   `json:"done,omitempty"`
}

// hostileServer serves a graph that asks a question made of the text its
// input gives, with that text in every field of the question it can reach.
func hostileServer(t *testing.T) string {
	t.Helper()
	g := graph.New[hostileState]()
	g.AddNode("ask", func(ctx context.Context, s hostileState) (hostileState, error) {
		_, err := interlude.Interrupt(ctx, interlude.Request{
			Message: s.Text,
			Reason:  s.Text,
			Value:   map[string]any{"note": s.Text},
		})
		if err != nil {
			return hostileState{}, err
		}
		return hostileState{Done: true}, nil
	})
	g.AddEdge(graph.Start, "ask")
	compiled, err := g.Compile(graph.WithName("hostile"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.WithGraph(compiled.Erase()), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestHostileQuestionTextPrintsNoControlCharacters(t *testing.T) {
	url := hostileServer(t)
	asJSON := `"` + strings.NewReplacer("\x1b", `\u001b`, "\x07", `\u0007`, "\r", `\r`).Replace(hostileText) + `"`
	steps := []struct {
		args      []string
		showsText bool
	}{
		{[]string{"run", "hostile", `{"text": ` + asJSON + `}`, "--thread", "t1"}, true},
		{[]string{"show", "t1"}, true},
		{[]string{"threads", "--status", "interrupted"}, true},
		{[]string{"resume", "t1", asJSON}, true},
		{[]string{"show", "t1"}, true},
		{[]string{"resume", "t1", "--id", "int_unknown", "true"}, false},
	}
	for _, st := range steps {
		_, out, errOut := inProcess(append(st.args, "--server", url)...)
		printed := out + errOut
		for _, bad := range []string{"\x1b", "\x07", "\r", "\u009b", "\u202e"} {
			if strings.Contains(printed, bad) {
				t.Errorf("%v printed %q:\n%s", st.args, bad, printed)
			}
		}
		// Questions show the text escaped, values as JSON escapes it; both keep
		// what JSON leaves raw escaped too.
		if st.showsText && (!strings.Contains(printed, `[2J\u009b2J ok`) || !strings.Contains(printed, `\u202eevil`)) {
			t.Errorf("%v does not show the text escaped:\n%s", st.args, printed)
		}
	}
}
