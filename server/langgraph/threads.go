package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/internal/keylock"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/store"
)

// threadBook keeps what LangGraph clients say about threads that Interlude's
// thread log has no place for: threads created empty (POST /threads, before
// their first run) and the metadata clients set. It keeps them in the store's
// documents (store.Documents), so that they survive a restart and every
// replica reads the same, or in this process's memory for a store without
// them. A record that cannot be read reads as absent.
type threadBook struct {
	docs  store.Documents // nil: the map below
	locks *keylock.Locks  // one read-and-write of a thread's record at a time
	mu    sync.Mutex      // guards m and made
	m     map[string]*threadRecord
	// made holds, when the store is this process's alone (own), the threads
	// this process created (create) that no run has stored yet: their first
	// run finds them here instead of reading their record (see
	// docs/ARCHITECTURE.md). madeIDs is the order they came in, to forget
	// the oldest beyond maxMade.
	own     bool
	made    map[string]struct{}
	madeIDs []string
	next    int // where in madeIDs the next one goes, once it is full
}

type threadRecord struct {
	createdAt time.Time
	updatedAt time.Time
	metadata  map[string]any
}

// threadDoc is the kind of a thread's record in the store's documents.
const threadDoc = "langgraph.thread"

// newThreadBook keeps its records in docs, or in memory if nil. own says
// that no other process writes the store's documents.
func newThreadBook(docs store.Documents, own bool) *threadBook {
	return &threadBook{docs: docs, own: own && docs != nil, locks: keylock.New(), m: map[string]*threadRecord{}, made: map[string]struct{}{}}
}

// maxMade bounds the threads made remembers; beyond it, a thread's first run
// reads its record.
const maxMade = 100000

// noteMade remembers that this process recorded thread id, which no run has
// stored yet.
func (b *threadBook) noteMade(id string) {
	if !b.own {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.madeIDs) < maxMade {
		b.madeIDs = append(b.madeIDs, id)
	} else {
		delete(b.made, b.madeIDs[b.next]) // if it is still there
		b.madeIDs[b.next] = id
		b.next = (b.next + 1) % maxMade
	}
	b.made[id] = struct{}{}
}

