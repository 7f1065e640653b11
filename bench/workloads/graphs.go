package workloads

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
)

// The four workloads, named as bench/peers/langgraph/bench.mjs names them.
const (
	Chain10        = "chain10"
	HITLCycle      = "hitl_cycle"
	Growth         = "growth"
	ParallelResume = "parallel_resume"
)

// Names lists the workloads in the order the comparison runs them.
var Names = []string{Chain10, HITLCycle, Growth, ParallelResume}

// ---------------------------------------------------------------- chain10 ----

// CounterState is chain10's state: one counter, replaced by each write.
type CounterState struct {
	Counter int `json:"counter"`
}

// NewChain10 builds chain10: nodes n0..n9 in a line (Start -> n0 -> ... -> n9 ->
// End), each returning counter+1.
func NewChain10(st store.Store) (*graph.Graph[CounterState], error) {
	b := graph.New[CounterState]()
	for i := range 10 {
		b.AddNode(fmt.Sprintf("n%d", i), func(_ context.Context, s CounterState) (CounterState, error) {
			return CounterState{Counter: s.Counter + 1}, nil
		})
	}
	b.AddEdge(graph.Start, "n0")
	for i := 1; i < 10; i++ {
		b.AddEdge(fmt.Sprintf("n%d", i-1), fmt.Sprintf("n%d", i))
	}
	b.AddEdge("n9", graph.End)
	return b.Compile(graph.WithStore(st), graph.WithName(Chain10))
}

// RunChain10 runs chain10 once on a new thread with input {counter: 0} and checks
// that it completes with counter 10.
func RunChain10(ctx context.Context, g *graph.Graph[CounterState], threadID string) error {
	res, err := g.Invoke(ctx, threadID, graph.Input(CounterState{Counter: 0}))
	if err != nil {
		return err
	}
	if res.Status != interlude.RunCompleted || res.Values.Counter != 10 {
		return fmt.Errorf("chain10: status %s, counter %d; want completed, 10", res.Status, res.Values.Counter)
	}
	return nil
}

// ------------------------------------------------------------- hitl_cycle ----

// ReviewState is hitl_cycle's state: the outcome of the review.
type ReviewState struct {
	Outcome string `json:"outcome"`
}

// NewHITL builds hitl_cycle: one node "review" (Start -> review -> End) that
// interrupts with {"amount":150}; answered {"approved": true} it sets outcome
// "refunded", otherwise "denied".
func NewHITL(st store.Store) (*graph.Graph[ReviewState], error) {
	b := graph.New[ReviewState]()
	b.AddNode("review", func(ctx context.Context, _ ReviewState) (ReviewState, error) {
		ans, err := interlude.Interrupt(ctx, interlude.Request{Value: map[string]any{"amount": 150}})
		if err != nil {
			return ReviewState{}, err
		}
		var d struct {
			Approved bool `json:"approved"`
		}
		if err := ans.Decode(&d); err != nil {
			return ReviewState{}, err
		}
		if d.Approved {
			return ReviewState{Outcome: "refunded"}, nil
		}
		return ReviewState{Outcome: "denied"}, nil
	})
	b.AddEdge(graph.Start, "review")
	b.AddEdge("review", graph.End)
	return b.Compile(graph.WithStore(st), graph.WithName(HITLCycle))
}

// Pause starts hitl_cycle on a new thread with input {outcome: "pending"} and
// checks that it pauses on one interrupt carrying {"amount":150}.
func Pause(ctx context.Context, g *graph.Graph[ReviewState], threadID string) error {
	res, err := g.Invoke(ctx, threadID, graph.Input(ReviewState{Outcome: "pending"}))
	if err != nil {
		return err
	}
	if res.Status != interlude.RunInterrupted || len(res.Interrupts) != 1 {
		return fmt.Errorf("hitl_cycle pause: status %s with %d interrupts; want interrupted with 1", res.Status, len(res.Interrupts))
	}
	if v := string(res.Interrupts[0].Value); v != `{"amount":150}` {
		return fmt.Errorf("hitl_cycle pause: interrupt value %s; want {\"amount\":150}", v)
	}
	return nil
}

// Approve resumes a paused hitl_cycle thread with {"approved": true} and checks
// that it completes with outcome "refunded".
func Approve(ctx context.Context, g *graph.Graph[ReviewState], threadID string) error {
	res, err := g.Invoke(ctx, threadID, graph.Resume(interlude.Resolve(map[string]any{"approved": true})))
	if err != nil {
		return err
	}
	if res.Status != interlude.RunCompleted || res.Values.Outcome != "refunded" || len(res.Interrupts) != 0 {
		return fmt.Errorf("hitl_cycle resume: status %s, outcome %q; want completed, refunded", res.Status, res.Values.Outcome)
	}
	return nil
}

// ----------------------------------------------------------------- growth ----

// Lorem is the text growth messages are cut from, byte for byte bench.mjs's
// GROWTH_LOREM (226 ASCII bytes, none of which JSON escapes).
const Lorem = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor " +
	"incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud " +
	"exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat"

// Message is growth's message for turn t: the first 200 bytes of "m<t> <Lorem>",
// as bench.mjs's growthMessage.
func Message(t int) string { return fmt.Sprintf("m%d %s", t, Lorem)[:200] }

