package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/store/memory"
)

type order struct {
	Item string `json:"item"`
	Qty  int    `json:"qty,omitempty"`
}

func TestInputIsRefusedForAFieldTheStateLacksOrANewThreadNeeds(t *testing.T) {
	g := graph.New[order]()
	g.AddNode("take", func(ctx context.Context, o order) (order, error) { return o, nil })
	g.AddEdge(graph.Start, "take")
	app, err := g.Compile(graph.WithName("orders"), graph.WithStore(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, host.WithGraph(app.Erase()))
	raw := func(keys ...string) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for _, k := range keys {
			m[k] = json.RawMessage(`1`)
		}
		return m
	}
	for _, c := range []struct {
		name   string
		fields map[string]json.RawMessage
		fresh  bool
		path   string // of the refused field, "" when accepted
	}{
		{"every field", raw("item", "qty"), true, ""},
		{"an unknown field", raw("item", "qyt"), false, "/qyt"},
		{"a new thread without its required field", raw("qty"), true, "/item"},
		{"an existing thread needs no field", raw("qty"), false, ""},
	} {
		err := h.CheckInput("orders", c.fields, c.fresh)
		var ie *interlude.Error
		switch {
		case c.path == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.path != "" && (!errors.As(err, &ie) || ie.Code != interlude.CodeInvalidRequest || len(ie.Violations) != 1 || ie.Violations[0].Path != c.path):
			t.Errorf("%s: %v, want an invalid_request pointing at %s", c.name, err, c.path)
		}
	}
}

func TestIDsAreThoseAURLPathCanCarry(t *testing.T) {
	for id, want := range map[string]bool{"order-42": true, "a:b@c~d+e=f_g.h": true, "": false, ".": false, "..": false, "a b": false, "a/b": false, strings.Repeat("a", 257): false, strings.Repeat("a", 256): true} {
		if host.ValidID(id) != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, !want, want)
		}
	}
}
