package agent

import (
	"fmt"
	"reflect"

	"github.com/interludehq/interlude/internal/options"
	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/tool"
)

// ToolSource gives an agent tools that may change while it runs, such as the
// tools of MCP servers (mcp.Client), which a server may add or drop at any
// time. The agent reads Tools before each model call, so the model is offered
// the tools as they are then, and a call runs the tool of that name as it is
// when the call runs.
type ToolSource interface {
	// Tools returns the tools as they are now. Their names must be distinct.
	Tools() []tool.Tool
}

// WithToolSource makes the agent take its tools from src instead of New's
// tools argument, which must then be empty. Approval policies name tools that
// src offers when New is called.
func WithToolSource(src ToolSource) Option {
	return func(c *config) {
		options.Set(&c.Problems, &c.source, src, src != nil, "agent.WithToolSource", "the source is nil; give one, or pass the tools to New")
	}
}

// toolSet is a list of tools by name, with the specs the model is offered.
type toolSet struct {
	list   []tool.Tool
	byName map[string]*toolEntry
	specs  []model.ToolSpec
}

// toolEntry is a tool of a set with the name of its calls' spans.
type toolEntry struct {
	tool tool.Tool
	span string // "execute_tool " and the tool's name
}

func newToolSet(tools []tool.Tool) (*toolSet, error) {
	set := &toolSet{list: tools, byName: make(map[string]*toolEntry, len(tools)), specs: make([]model.ToolSpec, len(tools))}
	entries := make([]toolEntry, len(tools))
	for i, t := range tools {
		if _, dup := set.byName[t.Name()]; dup {
			return nil, fmt.Errorf("two tools are named %q", t.Name())
		}
		entries[i] = toolEntry{tool: t, span: toolSpanName(t.Name())}
		set.byName[t.Name()] = &entries[i]
		set.specs[i] = model.ToolSpec{Name: t.Name(), Description: t.Description(), InputSchema: t.InputSchema()}
	}
	return set, nil
}

// toolSpanName is the name of the span of a call to the named tool, as
// OpenTelemetry's GenAI conventions have it.
func toolSpanName(name string) string { return "execute_tool " + name }

// same reports whether tools holds the very tools the set was built from,
// under the same names. A tool whose type cannot be compared counts as changed.
func (s *toolSet) same(tools []tool.Tool) bool {
	if len(tools) != len(s.list) {
		return false
	}
	for i, t := range tools {
		if t == nil || !reflect.TypeOf(t).Comparable() || t != s.list[i] || t.Name() != s.specs[i].Name {
			return false
		}
	}
	return true
}

// tools returns the agent's tools for a model call: read again from its
// source, if it has one, and rebuilt only when they changed.
func (l *loop) tools() (*toolSet, error) {
	set := l.set.Load()
	if l.cfg.source == nil {
		return set, nil
	}
	now := l.cfg.source.Tools()
	if set.same(now) {
		return set, nil
	}
	fresh, err := newToolSet(now)
	if err != nil {
		return nil, fmt.Errorf("agent: the tool source's tools: %w", err)
	}
	l.set.Store(fresh)
	return fresh, nil
}
