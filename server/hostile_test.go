package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
)

// choiceSchema asks for a list of nodes, each one of three shapes, two of them
// holding more nodes: a node that fails fails every branch of the anyOf.
const choiceSchema = `{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/$defs/node"}}},"$defs":{"node":{"anyOf":[{"type":"string","maxLength":3},{"type":"object","properties":{"id":{"type":"integer"},"tags":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["id"]},{"type":"array","maxItems":2,"items":{"$ref":"#/$defs/node"}}]}}}`

// ChoiceState is the state of the choice graph.
type ChoiceState struct {
	Answer json.RawMessage `json:"answer,omitempty"`
}

// choiceGraph asks one question whose response schema is choiceSchema and keeps
// the answer.
func choiceGraph(opts ...graph.Option) (*graph.Graph[ChoiceState], error) {
	g := graph.New[ChoiceState]()
	g.AddNode("choose", func(ctx context.Context, s ChoiceState) (ChoiceState, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Message: "Which items?", Schema: json.RawMessage(choiceSchema)})
		if err != nil {
			return ChoiceState{}, err
		}
		return ChoiceState{Answer: ans.Data}, nil
	})
	g.AddEdge(graph.Start, "choose")
	return g.Compile(append([]graph.Option{graph.WithName("choice")}, opts...)...)
}

// repeat returns head, then part n times separated by sep, then tail.
func repeat(head, part, sep, tail string, n int) string {
	return head + strings.Repeat(part+sep, n-1) + part + tail
}

func TestAHostileAnswerIsRefusedCheaply(t *testing.T) {
	e := newEnv(t, setup{graphs: []builder{erase(choiceGraph)}})
	ids := map[string]string{}
	for _, th := range []struct{ graph, thread, input string }{{"refund", "r", `{"amount":150}`}, {"choice", "c", `{}`}} {
		res := e.start(th.graph, th.thread, th.input)
		ids[th.thread] = res["interrupts"].([]any)[0].(map[string]any)["id"].(string)
	}
	// Each answer fills most of the 1 MiB a request body may hold.
	const room = 1<<20 - 200
	cases := []struct {
		name, thread, answer string
		total                int
	}{
		// Past schema.MaxValues values the schema is not applied: the keys are
		// still checked, and the size is one more violation.
		{"one key repeated", "r", repeat(`{"approved":true,`, `"k":1`, ",", "}", room/6), room/6 - 1 + 1},
		{"keys twice in two cases", "r", repeat(`{"approved":true,`, `"a":1,"A":1`, ",", "}", room/12), 2*(room/12) - 1 + 1},
		// Deeper than 10000 levels the body itself is refused as JSON (400).
		{"nested deeply", "r", `{"approved":true,"x":` + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + `,"pad":"` + strings.Repeat("p", room-18100) + `"}`, 1},
		{"repeated keys nested deeply", "r", strings.Repeat(`{"a":`, 60) + repeat(`{`, `"k":1`, ",", "}", room/7) + strings.Repeat("}", 60), room/7 - 1 + 1},
		{"many failing items", "c", repeat(`{"items":[`, `1`, ",", "]}", room/2), 1},
		{"every branch of anyOf failing below", "c", repeat(`{"items":[`, `{"id":"x","tags":["long"]}`, ",", "]}", room/27), 1},
		// Just under the limit, the schema applies to every value, each failing
		// every branch, and the refusal is still cheap.
		{"failing items just under the value limit", "c", repeat(`{"items":[`, `1`, ",", "]}", 9990), 3 * 9990},
		{"failing anyOf branches just under the value limit", "c", repeat(`{"items":[`, `{"id":"x","tags":["long"]}`, ",", "]}", 2490), 6 * 2490},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := ids[c.thread]
			body := `{"interrupt_id":"` + id + `","response":` + c.answer + `}`
			if len(body) > 1<<20 {
				t.Fatalf("body of %d bytes is over the server's limit", len(body))
			}
			e.unchanged(c.thread, func() {
				a := e.post("/v1/threads/"+c.thread+"/resume", body, admin.Secret)
				expect(t, a, http.StatusUnprocessableEntity, "invalid_response")
				t.Logf("a %d-byte answer is refused with a %d-byte body", len(c.answer), len(a.body))
				if len(a.body) >= 64<<10 {
					t.Fatalf("the refusal of a %d-byte answer is %d bytes", len(c.answer), len(a.body))
				}
				var got struct {
					Error struct {
						Details struct {
							Violations []interlude.Violation `json:"violations"`
							Total      int                   `json:"total"`
							Interrupts []string              `json:"interrupts"`
						} `json:"details"`
					} `json:"error"`
				}
				if err := json.Unmarshal(a.body, &got); err != nil {
					t.Fatal(err)
				}
				d := got.Error.Details
				if d.Total != c.total || len(d.Violations) != min(c.total, 20) {
					t.Fatalf("details describe %d of %d violations, want %d of %d", len(d.Violations), d.Total, min(c.total, 20), c.total)
				}
				if len(d.Interrupts) != 1 || d.Interrupts[0] != id {
					t.Fatalf("details name interrupts %v, want [%s]", d.Interrupts, id)
				}
			})
		})
	}
	// The same questions are still pending and take ordinary answers.
	for thread, answer := range map[string]string{"r": `{"approved":true}`, "c": `{"items":["ok",{"id":1,"tags":[["a","b"]]}]}`} {
		a := e.post("/v1/threads/"+thread+"/resume", `{"interrupt_id":"`+ids[thread]+`","response":`+answer+`}`, admin.Secret)
		expect(t, a, http.StatusOK, "")
		if st := a.json(t)["status"]; st != "completed" {
			t.Fatalf("thread %s is %v after a valid answer, want completed: %s", thread, st, a.body)
		}
	}
}
