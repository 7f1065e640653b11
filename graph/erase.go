package graph

import (
	"context"
	"encoding/json"
	"iter"
	"reflect"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/schema"
	"github.com/interludehq/interlude/store"
)

// Erased is a compiled graph with its state type hidden: input and values travel as
// JSON. A server hosts graphs of different state types through it.
type Erased interface {
	// Name is the graph's name.
	Name() string
	// Nodes lists the graph's nodes.
	Nodes() []string
	// InputSchema is the JSON Schema of the state type, which input must match.
	InputSchema() json.RawMessage
	// Invoke is Graph.Invoke with values as JSON.
	Invoke(ctx context.Context, threadID string, cmd Command) (*Result[json.RawMessage], error)
	// Stream is Graph.Stream.
	Stream(ctx context.Context, threadID string, cmd Command) iter.Seq2[Event, error]
	// State is Graph.State with values as JSON.
	State(ctx context.Context, threadID string) (*Snapshot[json.RawMessage], error)
	// History is Graph.History with values as JSON.
	History(ctx context.Context, threadID string, opt HistoryOptions) ([]Checkpoint[json.RawMessage], error)
	// Fork is Graph.Fork with values as JSON.
	Fork(ctx context.Context, threadID string, checkpoint int64) (*Result[json.RawMessage], error)
	// ForkSubgraph is Graph.ForkSubgraph with values as JSON.
	ForkSubgraph(ctx context.Context, threadID string, checkpoint int64, namespace []string) (*Result[json.RawMessage], error)
	// ForkOn is Graph.ForkOn with values as JSON.
	ForkOn(ctx context.Context, t *Thread, checkpoint int64, namespace []string) (*Result[json.RawMessage], error)
	// Delete is Graph.Delete.
	Delete(ctx context.Context, threadID string) error
	// Store is the graph's store.
	Store() store.Store
	// Open is Graph.Open.
	Open(ctx context.Context, threadID string) (*Thread, error)
	// Caches is Graph.Caches.
	Caches(threadID string) bool
	// InvokeOn is Graph.InvokeOn with values as JSON.
	InvokeOn(ctx context.Context, t *Thread, cmd Command) (*Result[json.RawMessage], error)
	// StreamOn is Graph.StreamOn.
	StreamOn(ctx context.Context, t *Thread, cmd Command, opts ...StreamOption) iter.Seq2[Event, error]
	// UpdateStateOn is Graph.UpdateStateOn with values as JSON.
	UpdateStateOn(ctx context.Context, t *Thread, u StateUpdate) (*Result[json.RawMessage], error)
	// Escalate is Graph.Escalate with values as JSON.
	Escalate(ctx context.Context, threadID string, e Escalation) (*Result[json.RawMessage], error)
	// PendingOn is Graph.PendingOn.
	PendingOn(ctx context.Context, t *Thread) ([]interlude.Interruption, *Breakpoint, error)
}

// Erase returns the graph as an Erased.
func (g *Graph[S]) Erase() Erased { return erased[S]{g} }

type erased[S any] struct{ g *Graph[S] }

func (e erased[S]) Name() string       { return e.g.Name() }
func (e erased[S]) Nodes() []string    { return e.g.Nodes() }
func (e erased[S]) Store() store.Store { return e.g.Store() }
func (e erased[S]) Open(ctx context.Context, id string) (*Thread, error) {
	return e.g.Open(ctx, id)
}
func (e erased[S]) Caches(id string) bool { return e.g.Caches(id) }
func (e erased[S]) Delete(ctx context.Context, id string) error {
	return e.g.Delete(ctx, id)
}

func (e erased[S]) InputSchema() json.RawMessage {
	s, err := schema.For(reflect.TypeFor[S]())
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return s
}

func (e erased[S]) Stream(ctx context.Context, id string, cmd Command) iter.Seq2[Event, error] {
	return e.g.Stream(ctx, id, cmd)
}

func (e erased[S]) Invoke(ctx context.Context, id string, cmd Command) (*Result[json.RawMessage], error) {
	r, err := e.g.Invoke(ctx, id, cmd)
	return eraseResult(r, err, !cmd.noValues)
}

