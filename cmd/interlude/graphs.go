package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/interludehq/interlude/wire"
)

var graphsCommand = &command{
	name:    "graphs",
	args:    "[GRAPH]",
	summary: "list the graphs the server hosts and the input each one starts with",
	about: `Without GRAPH, one line per graph with its input fields (required ones marked *).
With GRAPH, its nodes, each input field with its type and description, an example
INPUT_JSON for "interlude run", and the full input schema.`,
	maxArgs: 1,
	setup: func(fs *flag.FlagSet, e *env) func([]string) error {
		r := remoteFlags(fs, e)
		return func(args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			gs, err := c.Graphs(e.ctx)
			if err != nil {
				return r.fail(err)
			}
			if len(args) == 1 {
				i := slices.IndexFunc(gs, func(g wire.GraphInfo) bool { return g.Name == args[0] })
				if i < 0 {
					names := make([]string, len(gs))
					for j, g := range gs {
						names[j] = g.Name
					}
					return usagef("the server hosts no graph %q; it hosts %s", args[0], strings.Join(names, ", "))
				}
				gs = gs[i : i+1]
			}
			if *r.json {
				return writeJSON(e.stdout, map[string]any{"graphs": gs})
			}
			if len(args) == 1 {
				printGraph(e.stdout, gs[0], r.serverArg())
				return nil
			}
			for _, g := range gs {
				fmt.Fprintf(e.stdout, "%s  %s\n", line(g.Name), line(inputSummary(readInput(g.InputSchema))))
			}
			return nil
		}
	},
}

// inputField is one field of a graph's input, as the CLI shows it.
type inputField struct {
	name, typ, description string
	required               bool
	example                json.RawMessage
}

// readInput reads the top-level fields of an input schema, in name order.
func readInput(raw json.RawMessage) []inputField {
	raw = resolveTop(raw)
	var s struct {
		Properties map[string]struct {
			Type        any               `json:"type"`
			Description string            `json:"description"`
			Default     json.RawMessage   `json:"default"`
			Examples    []json.RawMessage `json:"examples"`
			Enum        []json.RawMessage `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var out []inputField
	for name, p := range s.Properties {
		f := inputField{name: name, description: p.Description, required: slices.Contains(s.Required, name)}
		switch t := p.Type.(type) {
		case string:
			f.typ = t
		case []any:
			var parts []string
			for _, x := range t {
				parts = append(parts, fmt.Sprint(x))
			}
			f.typ = strings.Join(parts, " or ")
		}
		switch {
		case len(p.Examples) > 0:
			f.example = p.Examples[0]
		case len(p.Enum) > 0:
			f.example = p.Enum[0]
		case len(p.Default) > 0:
			f.example = p.Default
		default:
			f.example = exampleOf(f.typ)
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b inputField) int { return strings.Compare(a.name, b.name) })
	return out
}

// resolveTop returns the definition a schema's top-level "$ref" names within its
// own "$defs" (as schemas derived from Go types are written), or the schema.
func resolveTop(raw json.RawMessage) json.RawMessage {
	var top struct {
		Ref  string                     `json:"$ref"`
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if json.Unmarshal(raw, &top) != nil {
		return raw
	}
	if name, ok := strings.CutPrefix(top.Ref, "#/$defs/"); ok {
		if def, ok := top.Defs[name]; ok {
			return def
		}
	}
	return raw
}

func exampleOf(typ string) json.RawMessage {
	switch strings.SplitN(typ, " ", 2)[0] {
	case "number", "integer":
		return json.RawMessage("1")
	case "boolean":
		return json.RawMessage("true")
	case "array":
		return json.RawMessage("[]")
	case "object":
		return json.RawMessage("{}")
	}
	return json.RawMessage(`"text"`)
}

func inputSummary(fs []inputField) string {
	if len(fs) == 0 {
		return "(no input fields)"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.name
		if f.required {
			parts[i] += "*"
		}
	}
	return "input: " + strings.Join(parts, ", ")
}

// exampleInput is an INPUT_JSON with the required fields (or, when none is
// required, the first one), quoted for a shell.
func exampleInput(fs []inputField) string {
	var parts []string
	for _, f := range fs {
		if f.required {
			parts = append(parts, fmt.Sprintf("%q: %s", f.name, f.example))
		}
	}
	if len(parts) == 0 && len(fs) > 0 {
		parts = append(parts, fmt.Sprintf("%q: %s", fs[0].name, fs[0].example))
	}
	return shellQuote("{" + strings.Join(parts, ", ") + "}")
}

func printGraph(w io.Writer, g wire.GraphInfo, srv string) {
	fields := readInput(g.InputSchema)
	fmt.Fprintf(w, "Graph %s\n", line(g.Name))
	if len(g.Nodes) > 0 {
		fmt.Fprintf(w, "  nodes: %s\n", line(strings.Join(g.Nodes, ", ")))
	}
	if len(fields) == 0 {
		fmt.Fprintf(w, "  input: none\n")
	} else {
		fmt.Fprintf(w, "  input (* required):\n")
		for _, f := range fields {
			req := " "
			if f.required {
				req = "*"
			}
			row := fmt.Sprintf("    %s%s (%s)", line(f.name), req, line(f.typ))
			if f.description != "" {
				row += "  " + line(f.description)
			}
			fmt.Fprintln(w, row)
		}
		if slices.ContainsFunc(fields, func(f inputField) bool { return f.name == "messages" }) {
			fmt.Fprintf(w, "  start one: %s run %s --message TEXT%s\n", self, line(quote(g.Name)), srv)
		} else {
			fmt.Fprintf(w, "  start one: %s run %s %s%s\n", self, line(quote(g.Name)), line(exampleInput(fields)), srv)
		}
	}
	fmt.Fprintf(w, "  input schema: %s\n", compact(g.InputSchema))
}

// shellQuote quotes s in single quotes for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