// madeHere reports whether this process recorded the thread and no run has
// stored it since: it has a record, which then needs no read.
func (b *threadBook) madeHere(id string) bool {
	if !b.own {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.made[id]
	return ok
}

// unmade forgets that this process recorded the thread: a run stored it, or
// its record is gone.
func (b *threadBook) unmade(id string) {
	if !b.own {
		return
	}
	b.mu.Lock()
	delete(b.made, id)
	b.mu.Unlock()
}

func (b *threadBook) get(ctx context.Context, id string) (threadRecord, bool) {
	if b.docs != nil {
		d, err := b.docs.Document(ctx, id, threadDoc, "")
		if err != nil {
			return threadRecord{}, false
		}
		rec := threadRecord{createdAt: d.CreatedAt, updatedAt: d.UpdatedAt, metadata: map[string]any{}}
		if string(d.Data) != emptyBookData { // a record without metadata, as most are
			json.Unmarshal(d.Data, &rec.metadata)
		}
		return rec, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok := b.m[id]
	if !ok {
		return threadRecord{}, false
	}
	return threadRecord{createdAt: r.createdAt, updatedAt: r.updatedAt, metadata: maps.Clone(r.metadata)}, true
}

// maxBook bounds the threads whose metadata this process keeps in memory.
const maxBook = 100000

// maxMetadata bounds a thread's metadata, encoded, so that a search, which
// reads the metadata of up to searchCap threads, has bounded work and memory.
const maxMetadata = 16 << 10

// checkMetadata refuses metadata whose encoding is over maxMetadata bytes.
func checkMetadata(data []byte) error {
	if len(data) <= maxMetadata {
		return nil
	}
	return &apiError{status: http.StatusRequestEntityTooLarge, code: "too_large",
		message: fmt.Sprintf("the thread's metadata would take %d bytes as JSON, over the %d a thread may hold; keep large data in the thread's values and refer to it from metadata", len(data), maxMetadata)}
}

// merge adds metadata to the thread's, creating its record.
func (b *threadBook) merge(ctx context.Context, id string, md map[string]any, now time.Time) error {
	if b.docs != nil {
		held, err := b.locks.Hold(ctx, id)
		if err != nil {
			return err
		}
		defer held.Unlock()
		d := store.Document{ThreadID: id, Kind: threadDoc, CreatedAt: now, UpdatedAt: now}
		cur := map[string]any{}
		if old, err := b.docs.Document(ctx, id, threadDoc, ""); err == nil {
			json.Unmarshal(old.Data, &cur)
			d.CreatedAt = old.CreatedAt
		} else if !errors.Is(err, interlude.ErrNotFound) {
			return err
		}
		maps.Copy(cur, md)
		data, err := json.Marshal(cur)
		if err != nil {
			return badRequest("metadata cannot be encoded as JSON: %v", err)
		}
		if err := checkMetadata(data); err != nil {
			return err
		}
		d.Data = data
		return b.docs.PutDocument(ctx, d)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok := b.m[id]
	if !ok {
		if len(b.m) >= maxBook {
			return &apiError{status: http.StatusServiceUnavailable, code: "unavailable",
				message: fmt.Sprintf("this server keeps the metadata of at most %d threads; delete some threads created here", maxBook)}
		}
		r = &threadRecord{createdAt: now, metadata: map[string]any{}}
	}
	merged := maps.Clone(r.metadata)
	maps.Copy(merged, md)
	if len(md) > 0 {
		data, err := json.Marshal(merged)
		if err != nil {
			return badRequest("metadata cannot be encoded as JSON: %v", err)
		}
		if err := checkMetadata(data); err != nil {
			return err
		}
	}
	r.metadata, r.updatedAt = merged, now
	b.m[id] = r
	return nil
}

// create records a new thread, whose id names no thread yet (a fresh one),
// with its metadata, and returns its record, as get would. A new id has no
// record to merge with: in the store's documents it is one write.
func (b *threadBook) create(ctx context.Context, id string, md map[string]any, now time.Time) (threadRecord, error) {
	if b.docs == nil {
		if err := b.merge(ctx, id, md, now); err != nil {
			return threadRecord{}, err
		}
		rec, _ := b.get(ctx, id)
		return rec, nil
	}
	data := []byte(emptyBookData) // json.Marshal of no metadata
	if len(md) > 0 {
		var err error
		if data, err = json.Marshal(md); err != nil {
			return threadRecord{}, badRequest("metadata cannot be encoded as JSON: %v", err)
		}
		if err := checkMetadata(data); err != nil {
			return threadRecord{}, err
		}
	}
	if err := b.docs.PutDocument(ctx, store.Document{ThreadID: id, Kind: threadDoc, Data: data, CreatedAt: now, UpdatedAt: now}); err != nil {
		return threadRecord{}, err
	}
	b.noteMade(id)
	// What get would read back: the metadata as decoded from its JSON.
	rec := threadRecord{createdAt: now.UTC(), updatedAt: now.UTC(), metadata: map[string]any{}}
	if len(md) > 0 {
		json.Unmarshal(data, &rec.metadata)
	}
	return rec, nil
}

func (b *threadBook) forget(ctx context.Context, id string) {
	b.unmade(id)
	if b.docs != nil {
		b.docs.DeleteDocument(ctx, id, threadDoc, "")
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, id)
}

// all returns the records, by thread, at most searchCap of them (the newest),
// in one read.
func (b *threadBook) all(ctx context.Context) (map[string]threadRecord, error) {
	out := map[string]threadRecord{}
	if b.docs != nil {
		ds, err := b.docs.Documents(ctx, store.DocumentQuery{Kind: threadDoc, Limit: searchCap})
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			rec := threadRecord{createdAt: d.CreatedAt, updatedAt: d.UpdatedAt, metadata: map[string]any{}}
			json.Unmarshal(d.Data, &rec.metadata)
			out[d.ThreadID] = rec
		}
		return out, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, r := range b.m {
		out[id] = threadRecord{createdAt: r.createdAt, updatedAt: r.updatedAt, metadata: maps.Clone(r.metadata)}
	}
	return out, nil
}

// thread is LangGraph's Thread object.
type thread struct {
	ThreadID       string                   `json:"thread_id"`
	CreatedAt      time.Time                `json:"created_at"`
	UpdatedAt      time.Time                `json:"updated_at"`
	StateUpdatedAt time.Time                `json:"state_updated_at"`
	Metadata       map[string]any           `json:"metadata"`
	Status         string                   `json:"status"`
	Config         map[string]any           `json:"config"`
	Values         json.RawMessage          `json:"values,omitempty"`
	Interrupts     map[string][]lgInterrupt `json:"interrupts"`
	Error          any                      `json:"error,omitempty"`
}

// appendEmptyThread appends t, a thread with no metadata, values, interrupts
// nor error (one just created), as encoding/json writes it; it reports false
// for any other thread, or a time encoding/json refuses.
func appendEmptyThread(b []byte, t *thread) ([]byte, bool) {
	if len(t.Metadata) > 0 || len(t.Config) > 0 || t.Values != nil || len(t.Interrupts) > 0 || t.Error != nil ||
		t.Metadata == nil || t.Config == nil || t.Interrupts == nil {
		return b, false
	}
	ok := true
	b = append(b, `{"thread_id":`...)
	b = jsonappend.String(b, t.ThreadID)
	b = append(b, `,"created_at":`...)
	b, ok = appendTime(b, t.CreatedAt, ok)
	b = append(b, `,"updated_at":`...)
	b, ok = appendTime(b, t.UpdatedAt, ok)
	b = append(b, `,"state_updated_at":`...)
	b, ok = appendTime(b, t.StateUpdatedAt, ok)
	b = append(b, `,"metadata":{},"status":`...)
	b = jsonappend.String(b, t.Status)
	return append(b, `,"config":{},"interrupts":{}}`...), ok
}

// threadStatus is a stored status as LangGraph names it.
func threadStatus(s interlude.ThreadStatus) string {
	switch s {
	case interlude.ThreadRunning:
		return "busy"
	case interlude.ThreadInterrupted:
		return "interrupted"
	case interlude.ThreadFailed:
		return "error"
	}
	return "idle"
}

// storeStatus is the stored status a LangGraph status filter names.
func storeStatus(s string) (interlude.ThreadStatus, error) {
	switch s {
	case "idle":
		return interlude.ThreadIdle, nil
	case "busy":
		return interlude.ThreadRunning, nil
	case "interrupted":
		return interlude.ThreadInterrupted, nil
	case "error":
		return interlude.ThreadFailed, nil
	}
	return "", badRequest("status %q is not one of idle, busy, interrupted, error", s)
}

// threadView is a thread as read for a LangGraph client.
type threadView struct {
	thread thread
	snap   *graph.Snapshot[json.RawMessage] // nil for a thread without a run yet
	graph  graph.Erased
}

// errThreadNotFound is LangGraph's refusal of an unknown thread.
func errThreadNotFound(id string) error {
	return notFound("Thread with ID %s not found", id)
}

// load reads a thread: from the store once it has run, else from the book.
func (h *Handler) load(ctx context.Context, id string) (*threadView, error) {
	rec, inBook := h.threads.get(ctx, id)
	g, err := h.host.GraphFor(ctx, id)
	if errors.Is(err, interlude.ErrNotFound) {
		if !inBook {
			return nil, errThreadNotFound(id)
		}
		return h.bookView(id, rec), nil
	}
	if err != nil {
		return nil, err
	}
	snap, err := g.State(ctx, id)
	if errors.Is(err, interlude.ErrNotFound) {
		return nil, errThreadNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	md := rec.metadata
	if md == nil {
		md = map[string]any{}
	}
	md["graph_id"], md["assistant_id"] = g.Name(), h.assistantID(g.Name())
	t := thread{ThreadID: id, CreatedAt: snap.CreatedAt, UpdatedAt: snap.UpdatedAt, StateUpdatedAt: snap.UpdatedAt, Metadata: md,
		Status: threadStatus(snap.Status), Config: map[string]any{}, Values: h.outValues(snap.Values),
		Interrupts: h.taskInterrupts(g.Name(), id, snap.Checkpoint, snap.Interrupts)}
	if inBook && rec.createdAt.Before(t.CreatedAt) {
		t.CreatedAt = rec.createdAt
	}
	if h.runs.active(id) {
		t.Status = "busy"
	}
	if snap.Error != "" && t.Status == "error" {
		t.Error = map[string]string{"error": "RunError", "message": snap.Error}
	}
	return &threadView{thread: t, snap: snap, graph: g}, nil
}

// bookView is a thread created here that has not run yet, as its record in
// the book tells it.
func (h *Handler) bookView(id string, rec threadRecord) *threadView {
	md := rec.metadata
	if md == nil {
		md = map[string]any{}
	}
	status := "idle"
	if h.runs.active(id) {
		status = "busy"
	}
	return &threadView{thread: thread{ThreadID: id, CreatedAt: rec.createdAt, UpdatedAt: rec.updatedAt, StateUpdatedAt: rec.updatedAt,
		Metadata: md, Status: status, Config: map[string]any{}, Interrupts: map[string][]lgInterrupt{}}}
}

// taskInterrupts keys a thread's LangGraph interrupts by the id of the task
// (node) that raised them, as Thread.interrupts does.
func (h *Handler) taskInterrupts(graphName, threadID string, version int64, pending []interlude.Interruption) map[string][]lgInterrupt {
	out := map[string][]lgInterrupt{}
	for _, g := range h.group(graphName, pending) {
		tid := taskID(threadID, version, g.node)
		out[tid] = append(out[tid], g)
	}
	return out
}

func (h *Handler) handleThreadCreate(w http.ResponseWriter, r *http.Request) {
	if err := callerOf(r).Need(auth.RoleRun, "create threads"); err != nil {
		writeError(w, err)
		return
	}
	var body struct {
		ThreadID string         `json:"thread_id"`
		Metadata map[string]any `json:"metadata"`
		IfExists string         `json:"if_exists"`
	}
	if err := h.readJSON(w, r, &body); err != nil {
		writeError(w, err)
		return
	}
	if body.IfExists != "" && body.IfExists != "raise" && body.IfExists != "do_nothing" {
		writeError(w, badRequest("if_exists %q is not one of raise, do_nothing", body.IfExists))
		return
	}
	if body.ThreadID == "" {
		// A new id names no thread yet: the book alone answers, with no
		// store read.
		id := newUUID()
		rec, err := h.threads.create(r.Context(), id, body.Metadata, h.now())
		if err != nil {
			writeError(w, err)
			return
		}
		t := h.bookView(id, rec).thread
		if data, ok := appendEmptyThread(make([]byte, 0, 256), &t); ok {
			writeRaw(w, http.StatusOK, data)
			return
		}
		writeJSON(w, http.StatusOK, t)
		return
	}
	if !host.ValidID(body.ThreadID) {
		writeError(w, badRequest("thread_id %q is not valid: use 1 to 256 letters, digits or -_.:@~+=", body.ThreadID))
		return
	}
	if tv, err := h.load(r.Context(), body.ThreadID); err == nil {
		if body.IfExists == "do_nothing" {
			writeJSON(w, http.StatusOK, tv.thread)
			return
		}
		writeError(w, conflict(string(interlude.CodeConflict), "Thread with ID %s already exists; pass if_exists: \"do_nothing\" to get it instead", body.ThreadID))
		return
	}
	if err := h.threads.merge(r.Context(), body.ThreadID, body.Metadata, h.now()); err != nil {
		writeError(w, err)
		return
	}
	tv, err := h.load(r.Context(), body.ThreadID)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, tv.thread)
}

// threadIn returns the request's thread id, or answers that it is not valid
// and returns false.
func threadIn(w http.ResponseWriter, r *http.Request) (string, bool) {
	id, err := pathThread(r)
	if err != nil {
		writeError(w, err)
	}
	return id, err == nil
}

func pathThread(r *http.Request) (string, error) {
	id := r.PathValue("tid")
	if !host.ValidID(id) {
		return "", badRequest("thread id %q is not valid", id)
	}
	return id, nil
}

func (h *Handler) handleThreadGet(w http.ResponseWriter, r *http.Request) {
	id, ok := threadIn(w, r)
	if !ok {
		return
	}
	tv, err := h.load(r.Context(), id)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, tv.thread)
}

func (h *Handler) handleThreadPatch(w http.ResponseWriter, r *http.Request) {
	if err := callerOf(r).Need(auth.RoleRun, "change threads"); err != nil {
		writeError(w, err)
		return
	}
	id, ok := threadIn(w, r)
	if !ok {
		return
	}
	var body struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := h.readJSON(w, r, &body); err != nil {
		writeError(w, err)
		return
	}
	tv, err := h.load(r.Context(), id)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(body.Metadata) > 0 || tv.snap == nil {
		// A stored thread's record holds only metadata: none is no change.
		if err := h.threads.merge(r.Context(), id, body.Metadata, h.now()); err != nil {
			writeError(w, err)
			return
		}
	}
	tv, err = h.load(r.Context(), id)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, tv.thread)
}

func (h *Handler) handleThreadDelete(w http.ResponseWriter, r *http.Request) {
	if err := callerOf(r).Need(auth.RoleAdmin, "delete threads"); err != nil {
		writeError(w, err)
		return
	}
	id, ok := threadIn(w, r)
	if !ok {
		return
	}
	_, inBook := h.threads.get(r.Context(), id)
	ctx := context.WithoutCancel(r.Context())
	err := h.host.Delete(ctx, id)
	switch {
	case errors.Is(err, interlude.ErrNotFound):
		if !inBook {
			writeError(w, errThreadNotFound(id))
			return
		}
	case err != nil:
		writeError(w, err)
		return
	}
	h.threads.forget(ctx, id)
	h.runs.forgetThread(ctx, id)
	w.WriteHeader(http.StatusNoContent)
}

// handleThreadCopy copies a thread under a new id: its values, history and
// status as stored (store.Copier), and the metadata clients set; not its runs.
// Pending questions are asked again on the copy, with ids of its own.
func (h *Handler) handleThreadCopy(w http.ResponseWriter, r *http.Request) {
	if err := callerOf(r).Need(auth.RoleRun, "create threads"); err != nil {
		writeError(w, err)
		return
	}
	id, ok := threadIn(w, r)
	if !ok {
		return
	}
	ctx := context.WithoutCancel(r.Context())
	src, err := h.load(ctx, id)
	if err != nil {
		writeError(w, err)
		return
	}
	to := newUUID()
	if src.snap != nil {
		cp, ok := store.As[store.Copier](h.host.Store())
		if !ok {
			writeError(w, unsupported("this server's store cannot copy threads; use the sqlite, postgres or memory store"))
			return
		}
		if err := cp.CopyThread(ctx, id, to); err != nil {
			writeError(w, err)
			return
		}
		if len(src.snap.Interrupts) > 0 {
			// A question's id is the thread's own: the copy asks its pending
			// questions again (a fork of its latest checkpoint), under ids
			// its answers reach.
			if _, err := src.graph.Fork(ctx, to, src.snap.Checkpoint); err != nil {
				h.host.Delete(ctx, to)
				writeError(w, err)
				return
			}
		}
	}
	md := map[string]any{}
	if rec, ok := h.threads.get(ctx, id); ok {
		md = rec.metadata
	}
	if len(md) > 0 || src.snap == nil {
		if err := h.threads.merge(ctx, to, md, h.now()); err != nil {
			writeError(w, err)
			return
		}
	}
	tv, err := h.load(ctx, to)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, tv.thread)
}