func (e erased[S]) Escalate(ctx context.Context, id string, esc Escalation) (*Result[json.RawMessage], error) {
	r, err := e.g.Escalate(ctx, id, esc)
	return eraseResult(r, err, true)
}

func (e erased[S]) InvokeOn(ctx context.Context, t *Thread, cmd Command) (*Result[json.RawMessage], error) {
	r, err := e.g.InvokeOn(ctx, t, cmd)
	return eraseResult(r, err, !cmd.noValues)
}

func (e erased[S]) PendingOn(ctx context.Context, t *Thread) ([]interlude.Interruption, *Breakpoint, error) {
	return e.g.PendingOn(ctx, t)
}

func (e erased[S]) StreamOn(ctx context.Context, t *Thread, cmd Command, opts ...StreamOption) iter.Seq2[Event, error] {
	return e.g.StreamOn(ctx, t, cmd, opts...)
}

func (e erased[S]) UpdateStateOn(ctx context.Context, t *Thread, u StateUpdate) (*Result[json.RawMessage], error) {
	r, err := e.g.UpdateStateOn(ctx, t, u)
	return eraseResult(r, err, true)
}

func (e erased[S]) Fork(ctx context.Context, id string, checkpoint int64) (*Result[json.RawMessage], error) {
	r, err := e.g.Fork(ctx, id, checkpoint)
	return eraseResult(r, err, true)
}

func (e erased[S]) ForkSubgraph(ctx context.Context, id string, checkpoint int64, namespace []string) (*Result[json.RawMessage], error) {
	r, err := e.g.ForkSubgraph(ctx, id, checkpoint, namespace)
	return eraseResult(r, err, true)
}

func (e erased[S]) ForkOn(ctx context.Context, t *Thread, checkpoint int64, namespace []string) (*Result[json.RawMessage], error) {
	r, err := e.g.ForkOn(ctx, t, checkpoint, namespace)
	return eraseResult(r, err, true)
}

// eraseResult encodes r's values, if values is set, for an erased result.
func eraseResult[S any](r *Result[S], err error, values bool) (*Result[json.RawMessage], error) {
	if r == nil {
		return nil, err
	}
	var vals json.RawMessage
	if values {
		var merr error
		if vals, merr = json.Marshal(r.Values); merr != nil && err == nil {
			err = merr
		}
	}
	return &Result[json.RawMessage]{ThreadID: r.ThreadID, Status: r.Status, Values: vals, Interrupts: r.Interrupts,
		Breakpoint: r.Breakpoint, Next: r.Next, Checkpoint: r.Checkpoint, Error: r.Error, Replayed: r.Replayed, Replays: r.Replays}, err
}

func (e erased[S]) State(ctx context.Context, id string) (*Snapshot[json.RawMessage], error) {
	s, err := e.g.State(ctx, id)
	if err != nil {
		return nil, err
	}
	vals, err := json.Marshal(s.Values)
	if err != nil {
		return nil, err
	}
	return &Snapshot[json.RawMessage]{ThreadID: s.ThreadID, Graph: s.Graph, Status: s.Status, Values: vals, Next: s.Next,
		Interrupts: s.Interrupts, Exchanges: s.Exchanges, Finished: s.Finished, Subgraphs: s.Subgraphs, Breakpoint: s.Breakpoint, Checkpoint: s.Checkpoint, Step: s.Step,
		Error: s.Error, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}, nil
}

func (e erased[S]) History(ctx context.Context, id string, opt HistoryOptions) ([]Checkpoint[json.RawMessage], error) {
	h, err := e.g.History(ctx, id, opt)
	if err != nil {
		return nil, err
	}
	out := make([]Checkpoint[json.RawMessage], len(h))
	for i, c := range h {
		vals, err := json.Marshal(c.Values)
		if err != nil {
			return nil, err
		}
		out[i] = Checkpoint[json.RawMessage]{ID: c.ID, Kind: c.Kind, At: c.At, Status: c.Status, Values: vals, Next: c.Next,
			Step: c.Step, Raised: c.Raised, Resolved: c.Resolved, Interrupts: c.Interrupts, Breakpoint: c.Breakpoint, Error: c.Error, Subgraphs: c.Subgraphs, Escalations: c.Escalations}
	}
	return out, nil
}
