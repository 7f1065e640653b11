package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
	"github.com/interludehq/interlude/wire"
)

// query checks a request's query parameters: only known ones, each at most once.
func query(r *http.Request, known ...string) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("", "the query string is malformed: %v", err)
	}
	for k, vs := range q {
		if !slices.Contains(known, k) {
			return nil, badRequest(k, "unknown query parameter %q; known: %v", k, known)
		}
		if len(vs) > 1 {
			return nil, badRequest(k, "query parameter %q is given %d times", k, len(vs))
		}
	}
	return q, nil
}

// intParam reads an optional integer query parameter within [lo, hi].
func intParam(q url.Values, key string, lo, hi int64) (int64, error) {
	v := q.Get(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, badRequest(key, "%s must be an integer from %d to %d, not %q", key, lo, hi, v)
	}
	return n, nil
}

// handleList serves GET /v1/threads, the inbox listing.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	q, err := query(r, "status", "graph", "limit", "cursor")
	if err != nil {
		return err
	}
	sq := store.Query{Graph: q.Get("graph"), Cursor: q.Get("cursor")}
	if text := q.Get("status"); text != "" {
		if sq.Status, err = interlude.ParseThreadStatus(text); err != nil {
			return badRequest("status", "%s", err.(*interlude.Error).Message)
		}
	}
	// An empty parameter is as good as none: a form's empty field sends one.
	if sq.Graph != "" && !validName(sq.Graph) {
		return badRequest("graph", "graph %q is not a valid graph name", sq.Graph)
	}
	limit, err := intParam(q, "limit", 1, 1000)
	if err != nil {
		return err
	}
	sq.Limit = int(limit)
	if sq.Cursor != "" {
		if _, err := storekit.DecodeCursor(sq.Cursor); err != nil {
			return badRequest("cursor", "the cursor is malformed; pass next_cursor from a previous page unchanged")
		}
	}
	page, err := s.host.List(r.Context(), sq)
	if err != nil {
		return err
	}
	out := wire.ThreadPage{Threads: make([]wire.ThreadSummary, len(page.Threads)), NextCursor: page.NextCursor}
	for i, m := range page.Threads {
		out.Threads[i] = wire.ThreadSummary{ThreadID: m.ThreadID, Graph: m.Graph, Status: m.Status, Interrupts: shownAll(m.Interrupts),
			CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
	}
	return answer(w, out)
}

// existing returns the graph of an existing thread named by the route.
func (s *Server) existing(r *http.Request) (string, graph.Erased, error) {
	id, err := pathID(r)
	if err != nil {
		return "", nil, err
	}
	g, err := s.host.GraphFor(r.Context(), id)
	err = graphField(err)
	return id, g, err
}

// handleThread serves GET /v1/threads/{id}[?subgraphs=true].
func (s *Server) handleThread(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	q, err := query(r, "subgraphs")
	if err != nil {
		return err
	}
	withSubgraphs, err := boolParam(q, "subgraphs")
	if err != nil {
		return err
	}
	id, g, err := s.existing(r)
	if err != nil {
		return err
	}
	snap, err := g.State(r.Context(), id)
	if err != nil {
		return err
	}
	msgs := messagesOf(snap.Values)
	answer(w, wire.Thread{ThreadID: id, Graph: snap.Graph, Status: snap.Status, Values: snap.Values,
		Messages: msgs, FinishedToolResults: finishedToolResults(snap, msgs), Interrupts: shownAll(snap.Interrupts),
		Next: orEmpty(snap.Next), Breakpoint: snap.Breakpoint, Error: snap.Error, Checkpoint: snap.Checkpoint,
		CreatedAt: snap.CreatedAt, UpdatedAt: snap.UpdatedAt, Subgraphs: subgraphsShown(snap.Subgraphs, withSubgraphs, false)})
	return nil
}

// boolParam reads an optional boolean query parameter (true or false, 1 or 0).
func boolParam(q url.Values, key string) (bool, error) {
	switch v := q.Get(key); v {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	default:
		return false, badRequest(key, "%s must be true or false, not %q", key, v)
	}
}

// subgraphsShown returns the subgraphs a response shows: none unless asked
// for, and their questions without private state unless private.
func subgraphsShown(subs []graph.SubgraphState, asked, private bool) []graph.SubgraphState {
	if !asked {
		return nil
	}
	out := make([]graph.SubgraphState, len(subs))
	for i, s := range subs {
		if !private {
			s.Interrupts = shownAll(s.Interrupts)
		}
		out[i] = s
	}
	return out
}