// searchBody is the body of POST /threads/search and /threads/count.
type searchBody struct {
	Metadata  map[string]any `json:"metadata"`
	Values    map[string]any `json:"values"`
	IDs       []string       `json:"ids"`
	Status    string         `json:"status"`
	Limit     *int           `json:"limit"`
	Offset    int            `json:"offset"`
	SortBy    string         `json:"sort_by"`
	SortOrder string         `json:"sort_order"`
}

// searchCap bounds how many threads one search reads: a listing's cost is
// bounded whatever the store holds.
const searchCap = 10000

// candidate is what a search knows of a thread before reading it whole.
type candidate struct {
	id               string
	graph            string
	status           string
	created, updated time.Time
	metadata         map[string]any
}

// search returns the threads matching the filters, sorted, and how many match.
// It reads only the store's index and this process's metadata, except for a
// values filter, and reads in full only the threads of the page it returns
// (offset, limit).
func (h *Handler) search(ctx context.Context, b searchBody, offset, limit int) ([]thread, int, error) {
	q := store.Query{Limit: 1000}
	if b.Status != "" {
		st, err := storeStatus(b.Status)
		if err != nil {
			return nil, 0, err
		}
		if st != interlude.ThreadRunning { // busy also covers threads a run of this process holds
			q.Status = st
		}
	}
	md := maps.Clone(b.Metadata)
	if gid, ok := md["graph_id"].(string); ok {
		q.Graph = gid
		delete(md, "graph_id")
	}
	if aid, ok := md["assistant_id"].(string); ok {
		name, err := h.assistantGraph(aid)
		if err != nil || (q.Graph != "" && q.Graph != name) {
			return []thread{}, 0, nil // no thread of an unknown assistant
		}
		q.Graph = name
		delete(md, "assistant_id")
	}
	book, err := h.threads.all(ctx)
	if err != nil {
		return nil, 0, err
	}
	var cands []candidate
	seen := map[string]bool{}
	for len(cands) < searchCap {
		page, err := h.host.List(ctx, q)
		if err != nil {
			return nil, 0, err
		}
		for _, m := range page.Threads {
			seen[m.ThreadID] = true
			c := candidate{id: m.ThreadID, graph: m.Graph, status: threadStatus(m.Status), created: m.CreatedAt, updated: m.UpdatedAt}
			if rec, ok := book[m.ThreadID]; ok {
				c.metadata = rec.metadata
				if rec.createdAt.Before(c.created) {
					c.created = rec.createdAt
				}
			}
			cands = append(cands, c)
		}
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
	}
	if q.Graph == "" && (b.Status == "" || b.Status == "idle" || b.Status == "busy") {
		for id, rec := range book { // threads created empty, not yet stored
			if !seen[id] {
				if _, err := h.host.GraphFor(ctx, id); errors.Is(err, interlude.ErrNotFound) {
					cands = append(cands, candidate{id: id, status: "idle", created: rec.createdAt, updated: rec.updatedAt, metadata: rec.metadata})
				}
			}
		}
	}
	var ids map[string]bool
	if len(b.IDs) > 0 {
		ids = map[string]bool{}
		for _, id := range b.IDs {
			ids[id] = true
		}
	}
	kept := cands[:0]
	for _, c := range cands {
		if h.runs.active(c.id) {
			c.status = "busy"
		}
		if (ids != nil && !ids[c.id]) || (b.Status != "" && c.status != b.Status) || !contains(c.metadata, md) {
			continue
		}
		kept = append(kept, c)
	}
	sortCandidates(kept, b.SortBy, b.SortOrder)
	var out []thread
	if len(b.Values) == 0 {
		total := len(kept)
		if offset > total {
			offset = total
		}
		for _, c := range kept[offset:min(total, offset+limit)] {
			if tv, err := h.load(ctx, c.id); err == nil {
				out = append(out, tv.thread)
			}
		}
		return orNone(out), total, nil
	}
	for _, c := range kept {
		tv, err := h.load(ctx, c.id)
		if err != nil {
			continue // deleted meanwhile
		}
		var vals map[string]any
		if json.Unmarshal(tv.thread.Values, &vals) == nil && contains(vals, b.Values) {
			out = append(out, tv.thread)
		}
	}
	total := len(out)
	if offset > total {
		offset = total
	}
	return orNone(out[offset:min(total, offset+limit)]), total, nil
}

