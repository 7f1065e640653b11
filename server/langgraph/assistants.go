package langgraph

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/interludehq/interlude/graph"
)

// assistant is LangGraph's Assistant object: each hosted graph has one.
type assistant struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Version     int            `json:"version"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// epoch is the creation time the assistants report: they exist as long as
// their graphs are hosted, and their ids never change.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func assistantOf(name string) assistant {
	return assistant{AssistantID: AssistantID(name), GraphID: name, Name: name, Version: 1, Config: map[string]any{},
		Context: map[string]any{}, Metadata: map[string]any{"created_by": "system"}, CreatedAt: epoch, UpdatedAt: epoch}
}

// assistantBook is the hosted graphs' assistant ids, derived once: every run
// names its assistant, and deriving an id hashes the graph's name.
type assistantBook struct {
	graphs map[string]string // an assistant id or a graph name: the graph's name
	ids    map[string]string // a graph's name: its assistant id
}

// newAssistantBook is the assistants of the graphs names, in the order of
// names: an id that two of them answer to names the first.
func newAssistantBook(names []string) assistantBook {
	b := assistantBook{graphs: make(map[string]string, 2*len(names)), ids: make(map[string]string, len(names))}
	for _, name := range names {
		id := AssistantID(name)
		b.ids[name] = id
		for _, k := range []string{name, id} {
			if _, ok := b.graphs[k]; !ok {
				b.graphs[k] = name
			}
		}
	}
	return b
}

// assistantID is the assistant id of the hosted graph name.
func (h *Handler) assistantID(name string) string {
	if id, ok := h.assistants.ids[name]; ok {
		return id
	}
	return AssistantID(name)
}

// assistantGraph returns the graph an assistant id names: its uuid or the
// graph's name.
func (h *Handler) assistantGraph(id string) (string, error) {
	if name, ok := h.assistants.graphs[id]; ok {
		return name, nil
	}
	return "", notFound("No assistant found for %q: this server hosts the graphs %v, whose names or assistant ids may be used", id, h.host.Graphs())
}

func (h *Handler) assistantFor(r *http.Request) (graph.Erased, error) {
	name, err := h.assistantGraph(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return h.host.Graph(name), nil
}

type assistantQuery struct {
	GraphID  string         `json:"graph_id"`
	Name     string         `json:"name"`
	Metadata map[string]any `json:"metadata"`
	Limit    *int           `json:"limit"`
	Offset   int            `json:"offset"`
}

func (h *Handler) matchAssistants(q assistantQuery) []assistant {
	out := []assistant{}
	for _, name := range h.host.Graphs() {
		a := assistantOf(name)
		if (q.GraphID != "" && q.GraphID != name) || (q.Name != "" && q.Name != name) || !contains(a.Metadata, q.Metadata) {
			continue
		}
		out = append(out, a)
	}
	return out
}

func (h *Handler) handleAssistantSearch(w http.ResponseWriter, r *http.Request) {
	var q assistantQuery
	if err := h.readJSON(w, r, &q); err != nil {
		writeError(w, err)
		return
	}
	all := h.matchAssistants(q)
	limit := 10
	if q.Limit != nil {
		limit = *q.Limit
	}
	page := []assistant{}
	if q.Offset >= 0 && q.Offset < len(all) && limit > 0 {
		page = all[q.Offset:min(len(all), q.Offset+limit)]
	}
	w.Header().Set("X-Pagination-Total", strconv.Itoa(len(all)))
	writeJSON(w, http.StatusOK, page)
}

func (h *Handler) handleAssistantCount(w http.ResponseWriter, r *http.Request) {
	var q assistantQuery
	if err := h.readJSON(w, r, &q); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, len(h.matchAssistants(q)))
}

func (h *Handler) handleAssistant(w http.ResponseWriter, r *http.Request) {
	g, err := h.assistantFor(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, assistantOf(g.Name()))
}

// handleAssistantGraph draws the graph as its nodes, from the start to each
// and from each to the end: Interlude's routes choose the next nodes at run
// time, so the edges between nodes are not known in advance.
func (h *Handler) handleAssistantGraph(w http.ResponseWriter, r *http.Request) {
	g, err := h.assistantFor(r)
	if err != nil {
		writeError(w, err)
		return
	}
	type node struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Type string `json:"type"`
	}
	type edge struct {
		Source      string `json:"source"`
		Target      string `json:"target"`
		Conditional bool   `json:"conditional"`
	}
	nodes := []node{{ID: graph.Start, Name: graph.Start, Type: "schema"}}
	edges := []edge{}
	for _, n := range g.Nodes() {
		nodes = append(nodes, node{ID: n, Name: n, Type: "runnable"})
		edges = append(edges, edge{Source: graph.Start, Target: n, Conditional: true}, edge{Source: n, Target: graph.End, Conditional: true})
	}
	nodes = append(nodes, node{ID: graph.End, Name: graph.End, Type: "schema"})
	writeJSON(w, http.StatusOK, map[string]any{"nodes": nodes, "edges": edges})
}

func (h *Handler) handleAssistantSchemas(w http.ResponseWriter, r *http.Request) {
	g, err := h.assistantFor(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s := g.InputSchema()
	writeJSON(w, http.StatusOK, map[string]any{"graph_id": g.Name(), "input_schema": s, "output_schema": s, "state_schema": s,
		"config_schema": nil, "context_schema": nil})
}

// outValues is a thread's values as LangGraph clients read them.
func (h *Handler) outValues(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return json.RawMessage("{}")
	}
	return lcValues(v)
}