// History pages: the default and largest number of checkpoints a request gets.
const (
	historyLimit    = 20
	historyLimitMax = 100
)

// handleHistory serves GET /v1/threads/{id}/history?limit=&before=&subgraphs=: a
// page of checkpoints, newest first, whose cost does not grow with the thread.
func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	q, err := query(r, "limit", "before", "subgraphs")
	if err != nil {
		return err
	}
	withSubgraphs, err := boolParam(q, "subgraphs")
	if err != nil {
		return err
	}
	limit, err := intParam(q, "limit", 1, historyLimitMax)
	if err != nil {
		return err
	}
	if limit == 0 {
		limit = historyLimit
	}
	before, err := intParam(q, "before", 1, 1<<62)
	if err != nil {
		return err
	}
	id, g, err := s.existing(r)
	if err != nil {
		return err
	}
	cps, err := g.History(r.Context(), id, graph.HistoryOptions{Limit: int(limit), Before: before})
	if err != nil {
		return err
	}
	out := historyOf(id, g.Name(), cps)
	for i := range out.Checkpoints {
		out.Checkpoints[i].Subgraphs = subgraphsShown(cps[i].Subgraphs, withSubgraphs, true)
	}
	return answer(w, out)
}

// historyOf builds a history response from a page of checkpoints (newest
// first), with the exchanges of each tool call it shows (host.ToolCalls).
func historyOf(id, graphName string, cps []graph.Checkpoint[json.RawMessage]) wire.History {
	out := wire.History{ThreadID: id, Graph: graphName, Checkpoints: []wire.Checkpoint{}, ToolCalls: host.ToolCalls(cps)}
	if n := len(cps); n > 0 && cps[n-1].ID > 1 {
		out.NextBefore = cps[n-1].ID
	}
	for _, c := range cps {
		wc := wire.Checkpoint{ID: c.ID, Kind: c.Kind, At: c.At, Status: c.Status, Step: c.Step, Next: orEmpty(c.Next), Values: c.Values,
			Raised: orEmpty(c.Raised), Resolved: make([]interlude.Resolution, len(c.Resolved)),
			Interrupts: shownAll(c.Interrupts), Breakpoint: c.Breakpoint, Error: c.Error, Escalations: c.Escalations}
		for i, a := range c.Resolved {
			wc.Resolved[i] = *a.Resolution
		}
		out.Checkpoints = append(out.Checkpoints, wc)
	}
	return out
}

// handleDelete serves DELETE /v1/threads/{id}.
func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.host.Delete(context.WithoutCancel(r.Context()), id); err != nil {
		return err
	}
	return answer(w, map[string]any{"thread_id": id, "deleted": true})
}

// validName reports whether s can be a graph name: 1 to 256 bytes of UTF-8
// without control characters.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 256 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// forkBody is the body of POST /v1/threads/{id}/fork.
type forkBody struct {
	Checkpoint  *int64   `json:"checkpoint"`
	Namespace   []string `json:"namespace"`
	Granularity string   `json:"response_granularity"`
}

// handleFork serves POST /v1/threads/{id}/fork: the thread goes on from one of
// its checkpoints (graph.Graph.Fork) or, with a namespace, from the checkpoint
// of the subgraph waiting there (graph.Graph.ForkSubgraph), and the answer is
// the run's, as invoke's.
func (s *Server) handleFork(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	var b forkBody
	if err := decodeBody(body, &b); err != nil {
		return err
	}
	if b.Checkpoint == nil || *b.Checkpoint < 1 {
		return badRequest("checkpoint", "checkpoint is required: the id of one of the thread's checkpoints, as its history lists them")
	}
	for i, p := range b.Namespace {
		if p == "" {
			return badRequest(fmt.Sprintf("namespace/%d", i), "a namespace names the tasks that lead to a subgraph: none of its elements can be empty")
		}
	}
	gran, err := parseGranularity(b.Granularity)
	if err != nil {
		return err
	}
	h, err := s.hold(r.Context(), id, "", false)
	if err != nil {
		return err
	}
	defer h.Release()
	ctx, cancel := s.runContext(r, rc.who)
	defer cancel()
	res, err := h.Fork(ctx, *b.Checkpoint, b.Namespace)
	h.Release()
	s.writeDeadline(w) // the run may have outlasted the one set for the request
	if res == nil || (err != nil && res.Status != interlude.RunFailed) {
		if err == nil {
			err = errors.New("the graph returned no result")
		}
		return err
	}
	return answer(w, resultAt(res, gran))
}