func orNone(ts []thread) []thread {
	if ts == nil {
		return []thread{}
	}
	return ts
}

func sortCandidates(cs []candidate, by, order string) {
	slices.SortStableFunc(cs, func(a, b candidate) int {
		var c int
		switch by {
		case "thread_id":
			c = strings.Compare(a.id, b.id)
		case "status":
			c = strings.Compare(a.status, b.status)
		case "updated_at":
			c = a.updated.Compare(b.updated)
		default:
			c = a.created.Compare(b.created)
		}
		if order != "asc" {
			c = -c
		}
		return c
	})
}

// contains reports whether sub is contained in m, as JSONB containment.
func contains(m, sub map[string]any) bool {
	for k, v := range sub {
		got, ok := m[k]
		if !ok || !containsValue(got, v) {
			return false
		}
	}
	return true
}

func containsValue(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		return ok && contains(g, w)
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		for _, x := range w {
			if !slices.ContainsFunc(g, func(y any) bool { return containsValue(y, x) }) {
				return false
			}
		}
		return true
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	return string(a) == string(b)
}

func (h *Handler) handleThreadSearch(w http.ResponseWriter, r *http.Request) {
	var b searchBody
	if err := h.readJSON(w, r, &b); err != nil {
		writeError(w, err)
		return
	}
	limit := 10
	if b.Limit != nil {
		limit = *b.Limit
	}
	if limit < 0 || limit > 1000 || b.Offset < 0 {
		writeError(w, badRequest("limit must be 0 to 1000 and offset at least 0"))
		return
	}
	switch b.SortBy {
	case "", "thread_id", "status", "created_at", "updated_at":
	default:
		writeError(w, badRequest("sort_by %q is not one of thread_id, status, created_at, updated_at", b.SortBy))
		return
	}
	if b.SortOrder != "" && b.SortOrder != "asc" && b.SortOrder != "desc" {
		writeError(w, badRequest("sort_order %q is not one of asc, desc", b.SortOrder))
		return
	}
	page, total, err := h.search(r.Context(), b, b.Offset, limit)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("X-Pagination-Total", strconv.Itoa(total))
	if b.Offset+len(page) < total {
		w.Header().Set("X-Pagination-Next", strconv.Itoa(b.Offset+len(page)))
	}
	writeJSON(w, http.StatusOK, page)
}