// TranscriptState is growth's state: a list of messages with the append reducer.
type TranscriptState struct {
	Messages []string `json:"messages" graph:"append"`
}

// NewGrowth builds growth: one node "noop" (Start -> noop -> End) that writes
// nothing; each turn's input appends one message.
func NewGrowth(st store.Store) (*graph.Graph[TranscriptState], error) {
	b := graph.New[TranscriptState]()
	b.AddNode("noop", func(context.Context, TranscriptState) (TranscriptState, error) {
		return TranscriptState{}, nil
	})
	b.AddEdge(graph.Start, "noop")
	b.AddEdge("noop", graph.End)
	return b.Compile(graph.WithStore(st), graph.WithName(Growth))
}

// Turn runs growth's turn t on the thread: one Invoke whose input appends
// Message(t). It returns the thread's messages after the turn.
func Turn(ctx context.Context, g *graph.Graph[TranscriptState], threadID string, t int) ([]string, error) {
	res, err := g.Invoke(ctx, threadID, graph.Input(TranscriptState{Messages: []string{Message(t)}}))
	if err != nil {
		return nil, err
	}
	if res.Status != interlude.RunCompleted {
		return nil, fmt.Errorf("growth turn %d: status %s", t, res.Status)
	}
	return res.Values.Messages, nil
}

// CheckTranscript checks that messages is the transcript after turns turns and
// returns its size as bench.mjs measures it: the length of its JSON encoding.
func CheckTranscript(messages []string, turns int) (int, error) {
	if len(messages) != turns {
		return 0, fmt.Errorf("growth: %d messages after %d turns", len(messages), turns)
	}
	for _, t := range []int{0, turns / 2, turns - 1} {
		if messages[t] != Message(t) {
			return 0, fmt.Errorf("growth: message %d is %.20q..., want %.20q...", t, messages[t], Message(t))
		}
	}
	data, err := json.Marshal(messages)
	if err != nil {
		return 0, err
	}
	return len(data), nil
}

// TranscriptBytes is the JSON length of the transcript after turns turns of the
// 200-byte ASCII messages: turns*202 + (turns-1) + 2.
func TranscriptBytes(turns int) int { return turns*202 + turns - 1 + 2 }

// -------------------------------------------------------- parallel_resume ----

// AnswersState is parallel_resume's state: the branches' answers, appended.
type AnswersState struct {
	Answers []string `json:"answers" graph:"append"`
}

// NewParallel builds parallel_resume: Start fans out to b0..b4 (one step), each
// interrupting with {"branch": i} and, answered v, appending "bi:v"; each bi ->
// End.
func NewParallel(st store.Store) (*graph.Graph[AnswersState], error) {
	b := graph.New[AnswersState]()
	for i := range 5 {
		name := fmt.Sprintf("b%d", i)
		b.AddNode(name, func(ctx context.Context, _ AnswersState) (AnswersState, error) {
			ans, err := interlude.Interrupt(ctx, interlude.Request{Value: map[string]any{"branch": i}})
			if err != nil {
				return AnswersState{}, err
			}
			var v string
			if err := ans.Decode(&v); err != nil {
				return AnswersState{}, err
			}
			return AnswersState{Answers: []string{name + ":" + v}}, nil
		})
		b.AddEdge(graph.Start, name)
		b.AddEdge(name, graph.End)
	}
	return b.Compile(graph.WithStore(st), graph.WithName(ParallelResume))
}

// PauseAll starts parallel_resume on a new thread with input {answers: []},
// checks that all five branches pause, and returns an answer "ok" for each
// interrupt, ready for graph.Respond.
func PauseAll(ctx context.Context, g *graph.Graph[AnswersState], threadID string) (map[string]interlude.Resolution, error) {
	res, err := g.Invoke(ctx, threadID, graph.Input(AnswersState{}))
	if err != nil {
		return nil, err
	}
	if res.Status != interlude.RunInterrupted || len(res.Interrupts) != 5 {
		return nil, fmt.Errorf("parallel_resume pause: status %s with %d interrupts; want interrupted with 5", res.Status, len(res.Interrupts))
	}
	answers := make(map[string]interlude.Resolution, 5)
	for _, q := range res.Interrupts {
		answers[q.ID] = interlude.Resolve("ok")
	}
	return answers, nil
}

// FinishAll answers all five interrupts in one graph.Respond and checks that the
// thread completes with five answers "bi:ok".
func FinishAll(ctx context.Context, g *graph.Graph[AnswersState], threadID string, answers map[string]interlude.Resolution) error {
	res, err := g.Invoke(ctx, threadID, graph.Respond(answers))
	if err != nil {
		return err
	}
	if res.Status != interlude.RunCompleted || len(res.Values.Answers) != 5 {
		return fmt.Errorf("parallel_resume finish: status %s with answers %q; want completed with 5", res.Status, res.Values.Answers)
	}
	seen := map[string]bool{}
	for _, a := range res.Values.Answers {
		if !strings.HasSuffix(a, ":ok") || seen[a] {
			return fmt.Errorf("parallel_resume finish: answers %q", res.Values.Answers)
		}
		seen[a] = true
	}
	return nil
}
