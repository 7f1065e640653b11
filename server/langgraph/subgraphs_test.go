package langgraph_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/server"
)

func TestAThreadsStateWithSubgraphsGivesEachSubgraphsStateInItsTask(t *testing.T) {
	s := newLGServerWith(t, func(gopts []graph.Option) []server.Option {
		nested, err := graphs.Nested(gopts...)
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.WithGraph(nested.Erase())}
	})
	id := s.newThread()
	s.must(200, "POST", "/threads/"+id+"/runs/wait", map[string]any{"input": map[string]any{"amount": 250}, "assistant_id": "nested"}, nil)
	type task struct {
		Name       string            `json:"name"`
		Interrupts []json.RawMessage `json:"interrupts"`
		State      *struct {
			Values     map[string]any `json:"values"`
			Next       []string       `json:"next"`
			Tasks      []task         `json:"tasks"`
			Checkpoint struct {
				NS string `json:"checkpoint_ns"`
			} `json:"checkpoint"`
		} `json:"state"`
	}
	var plain, with struct {
		Tasks []task `json:"tasks"`
	}
	s.must(200, "GET", "/threads/"+id+"/state", nil, &plain)
	if len(plain.Tasks) != 1 || plain.Tasks[0].State != nil {
		t.Fatalf("a state read without subgraphs has tasks %+v, want approval's with no state", plain.Tasks)
	}
	s.must(200, "GET", "/threads/"+id+"/state?subgraphs=true", nil, &with)
	if len(with.Tasks) != 1 || with.Tasks[0].Name != "approval" || with.Tasks[0].State == nil {
		t.Fatalf("tasks %+v, want approval's with its subgraph's state", with.Tasks)
	}
	inner := with.Tasks[0].State
	if inner.Values["amount"] != 250.0 || !slices.Equal(inner.Next, []string{"manager"}) || inner.Checkpoint.NS != "approval" {
		t.Fatalf("the approval subgraph's state is %+v", inner)
	}
	if len(inner.Tasks) != 1 || inner.Tasks[0].Name != "manager" || len(inner.Tasks[0].Interrupts) != 1 {
		t.Fatalf("the subgraph's tasks %+v, want manager with its question", inner.Tasks)
	}
}