func (h *Handler) handleThreadCount(w http.ResponseWriter, r *http.Request) {
	var b searchBody
	if err := h.readJSON(w, r, &b); err != nil {
		writeError(w, err)
		return
	}
	_, total, err := h.search(r.Context(), b, 0, 0)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, total)
}

// checkpointRef is LangGraph's Checkpoint object.
type checkpointRef struct {
	ThreadID      string  `json:"thread_id"`
	CheckpointNS  string  `json:"checkpoint_ns"`
	CheckpointID  *string `json:"checkpoint_id"`
	CheckpointMap any     `json:"checkpoint_map"`
}

// stateTask is a task of a ThreadState: a node due next, with its interrupts.
type stateTask struct {
	ID         string        `json:"id"`
	Name       string        `json:"name"`
	Error      *string       `json:"error"`
	Interrupts []lgInterrupt `json:"interrupts"`
	Path       []string      `json:"path"`
	Checkpoint any           `json:"checkpoint"`
	State      any           `json:"state"`
	Result     any           `json:"result"`
}

// threadState is LangGraph's ThreadState object.
type threadState struct {
	Values             json.RawMessage `json:"values"`
	Next               []string        `json:"next"`
	Tasks              []stateTask     `json:"tasks"`
	Metadata           map[string]any  `json:"metadata"`
	CreatedAt          *time.Time      `json:"created_at"`
	Checkpoint         checkpointRef   `json:"checkpoint"`
	ParentCheckpoint   *checkpointRef  `json:"parent_checkpoint"`
	Interrupts         []lgInterrupt   `json:"interrupts"`
	CheckpointID       *string         `json:"checkpoint_id"`
	ParentCheckpointID *string         `json:"parent_checkpoint_id"`
}

// source is the LangGraph checkpoint source of a history record's kind.
func source(kind string) string {
	switch kind {
	case "input":
		return "input"
	case "update":
		return "update"
	case "fork":
		return "fork"
	}
	return "loop"
}

// stateOf turns a checkpoint into a ThreadState; parent is the checkpoint
// before it, or nil for the first.
func (h *Handler) stateOf(graphName, threadID string, c graph.Checkpoint[json.RawMessage], parent *graph.Checkpoint[json.RawMessage]) threadState {
	id := checkpointID(c.ID, c.At)
	at := c.At
	st := threadState{Values: h.outValues(c.Values), Next: orEmpty(c.Next), CreatedAt: &at,
		Checkpoint:   checkpointRef{ThreadID: threadID, CheckpointID: &id},
		CheckpointID: &id,
		Metadata: map[string]any{"graph_id": graphName, "assistant_id": h.assistantID(graphName), "source": source(c.Kind),
			"step": c.Step - 1, "thread_id": threadID, "parents": map[string]any{}, "interlude_kind": c.Kind, "interlude_version": c.ID},
	}
	if parent != nil {
		pid := checkpointID(parent.ID, parent.At)
		st.ParentCheckpoint = &checkpointRef{ThreadID: threadID, CheckpointID: &pid}
		st.ParentCheckpointID = &pid
	}
	groups := h.group(graphName, c.Interrupts)
	st.Interrupts = flat(groups)
	byNode := map[string][]lgInterrupt{}
	for _, g := range groups {
		byNode[g.node] = append(byNode[g.node], g)
	}
	names := slices.Clone(c.Next)
	for _, g := range groups {
		if !slices.Contains(names, g.node) {
			names = append(names, g.node)
		}
	}
	st.Tasks = []stateTask{}
	for _, n := range names {
		ints := byNode[n]
		if ints == nil {
			ints = []lgInterrupt{}
		}
		st.Tasks = append(st.Tasks, stateTask{ID: taskID(threadID, c.ID, n), Name: n, Interrupts: ints, Path: []string{"__pregel_pull", n}})
	}
	if c.Error != "" && c.Status == interlude.ThreadFailed {
		e := c.Error
		if len(st.Tasks) == 0 {
			st.Tasks = append(st.Tasks, stateTask{ID: taskID(threadID, c.ID, ""), Name: "", Interrupts: []lgInterrupt{}, Path: []string{}})
		}
		st.Tasks[len(st.Tasks)-1].Error = &e
	}
	return st
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// emptyState is the state of a thread that has not run yet.
func emptyState(threadID string) threadState {
	return threadState{Values: json.RawMessage("{}"), Next: []string{}, Tasks: []stateTask{}, Metadata: map[string]any{},
		Checkpoint: checkpointRef{ThreadID: threadID}, Interrupts: []lgInterrupt{}}
}

// history reads a page of a thread's states, newest first, each linked to its
// parent. before, if set, is a checkpoint id: only older ones are returned.
func (h *Handler) history(ctx context.Context, threadID string, limit int, before string) ([]threadState, error) {
	g, err := h.host.GraphFor(ctx, threadID)
	if errors.Is(err, interlude.ErrNotFound) {
		if _, ok := h.threads.get(ctx, threadID); ok {
			return []threadState{}, nil
		}
		return nil, errThreadNotFound(threadID)
	}
	if err != nil {
		return nil, err
	}
	opt := graph.HistoryOptions{Limit: limit + 1}
	if before != "" {
		v, ok := parseCheckpointID(before)
		if !ok {
			return nil, badRequest("before: %q is not a checkpoint id of this server", before)
		}
		opt.Before = v
	}
	cps, err := g.History(ctx, threadID, opt)
	if err != nil {
		return nil, err
	}
	out := []threadState{}
	for i := 0; i < len(cps) && i < limit; i++ {
		var parent *graph.Checkpoint[json.RawMessage]
		if i+1 < len(cps) {
			parent = &cps[i+1]
		}
		out = append(out, h.stateOf(g.Name(), threadID, cps[i], parent))
	}
	return out, nil
}

// stateAt reads the thread's state at a checkpoint ("" for the latest).
func (h *Handler) stateAt(ctx context.Context, threadID, checkpoint string) (threadState, error) {
	before := ""
	if checkpoint != "" {
		v, ok := parseCheckpointID(checkpoint)
		if !ok {
			return threadState{}, badRequest("%q is not a checkpoint id of this server", checkpoint)
		}
		before = checkpointID(v+1, time.Time{})
	}
	hs, err := h.history(ctx, threadID, 1, before)
	if err != nil {
		return threadState{}, err
	}
	if len(hs) == 0 {
		if checkpoint != "" {
			return threadState{}, notFound("thread %s has no checkpoint %s", threadID, checkpoint)
		}
		return emptyState(threadID), nil
	}
	if checkpoint != "" && *hs[0].CheckpointID != checkpoint {
		v, _ := parseCheckpointID(checkpoint)
		if vv, _ := parseCheckpointID(*hs[0].CheckpointID); vv != v {
			return threadState{}, notFound("thread %s has no checkpoint %s", threadID, checkpoint)
		}
	}
	return hs[0], nil
}

func (h *Handler) handleStateGet(w http.ResponseWriter, r *http.Request) {
	id, ok := threadIn(w, r)
	if !ok {
		return
	}
	st, err := h.stateAt(r.Context(), id, r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return
	}
	if v := r.URL.Query().Get("subgraphs"); r.PathValue("cid") == "" && (v == "true" || v == "1") {
		if err := h.withSubgraphs(r.Context(), id, &st); err != nil {
			writeError(w, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, st)
}

// withSubgraphs sets, in a thread's current state, the state of each task that
// runs a waiting subgraph (?subgraphs=true), with the subgraphs waiting inside
// it in its own tasks' states.
func (h *Handler) withSubgraphs(ctx context.Context, threadID string, st *threadState) error {
	g, err := h.host.GraphFor(ctx, threadID)
	if err != nil {
		return err
	}
	snap, err := g.State(ctx, threadID)
	if err != nil {
		return err
	}
	h.fillSubgraphs(g.Name(), threadID, st.Tasks, nil, snap.Subgraphs)
	return nil
}

// fillSubgraphs sets the state of each of tasks, run under namespace, that runs
// one of subs.
func (h *Handler) fillSubgraphs(graphName, threadID string, tasks []stateTask, namespace []string, subs []graph.SubgraphState) {
	for i := range tasks {
		for _, s := range subs {
			if len(s.Namespace) <= len(namespace) || !slices.Equal(s.Namespace[:len(namespace)], namespace) || s.Namespace[len(namespace)] != tasks[i].Name {
				continue
			}
			ns := strings.Join(s.Namespace, "|")
			groups := h.group(graphName, s.Interrupts)
			inner := threadState{Values: s.Values, Next: orEmpty(s.Next), Tasks: []stateTask{}, Metadata: map[string]any{"step": s.Step - 1},
				Checkpoint: checkpointRef{ThreadID: threadID, CheckpointNS: ns}, Interrupts: flat(groups)}
			names := slices.Clone(s.Next)
			for _, g := range groups {
				if !slices.Contains(names, g.node) {
					names = append(names, g.node)
				}
			}
			for _, n := range names {
				ints := []lgInterrupt{}
				for _, g := range groups {
					if g.node == n {
						ints = append(ints, g)
					}
				}
				inner.Tasks = append(inner.Tasks, stateTask{ID: taskID(threadID, 0, ns+"|"+n), Name: n, Interrupts: ints, Path: []string{"__pregel_pull", n}})
			}
			if s.Error != "" && len(inner.Tasks) > 0 {
				e := s.Error
				inner.Tasks[len(inner.Tasks)-1].Error = &e
			}
			h.fillSubgraphs(graphName, threadID, inner.Tasks, s.Namespace, subs)
			tasks[i].State = inner
			break
		}
	}
}

func (h *Handler) handleStateCheckpoint(w http.ResponseWriter, r *http.Request) {
	id, ok := threadIn(w, r)
	if !ok {
		return
	}
	var body struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	if err := h.readJSON(w, r, &body); err != nil {
		writeError(w, err)
		return
	}
	st, err := h.stateAt(r.Context(), id, body.Checkpoint.CheckpointID)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (h *Handler) handleHistory(w http.ResponseWriter, r *http.Request) {
	id, ok := threadIn(w, r)
	if !ok {
		return
	}
	limit, before := 10, ""
	var err error
	if r.Method == http.MethodGet {
		if s := r.URL.Query().Get("limit"); s != "" {
			if limit, err = strconv.Atoi(s); err != nil {
				writeError(w, badRequest("limit %q is not a number", s))
				return
			}
		}
		before = r.URL.Query().Get("before")
	} else {
		var body struct {
			Limit  *int            `json:"limit"`
			Before json.RawMessage `json:"before"`
		}
		if err := h.readJSON(w, r, &body); err != nil {
			writeError(w, err)
			return
		}
		if body.Limit != nil {
			limit = *body.Limit
		}
		if before, err = checkpointArg(body.Before); err != nil {
			writeError(w, err)
			return
		}
	}
	if limit < 1 || limit > 1000 {
		writeError(w, badRequest("limit must be 1 to 1000, not %d", limit))
		return
	}
	hs, err := h.history(r.Context(), id, limit, before)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, hs)
}

// checkpointArg reads a checkpoint given as its id or as a Checkpoint object.
func checkpointArg(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var c struct {
		CheckpointID *string `json:"checkpoint_id"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", badRequest("a checkpoint must be its id or {\"checkpoint_id\": ...}: %v", err)
	}
	if c.CheckpointID == nil {
		return "", nil
	}
	return *c.CheckpointID, nil
}

// handleStatePost serves POST /threads/{id}/state: the values are written
// through the graph's reducers as if node as_node had written them (its
// successors then run next; "__start__" makes the update act as input, and
// without as_node the nodes due stay due), and agent-inbox's "mark as
// resolved" ({"values": null, "as_node": "__end__"}) cancels every pending
// question. A thread waiting for answers refuses other updates, unchanged.
func (h *Handler) handleStatePost(w http.ResponseWriter, r *http.Request) {
	id, ok := threadIn(w, r)
	if !ok {
		return
	}
	var body struct {
		Values       json.RawMessage `json:"values"`
		AsNode       string          `json:"as_node"`
		Checkpoint   json.RawMessage `json:"checkpoint"`
		CheckpointID string          `json:"checkpoint_id"`
	}
	if err := h.readJSON(w, r, &body); err != nil {
		writeError(w, err)
		return
	}
	resolve := isNull(body.Values) && body.AsNode == graph.End
	role, doing := auth.RoleRun, "change a thread's state"
	if resolve {
		role, doing = auth.RoleApprove, "answer interrupts"
	}
	if err := callerOf(r).Need(role, doing); err != nil {
		writeError(w, err)
		return
	}
	if h.runs.active(id) {
		writeError(w, conflict(string(interlude.CodeThreadBusy), "Thread %s is busy: a run is pending or running", id))
		return
	}
	var version int64
	var err error
	if resolve {
		version, err = h.cancelAll(r, id)
	} else {
		version, err = h.updateState(r, id, body.Values, body.AsNode, body.Checkpoint, body.CheckpointID)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	cid := checkpointID(version, time.Time{})
	if st, err := h.stateAt(r.Context(), id, ""); err == nil && st.CheckpointID != nil {
		cid = *st.CheckpointID
	}
	writeJSON(w, http.StatusOK, map[string]any{"checkpoint": checkpointRef{ThreadID: id, CheckpointID: &cid}})
}

// updateState applies POST /threads/{id}/state's values to the thread and
// returns its version after.
func (h *Handler) updateState(r *http.Request, id string, values json.RawMessage, asNode string, cp json.RawMessage, cpID string) (int64, error) {
	ctx := interlude.WithActor(context.WithoutCancel(r.Context()), callerOf(r).Name)
	var upd json.RawMessage
	if !isNull(values) {
		var err error
		if upd, err = updateObject(values); err != nil {
			return 0, unsupported("values must be an object of state fields (or [field, value] pairs): Interlude applies one update at a time")
		}
	}
	at, err := checkpointArg(cp)
	if err != nil {
		return 0, err
	}
	if at == "" {
		at = cpID
	}
	if err := h.exists(ctx, id); err != nil {
		return 0, err
	}
	held, err := h.host.Hold(ctx, id, "", true)
	if err != nil {
		return 0, err
	}
	defer held.Release()
	if at != "" {
		if st, err := h.stateAt(ctx, id, ""); err != nil || st.CheckpointID == nil || !sameCheckpoint(*st.CheckpointID, at) {
			return 0, unsupported("an update of an earlier checkpoint is not supported: Interlude updates a thread at its latest checkpoint; fork the thread from %s first (a run with only checkpoint_id)", at)
		}
	}
	u := graph.StateUpdate{AsNode: asNode}
	switch asNode {
	case "", graph.Start:
	case graph.End:
		u.AsNode, u.Goto = "", []string{graph.End}
	default:
		if !slices.Contains(held.Graph.Nodes(), asNode) {
			return 0, badRequest("as_node %q is not a node of graph %s (%s)", asNode, held.Graph.Name(), strings.Join(held.Graph.Nodes(), ", "))
		}
	}
	if upd != nil {
		u.Values = upd
	}
	res, err := held.UpdateState(ctx, u)
	if err != nil {
		return 0, h.withLangGraphIDs(ctx, held, id, err)
	}
	return res.Checkpoint, nil
}

// sameCheckpoint reports whether two checkpoint ids name the same version.
func sameCheckpoint(a, b string) bool {
	va, ok1 := parseCheckpointID(a)
	vb, ok2 := parseCheckpointID(b)
	return ok1 && ok2 && va == vb
}

// cancelAll cancels every pending question of the thread (none pending is no
// change) and returns the thread's version after.
func (h *Handler) cancelAll(r *http.Request, id string) (int64, error) {
	ctx := interlude.WithAnswerer(context.WithoutCancel(r.Context()), callerOf(r).Answerer())
	held, err := h.host.Hold(ctx, id, "", false)
	if errors.Is(err, interlude.ErrNotFound) {
		if _, ok := h.threads.get(ctx, id); ok {
			return 0, nil
		}
		return 0, errThreadNotFound(id)
	}
	if err != nil {
		return 0, err
	}
	defer held.Release()
	snap, err := held.Graph.State(ctx, id)
	if err != nil {
		return 0, err
	}
	if len(snap.Interrupts) == 0 {
		return snap.Checkpoint, nil
	}
	answers := map[string]interlude.Resolution{}
	for _, q := range snap.Interrupts {
		answers[q.ID] = interlude.Cancel()
	}
	res, err := held.Invoke(ctx, graph.Respond(answers))
	if res == nil {
		if err == nil {
			err = fmt.Errorf("the graph returned no result")
		}
		return 0, err
	}
	return res.Checkpoint, nil
}
