package langgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/server/auth"
	"github.com/interludehq/interlude/server/internal/eventstream"
	"github.com/interludehq/interlude/store"
)

// runMode is how a run-creating route answers.
type runMode int

const (
	modeBackground runMode = iota // POST .../runs: the Run object at once
	modeStream                    // POST .../runs/stream: its events as SSE
	modeWait                      // POST .../runs/wait: its output
)

// runCreate is LangGraph's RunCreate body.
type runCreate struct {
	AssistantID       string          `json:"assistant_id"`
	Input             json.RawMessage `json:"input"`
	Command           *command        `json:"command"`
	Metadata          map[string]any  `json:"metadata"`
	Config            map[string]any  `json:"config"`
	Context           map[string]any  `json:"context"`
	Checkpoint        json.RawMessage `json:"checkpoint"`
	CheckpointID      string          `json:"checkpoint_id"`
	StreamMode        json.RawMessage `json:"stream_mode"`
	StreamSubgraphs   bool            `json:"stream_subgraphs"`
	StreamResumable   bool            `json:"stream_resumable"`
	InterruptBefore   json.RawMessage `json:"interrupt_before"`
	InterruptAfter    json.RawMessage `json:"interrupt_after"`
	MultitaskStrategy string          `json:"multitask_strategy"`
	IfNotExists       string          `json:"if_not_exists"`
	OnDisconnect      string          `json:"on_disconnect"`
	OnCompletion      string          `json:"on_completion"`
	AfterSeconds      float64         `json:"after_seconds"`
	Webhook           string          `json:"webhook"`
}

// command is LangGraph's Command: resume, update and goto.
type command struct {
	Resume json.RawMessage `json:"resume"`
	Update json.RawMessage `json:"update"`
	Goto   json.RawMessage `json:"goto"`
}

// defaultModes and defaultModeList are the stream modes of a run that names
// none, as most waited runs do; shared, they are never changed.
var (
	defaultModes    = map[string]bool{"values": true}
	defaultModeList = []string{"values"}
)

// streamModes reads stream_mode, a string or a list (default values). The
// set and list it returns are not to be changed.
func streamModes(raw json.RawMessage) (map[string]bool, []string, error) {
	if isNull(raw) {
		return defaultModes, defaultModeList, nil
	}
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, nil, badRequest("stream_mode must be a mode or a list of modes")
	}
	if len(list) == 0 {
		return defaultModes, defaultModeList, nil
	}
	set := map[string]bool{}
	for _, m := range list {
		switch m {
		case "values", "updates", "messages", "messages-tuple", "custom", "events", "debug", "tasks", "checkpoints", "tools":
			set[m] = true
		default:
			return nil, nil, badRequest("unknown stream_mode %q", m)
		}
	}
	return set, list, nil
}

// event is one SSE event of a run.
type event struct {
	name string
	data json.RawMessage
}

// run is a run of this process: its Run object, the events it produced and
// its output. Runs live in the memory of the process that runs them.
type run struct {
	ID          string
	ThreadID    string
	AssistantID string
	graphName   string
	Metadata    map[string]any
	Kwargs      json.RawMessage // encoded once, by kwargsOf (or read back from its record)
	Multitask   string
	CreatedAt   time.Time
	resumable   bool
	stateless   bool
	waited      bool // POST .../runs/wait: only its output is read
	bookChecked bool // the thread needs no look-up in the book once held (stateless, or looked up before)
	temporary   bool // a stateless run whose thread goes when it ends
	modes       map[string]bool

	mu        sync.Mutex
	status    string
	updatedAt time.Time
	events    []event
	dropped   int // events dropped from the front of the log
	// lastValues is the state the values mode sent last, which the run's end
	// does not send again.
	lastValues json.RawMessage
	changed    chan struct{} // closed when an event is added or the run ends
	output     json.RawMessage
	cancel     context.CancelFunc
	cancelled  bool
	begun      bool // it started (was not refused)
	// storedThread says the run stored its thread, which was not stored
	// before (it may have had a record in the thread book).
	storedThread bool
	heldAt       time.Time // when it took its thread, before its first commit
	// ending is the record the commit that ended its graph's run carried
	// (endDocuments), and documented says it is the run's record as it ended:
	// nothing more to write.
	ending     *endRecord
	documented bool
	done       chan struct{}
	started    chan error // receives nil once running, or the refusal
}

// maxLogEvents bounds the events a run keeps for joining and reconnecting.
const maxLogEvents = 10000

func (ru *run) add(name string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw, _ = json.Marshal(map[string]string{"error": "EncodingError", "message": err.Error()})
		name = "error"
	}
	ru.addEncoded(name, raw)
}

// addEncoded adds an event whose data is already encoded as encoding/json
// encodes it (compact, with its escapes), as add would have written it.
func (ru *run) addEncoded(name string, raw json.RawMessage) {
	ru.mu.Lock()
	ru.events = append(ru.events, event{name: name, data: raw})
	if len(ru.events) > maxLogEvents {
		n := len(ru.events) - maxLogEvents
		ru.events = slices.Clone(ru.events[n:])
		ru.dropped += n
	}
	close(ru.changed)
	ru.changed = make(chan struct{})
	ru.mu.Unlock()
}

// since returns the events from index from on, the index after them, a channel
// closed at the next change, and whether the run has ended.
func (ru *run) since(from int) ([]event, int, int, <-chan struct{}, bool) {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if from < ru.dropped {
		from = ru.dropped
	}
	evs := slices.Clone(ru.events[from-ru.dropped:])
	select {
	case <-ru.done:
		return evs, from, from + len(evs), ru.changed, true
	default:
	}
	return evs, from, from + len(evs), ru.changed, false
}

func (ru *run) setStatus(s string) {
	ru.mu.Lock()
	ru.status, ru.updatedAt = s, time.Now()
	ru.mu.Unlock()
}

// runObject is LangGraph's Run object.
type runObject struct {
	RunID       string          `json:"run_id"`
	ThreadID    string          `json:"thread_id"`
	AssistantID string          `json:"assistant_id"`
	Metadata    map[string]any  `json:"metadata"`
	Status      string          `json:"status"`
	Kwargs      json.RawMessage `json:"kwargs"`
	Multitask   string          `json:"multitask_strategy"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

// object is the Run object.
func (ru *run) object() runObject {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	return runObject{RunID: ru.ID, ThreadID: ru.ThreadID, AssistantID: ru.AssistantID, Metadata: ru.Metadata,
		Status: ru.status, Kwargs: ru.Kwargs, Multitask: ru.Multitask, CreatedAt: ru.CreatedAt, UpdatedAt: ru.updatedAt}
}

func (ru *run) ended() bool {
	select {
	case <-ru.done:
		return true
	default:
		return false
	}
}

// runBook is this process's runs, by id and by thread, and, in a store with
// documents (store.Documents), every run's Run object and output, which
// outlive the process and are read by every replica.
type runBook struct {
	docs     store.Documents // nil: runs live in this process only
	mu       sync.Mutex
	byID     map[string]*run
	byThread map[string][]*run
	order    []*run // oldest first, to forget finished runs beyond maxRuns
}

// maxRunsPerThread and maxRuns bound the finished runs remembered, per thread
// and in all: the oldest are forgotten first. In the store's documents, a
// run's end forgets its thread's runs beyond the newest maxRunsPerThread one
// time in pruneEvery, picked at random: a listing costs a read, and a thread
// keeps a few more runs for a while (pruneEvery on average) instead. The run
// that stores its thread forgets none: its thread has had no other run that
// committed.
const (
	maxRunsPerThread = 100
	maxRuns          = 10000
	pruneEvery       = 8
)

func newRunBook(docs store.Documents) *runBook {
	return &runBook{docs: docs, byID: map[string]*run{}, byThread: map[string][]*run{}}
}

// runDoc is the kind of a run's record in the store's documents.
const runDoc = "langgraph.run"

// storedRun is a run's record in the store's documents.
type storedRun struct {
	Run    runObject       `json:"run"`
	Output json.RawMessage `json:"output,omitempty"`
}

// persist records the run as it is now in the store's documents.
func (b *runBook) persist(ctx context.Context, ru *run) error {
	if b.docs == nil {
		return nil
	}
	o := ru.object()
	ru.mu.Lock()
	out := ru.output
	ru.mu.Unlock()
	d, err := runDocument(o, out)
	if err != nil {
		return err
	}
	return b.docs.PutDocument(ctx, d)
}

// runDocument is the record of a run whose Run object is o and output out.
func runDocument(o runObject, out json.RawMessage) (store.Document, error) {
	data, ok := appendStoredRun(make([]byte, 0, 512+len(out)), o, out)
	if !ok {
		var err error
		if data, err = json.Marshal(storedRun{Run: o, Output: out}); err != nil {
			return store.Document{}, err
		}
	}
	return store.Document{ThreadID: o.ThreadID, Kind: runDoc, Key: o.RunID, Data: data, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}, nil
}

// appendStoredRun appends a run's record as json.Marshal(storedRun{o, out})
// writes it, field by field: a run writes its record in the commit that ends
// it, and the reflection of a map of kwargs cost more than the rest of the
// record. It reports false for a record it does not write as encoding/json
// would (a value that is not already compact JSON, a time out of range),
// which the caller then encodes with encoding/json.
func appendStoredRun(b []byte, o runObject, out json.RawMessage) ([]byte, bool) {
	ok := true
	b = append(b, `{"run":{"run_id":`...)
	b = jsonappend.String(b, o.RunID)
	b = append(b, `,"thread_id":`...)
	b = jsonappend.String(b, o.ThreadID)
	b = append(b, `,"assistant_id":`...)
	b = jsonappend.String(b, o.AssistantID)
	b = append(b, `,"metadata":`...)
	b, ok = appendAnyMap(b, o.Metadata, ok)
	b = append(b, `,"status":`...)
	b = jsonappend.String(b, o.Status)
	b = append(b, `,"kwargs":`...)
	var fits bool
	if b, fits = jsonappend.Raw(b, o.Kwargs); !fits {
		return b, false
	}
	b = append(b, `,"multitask_strategy":`...)
	b = jsonappend.String(b, o.Multitask)
	b = append(b, `,"created_at":`...)
	b, ok = appendTime(b, o.CreatedAt, ok)
	b = append(b, `,"updated_at":`...)
	b, ok = appendTime(b, o.UpdatedAt, ok)
	b = append(b, '}')
	if len(out) > 0 {
		b = append(b, `,"output":`...)
		if b, fits = jsonappend.Raw(b, out); !fits {
			ok = false
		}
	}
	return append(b, '}'), ok
}

// appendTime appends t as time.Time's MarshalJSON writes it.
func appendTime(b []byte, t time.Time, ok bool) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return b, false // encoding/json refuses it; let it say so
	}
	b = append(b, '"')
	b, err := t.AppendText(b)
	return append(b, '"'), ok && err == nil
}

// appendAnyMap appends m, a map of a Run object (metadata, kwargs' config and
// context), as encoding/json writes it: keys sorted, and the values a kwargs
// map held written field by field; any other value goes through json.Marshal.
func appendAnyMap(b []byte, m map[string]any, ok bool) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), ok
	}
	b = append(b, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonappend.String(b, k)
		b = append(b, ':')
		var fits bool
		switch v := m[k].(type) {
		case nil:
			b, fits = append(b, "null"...), true
		case bool:
			b, fits = strconv.AppendBool(b, v), true
		case string:
			b, fits = jsonappend.String(b, v), true
		case []string:
			if v == nil {
				b, fits = append(b, "null"...), true
			} else {
				b, fits = jsonappend.Strings(b, v), true
			}
		case json.RawMessage:
			if v == nil { // a nil RawMessage in an interface encodes as null
				b, fits = append(b, "null"...), true
			} else {
				b, fits = jsonappend.Raw(b, v)
			}
		case *command:
			b, fits = appendCommand(b, v)
		default:
			data, err := json.Marshal(v)
			b, fits = append(b, data...), err == nil
		}
		ok = ok && fits
	}
	return append(b, '}'), ok
}

// appendCommand appends a run's command as encoding/json writes it.
func appendCommand(b []byte, c *command) ([]byte, bool) {
	if c == nil {
		return append(b, "null"...), true
	}
	ok1, ok2, ok3 := true, true, true
	b = append(b, `{"resume":`...)
	b, ok1 = jsonappend.Raw(b, c.Resume)
	b = append(b, `,"update":`...)
	b, ok2 = jsonappend.Raw(b, c.Update)
	b = append(b, `,"goto":`...)
	b, ok3 = jsonappend.Raw(b, c.Goto)
	return append(b, '}'), ok1 && ok2 && ok3
}

// kwargsOf is the kwargs of a run created by b, as json.Marshal writes the map
// {"command", "config", "context", "input", "resumable", "stream_mode",
// "subgraphs", "temporary"}, encoded once: the Run object and the run's
// record carry them as they are.
func kwargsOf(b *runCreate, modeList []string, temporary bool) json.RawMessage {
	out := make([]byte, 0, 160+len(b.Input))
	out = append(out, `{"command":`...)
	out, ok := appendCommand(out, b.Command)
	out = append(out, `,"config":`...)
	out, ok = appendAnyMap(out, b.Config, ok)
	out = append(out, `,"context":`...)
	out, ok = appendAnyMap(out, b.Context, ok)
	out = append(out, `,"input":`...)
	var fits bool
	if out, fits = jsonappend.Raw(out, b.Input); !fits {
		ok = false
	}
	out = append(out, `,"resumable":`...)
	out = strconv.AppendBool(out, b.StreamResumable)
	out = append(out, `,"stream_mode":`...)
	if modeList == nil {
		out = append(out, "null"...)
	} else {
		out = jsonappend.Strings(out, modeList)
	}
	out = append(out, `,"subgraphs":`...)
	out = strconv.AppendBool(out, b.StreamSubgraphs)
	out = append(out, `,"temporary":`...)
	out = strconv.AppendBool(out, temporary)
	out = append(out, '}')
	if ok {
		return out
	}
	// A value not already compact JSON: encoding/json compacts it.
	data, err := json.Marshal(map[string]any{"input": b.Input, "command": b.Command, "config": b.Config, "context": b.Context,
		"stream_mode": modeList, "temporary": temporary, "subgraphs": b.StreamSubgraphs, "resumable": b.StreamResumable})
	if err != nil { // values decoded from JSON encode again
		return nil
	}
	return data
}

// endRecord is what a run's record says of its end, as written with the
// commit that ended its graph's run, and what it was made from (values and
// pending), so that finish can take its output instead of encoding it again.
type endRecord struct {
	checkpoint int64
	status     string
	output     json.RawMessage
	at         time.Time
	values     json.RawMessage
	pending    []interlude.Interruption
}

// madeFrom reports whether the record's output was made from these values and
// pending interrupts.
func (e *endRecord) madeFrom(values json.RawMessage, pending []interlude.Interruption) bool {
	if !bytes.Equal(e.values, values) || len(e.pending) != len(pending) {
		return false
	}
	for i, q := range pending {
		if e.pending[i].ID != q.ID {
			return false
		}
	}
	return true
}

// emptyBookData is the data of a thread's record in the book that holds no
// metadata.
const emptyBookData = "{}"

// endDocuments returns what the commit that ends the run's graph run writes
// with it (graph.Command.WithEndDocuments): the run's record as finish will
// find it, unless the run is cancelled or fails otherwise. The run's end then
// costs no commit of its own.
func (h *Handler) endDocuments(ru *run) func(*graph.Result[json.RawMessage]) []store.DocumentWrite {
	return func(end *graph.Result[json.RawMessage]) []store.DocumentWrite {
		status, output := h.endOutput(ru, end.Status, end.Values, end.Interrupts, end.Error)
		if output == nil {
			return nil
		}
		o := ru.object()
		o.Status, o.UpdatedAt = status, h.now()
		d, err := runDocument(o, output)
		if err != nil {
			return nil
		}
		ru.mu.Lock()
		ru.ending = &endRecord{checkpoint: end.Checkpoint, status: status, output: output, at: o.UpdatedAt, values: end.Values, pending: end.Interrupts}
		ru.mu.Unlock()
		return []store.DocumentWrite{{Document: d}}
	}
}

// endOutput is a run's status and output from how its graph's run ended,
// when it was neither cancelled nor failed outside the graph: what finish
// records. A nil output is an end it cannot tell.
func (h *Handler) endOutput(ru *run, status interlude.RunStatus, values json.RawMessage, pending []interlude.Interruption, failure string) (string, json.RawMessage) {
	if status == interlude.RunFailed {
		if failure == "" {
			return "", nil
		}
		output, _ := json.Marshal(map[string]any{"__error__": map[string]string{"error": "RunError", "message": failure}})
		return "error", output
	}
	var raw json.RawMessage
	if status == interlude.RunInterrupted {
		var ok bool
		if raw, ok = appendInterrupts(make([]byte, 0, 256), pending); !ok {
			raw, _ = json.Marshal(flat(h.group(ru.graphName, pending)))
		}
	}
	return "success", outputOf(h.outValues(values), raw)
}

// interruptKey is the output field that holds a paused run's interrupts.
const interruptKey = "__interrupt__"

// outputOf is a run's output: the fields of the object values, with
// __interrupt__ set to interrupts unless nil, as encoding/json writes them
// from a map (its keys sorted). Values the state encoder wrote (compact, keys
// in order, nothing to escape) are copied with the interrupts put in place
// rather than decoded and encoded again.
func outputOf(values, interrupts json.RawMessage) json.RawMessage {
	if at, ok := canonicalObject(values, interruptKey); ok {
		out := make([]byte, 0, len(values)+len(interruptKey)+len(interrupts)+4)
		if interrupts == nil {
			return append(out, values...)
		}
		out = append(out, values[:at]...)
		if values[at] == '}' && at > 1 { // after the last of the fields
			out = append(out, ',')
		}
		out = append(out, `"`+interruptKey+`":`...)
		out = append(out, interrupts...)
		if values[at] != '}' {
			out = append(out, ',')
		}
		return append(out, values[at:]...)
	}
	out := map[string]json.RawMessage{}
	if json.Unmarshal(values, &out); out == nil { // values null
		out = map[string]json.RawMessage{}
	}
	if interrupts != nil {
		out[interruptKey] = interrupts
	}
	output, _ := json.Marshal(out)
	return output
}

// escapedInKey reports whether r is written escaped by encoding/json (or, a
// backslash, was escaped in the key as read).
func escapedInKey(r rune) bool {
	return r == '\\' || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029'
}

// canonicalObject reports whether v is a JSON object as encoding/json writes
// a map[string]json.RawMessage holding its fields: compact, its keys unique
// and sorted, without escapes in them, and nothing encoding/json would escape
// (<, >, &, U+2028, U+2029, invalid UTF-8 in a key). It also returns where a
// field named key, which v must not have, goes in it: the offset of the first
// field whose name sorts after it, or of the closing brace.
func canonicalObject(v json.RawMessage, key string) (int, bool) {
	if len(v) < 2 || v[0] != '{' || !jsonappend.Plain(v) {
		return 0, false
	}
	at := -1
	prev := ""
	i := 1
	for first := true; v[i] != '}'; first = false {
		if !first {
			if v[i] != ',' {
				return 0, false
			}
			i++
		}
		start := i
		if v[i] != '"' {
			return 0, false
		}
		end := bytes.IndexByte(v[i+1:], '"')
		if end < 0 {
			return 0, false
		}
		name := v[i+1 : i+1+end]
		if bytes.IndexFunc(name, escapedInKey) >= 0 || !utf8.Valid(name) {
			return 0, false
		}
		k := string(name)
		if (!first && k <= prev) || k == key {
			return 0, false
		}
		if at < 0 && k > key {
			at = start
		}
		prev = k
		i += end + 2
		if v[i] != ':' {
			return 0, false
		}
		i++
		// The value, up to the comma or brace that ends it.
		depth, inString := 0, false
		for ; ; i++ {
			c := v[i]
			if c == '<' || c == '>' || c == '&' || c == 0xe2 {
				return 0, false
			}
			if inString {
				switch c {
				case '\\':
					i++
				case '"':
					inString = false
				}
				continue
			}
			switch c {
			case '"':
				inString = true
			case '{', '[':
				depth++
			case '}', ']':
				if depth == 0 {
					goto next
				}
				depth--
			case ',':
				if depth == 0 {
					goto next
				}
			case ' ', '\t', '\n', '\r':
				return 0, false
			}
		}
	next:
	}
	if i != len(v)-1 {
		return 0, false
	}
	if at < 0 {
		at = i
	}
	return at, true
}

// fromDoc is a run read back from its record: ended, with its output and
// without events.
func fromDoc(d store.Document) (*run, error) {
	var sr storedRun
	if err := json.Unmarshal(d.Data, &sr); err != nil {
		return nil, fmt.Errorf("run %s of thread %s is unreadable: %w", d.Key, d.ThreadID, err)
	}
	o := sr.Run
	ru := &run{ID: o.RunID, ThreadID: o.ThreadID, AssistantID: o.AssistantID, Metadata: o.Metadata, Kwargs: o.Kwargs, Multitask: o.Multitask,
		CreatedAt: o.CreatedAt, status: o.Status, updatedAt: o.UpdatedAt, output: sr.Output, changed: make(chan struct{}), done: make(chan struct{})}
	if ru.status == "pending" || ru.status == "running" {
		// Its process stopped before it ended: its thread stayed at its last
		// checkpoint, as after a cancelled run.
		ru.status = "interrupted"
	}
	close(ru.done)
	return ru, nil
}

// stored reads a run from the store's documents, or returns nil.
func (b *runBook) stored(ctx context.Context, threadID, runID string) *run {
	if b.docs == nil || threadID == "" {
		return nil
	}
	d, err := b.docs.Document(ctx, threadID, runDoc, runID)
	if err != nil {
		return nil
	}
	ru, err := fromDoc(*d)
	if err != nil {
		return nil
	}
	return ru
}

// all lists the thread's runs, newest first: this process's, and those the
// store's documents keep.
func (b *runBook) all(ctx context.Context, threadID string) ([]*run, error) {
	runs := b.list(threadID)
	slices.Reverse(runs)
	if b.docs == nil {
		return runs, nil
	}
	ds, err := b.docs.Documents(ctx, store.DocumentQuery{Kind: runDoc, ThreadID: threadID, Limit: 10000})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, ru := range runs {
		seen[ru.ID] = true
	}
	for _, d := range ds {
		if seen[d.Key] {
			continue
		}
		if ru, err := fromDoc(d); err == nil {
			runs = append(runs, ru)
		}
	}
	slices.SortStableFunc(runs, func(a, b *run) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return runs, nil
}

// prune forgets the thread's stored runs beyond the newest maxRunsPerThread.
func (b *runBook) prune(ctx context.Context, threadID string) error {
	if b.docs == nil {
		return nil
	}
	ds, err := b.docs.Documents(ctx, store.DocumentQuery{Kind: runDoc, ThreadID: threadID, Offset: maxRunsPerThread, Limit: 10000})
	if err != nil {
		return err
	}
	for _, d := range ds {
		if err := b.docs.DeleteDocument(ctx, threadID, runDoc, d.Key); err != nil {
			return err
		}
	}
	return nil
}

// drop forgets a run here and in the store's documents.
func (b *runBook) drop(ctx context.Context, ru *run) error {
	b.forget(ru)
	if b.docs == nil {
		return nil
	}
	return b.docs.DeleteDocument(ctx, ru.ThreadID, runDoc, ru.ID)
}

func (b *runBook) add(ru *run) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.byID[ru.ID] = ru
	list := append(b.byThread[ru.ThreadID], ru)
	for len(list) > maxRunsPerThread && list[0].ended() {
		delete(b.byID, list[0].ID)
		list = list[1:]
	}
	b.byThread[ru.ThreadID] = list
	b.order = append(b.order, ru)
	for len(b.byID) > maxRuns && len(b.order) > 0 && (b.order[0].ended() || b.byID[b.order[0].ID] == nil) {
		old := b.order[0]
		b.order = b.order[1:]
		if b.byID[old.ID] == old {
			b.forgetLocked(old)
		}
	}
	if len(b.order) > 2*maxRuns { // runs forgotten otherwise linger here
		b.order = slices.DeleteFunc(b.order, func(x *run) bool { return b.byID[x.ID] != x })
	}
}

func (b *runBook) get(threadID, runID string) *run {
	b.mu.Lock()
	defer b.mu.Unlock()
	ru := b.byID[runID]
	if ru == nil || (threadID != "" && ru.ThreadID != threadID) {
		return nil
	}
	return ru
}

// activeRuns lists the thread's runs that have not ended.
func (b *runBook) activeRuns(threadID string) []*run {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*run
	for _, ru := range b.byThread[threadID] {
		if !ru.ended() {
			out = append(out, ru)
		}
	}
	return out
}

func (b *runBook) active(threadID string) bool { return len(b.activeRuns(threadID)) > 0 }

func (b *runBook) list(threadID string) []*run {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.byThread[threadID])
}

func (b *runBook) forget(ru *run) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forgetLocked(ru)
}

func (b *runBook) forgetLocked(ru *run) {
	delete(b.byID, ru.ID)
	b.byThread[ru.ThreadID] = slices.DeleteFunc(b.byThread[ru.ThreadID], func(x *run) bool { return x == ru })
	if len(b.byThread[ru.ThreadID]) == 0 {
		delete(b.byThread, ru.ThreadID)
	}
}

func (b *runBook) forgetThread(ctx context.Context, threadID string) {
	b.mu.Lock()
	for _, ru := range b.byThread[threadID] {
		delete(b.byID, ru.ID)
	}
	delete(b.byThread, threadID)
	b.mu.Unlock()
	if b.docs == nil {
		return
	}
	ds, _ := b.docs.Documents(ctx, store.DocumentQuery{Kind: runDoc, ThreadID: threadID, Limit: 10000})
	for _, d := range ds {
		b.docs.DeleteDocument(ctx, threadID, runDoc, d.Key)
	}
}

// plan is what a run will do, decided from its body before it starts.
type plan struct {
	kind   string // "input", "resume", "end" (cancel every question), "continue", "fork", "update"
	input  json.RawMessage
	resume json.RawMessage
	fork   int64
	update json.RawMessage // command.update as a JSON object of state fields, or nil
	goTo   []string        // command.goto's nodes
}

// planOf reads what the body asks, refusing what Interlude has no equivalent
// for.
func planOf(b *runCreate) (plan, error) {
	if c := b.Command; c != nil {
		var upd json.RawMessage
		var goTo []string
		var err error
		if !isNull(c.Update) {
			if upd, err = updateObject(c.Update); err != nil {
				return plan{}, err
			}
		}
		if !isNull(c.Goto) {
			if goTo, err = gotoNodes(c.Goto); err != nil {
				return plan{}, err
			}
		}
		if upd == nil && len(goTo) == 1 && goTo[0] == graph.End {
			if c.Resume != nil {
				return plan{}, badRequest(`command.goto "__end__" and command.resume cannot be combined`)
			}
			return plan{kind: "end"}, nil
		}
		if upd != nil || len(goTo) > 0 {
			return plan{kind: "update", update: upd, goTo: goTo, resume: c.Resume}, nil
		}
		if c.Resume != nil {
			return plan{kind: "resume", resume: c.Resume}, nil
		}
	}
	if !isNull(b.Input) {
		// The input came in a body that was valid JSON: an object, whose
		// messages, if it may have some, are read as LangChain's.
		if v := bytes.TrimLeft(b.Input, " \t\r\n"); v[0] != '{' {
			return plan{}, badRequest("input must be an object of state fields")
		}
		if !bytes.Contains(b.Input, []byte(`"messages"`)) && bytes.IndexByte(b.Input, '\\') < 0 {
			return plan{kind: "input", input: b.Input}, nil
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(b.Input, &obj) != nil {
			return plan{}, badRequest("input must be an object of state fields")
		}
		return plan{kind: "input", input: interludeInputOf(b.Input, obj)}, nil
	}
	return plan{kind: "continue"}, nil
}

// updateObject reads a state update given as an object of fields or as a list
// of [field, value] pairs, as LangGraph takes them, into a JSON object.
func updateObject(raw json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		return interludeInputOf(raw, obj), nil
	}
	var pairs [][2]json.RawMessage
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, badRequest(`a state update must be an object of fields or a list of ["field", value] pairs`)
	}
	obj = map[string]json.RawMessage{}
	for _, p := range pairs {
		var k string
		if json.Unmarshal(p[0], &k) != nil {
			return nil, badRequest(`a state update's pairs must be ["field", value], with the field a string`)
		}
		obj[k] = p[1]
	}
	data, _ := json.Marshal(obj)
	return interludeInput(data), nil
}

// gotoNodes reads command.goto: a node, a list of nodes, or {"node"} objects.
// A node given with input (LangGraph's Send) has no equivalent in Interlude,
// whose nodes all read the thread's state.
func gotoNodes(raw json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		items = []json.RawMessage{raw}
	}
	var out []string
	for _, it := range items {
		if json.Unmarshal(it, &one) == nil {
			out = append(out, one)
			continue
		}
		var send struct {
			Node  *string         `json:"node"`
			Input json.RawMessage `json:"input"`
		}
		if json.Unmarshal(it, &send) != nil || send.Node == nil {
			return nil, badRequest(`command.goto must be a node, a list of nodes or {"node": ...} objects`)
		}
		if !isNull(send.Input) {
			return nil, unsupported("command.goto with input (a Send to node %q) is not supported: Interlude's nodes all read the thread's state; send command.update with the fields and command.goto with the node", *send.Node)
		}
		out = append(out, *send.Node)
	}
	return out, nil
}

// checkGoto refuses nodes the graph does not have.
func checkGoto(g graph.Erased, nodes []string) error {
	for _, n := range nodes {
		if n == graph.End && len(nodes) == 1 {
			continue
		}
		if !slices.Contains(g.Nodes(), n) {
			return unsupported("command.goto names %q, which graph %s cannot go to: name its nodes (%s), or \"__end__\" alone", n, g.Name(), strings.Join(g.Nodes(), ", "))
		}
	}
	return nil
}

func (h *Handler) handleRunCreate(mode runMode) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b runCreate
		if err := h.readJSON(w, r, &b); err != nil {
			writeError(w, err)
			return
		}
		var ka *keepAlive
		if mode == modeWait {
			ka = &keepAlive{w: w, every: h.heartbeat, writeWait: h.writeWait}
		}
		ru, err := h.startRun(r, &b, ka)
		sent := ka.stop()
		if err != nil {
			if sent {
				// The status line went out with a keep-alive: the refusal
				// is the answer's body, as a run's error is.
				e := toAPIError(err)
				data, _ := json.Marshal(map[string]any{"__error__": map[string]string{"error": e.code, "message": e.message}})
				w.Write(data)
				return
			}
			writeError(w, err)
			return
		}
		if mode != modeWait { // a waited run's keep-alive set them as it started
			setRunLocation(w, ru, mode, b.StreamResumable)
		}
		switch mode {
		case modeBackground:
			writeJSON(w, http.StatusOK, ru.object())
		case modeWait:
			h.writeOutputAfter(w, r, ru, sent)
		case modeStream:
			cancelOnGone := b.OnDisconnect == "cancel"
			h.writeStream(w, r, ru, 0, cancelOnGone)
		}
	}
}

// setRunLocation sets the headers that locate the run mode answers for:
// Content-Location, and Location where a client can join it again (a waited
// run's output, a resumable stream). A stateless run's thread is gone once it
// ends, so it has no Location.
func setRunLocation(w http.ResponseWriter, ru *run, mode runMode, resumable bool) {
	if ru.stateless {
		w.Header()["Content-Location"] = []string{"/runs/" + ru.ID}
		return
	}
	var join string
	switch {
	case mode == modeWait:
		join = "/join"
	case mode == modeStream && resumable:
		join = "/stream"
	}
	// Both values share one string and one slice.
	loc := "/threads/" + ru.ThreadID + "/runs/" + ru.ID + join
	vals := []string{loc[:len(loc)-len(join)], loc}
	hd := w.Header()
	hd["Content-Location"] = vals[:1:1]
	if join != "" {
		hd["Location"] = vals[1:]
	}
}

// keepAlive keeps a waited run's connection open while its graph runs on the
// request's goroutine: each period without an answer, it sends a blank line,
// which JSON allows before the value, after the status line (200, as the
// answer will have), so that proxies and clients do not take the connection
// for idle. The LangGraph servers do the same.
type keepAlive struct {
	w         http.ResponseWriter
	every     time.Duration
	writeWait time.Duration

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
	sent    bool // the status line went out
}

// start sends the first blank line a period from now, unless stopped before;
// ru's location headers are set first. A nil keepAlive does nothing.
func (k *keepAlive) start(ru *run) {
	if k == nil {
		return
	}
	setRunLocation(k.w, ru, modeWait, false)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.timer = time.AfterFunc(k.every, k.beat)
}

func (k *keepAlive) beat() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	rc := http.NewResponseController(k.w)
	rc.SetWriteDeadline(time.Now().Add(k.writeWait))
	if !k.sent {
		k.sent = true
		setJSONHeaders(k.w.Header())
		k.w.WriteHeader(http.StatusOK)
	}
	k.w.Write([]byte("\n"))
	rc.Flush()
	k.timer.Reset(k.every)
}

// stop ends the keep-alive, once no blank line is being sent, and tells
// whether the status line went out. A nil keepAlive sent nothing.
func (k *keepAlive) stop() bool {
	if k == nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	if k.timer != nil {
		k.timer.Stop()
	}
	return k.sent
}

// startRun checks a run's body, registers the run and starts it; it returns
// once the run is running, or with the refusal that keeps it from starting
// (the thread then is as it was). A waited run (ka set) runs to its end
// before startRun returns, kept alive by ka meanwhile.
func (h *Handler) startRun(r *http.Request, b *runCreate, ka *keepAlive) (*run, error) {
	waited := ka != nil
	if b.AssistantID == "" {
		return nil, badRequest("assistant_id is required: a graph name or its assistant id")
	}
	graphName, err := h.assistantGraph(b.AssistantID)
	if err != nil {
		return nil, err
	}
	modes, modeList, err := streamModes(b.StreamMode)
	if err != nil {
		return nil, err
	}
	p, err := planOf(b)
	if err != nil {
		return nil, err
	}
	switch p.kind {
	case "resume", "end":
		err = callerOf(r).Need(auth.RoleApprove, "answer interrupts")
	case "update":
		if err = callerOf(r).Need(auth.RoleRun, "change a thread's state"); err == nil && !isNull(p.resume) {
			err = callerOf(r).Need(auth.RoleApprove, "answer interrupts")
		}
	default:
		err = callerOf(r).Need(auth.RoleRun, "start or continue threads")
	}
	if err != nil {
		return nil, err
	}
	if !isNull(b.InterruptBefore) || !isNull(b.InterruptAfter) {
		return nil, unsupported("interrupt_before and interrupt_after are set when a graph is compiled in Interlude (graph.InterruptBefore), not per run")
	}
	threadID := r.PathValue("tid")
	stateless := threadID == ""
	ctx := r.Context()
	lookup := false // the thread was looked up before its run
	if stateless {
		if p.kind == "resume" || p.kind == "end" {
			return nil, badRequest("You must provide a thread_id when resuming.")
		}
		threadID = newUUID()
	} else {
		if !host.ValidID(threadID) {
			return nil, badRequest("thread id %q is not valid", threadID)
		}
		if b.IfNotExists != "" && b.IfNotExists != "reject" && b.IfNotExists != "create" {
			return nil, badRequest("if_not_exists must be reject or create, not %q", b.IfNotExists)
		}
		// Holding the thread for the run reads it (execute): a resume or an
		// end needs it stored (execute answers an unknown thread with 404,
		// one created here without a run with 409), and any other run looks
		// for its record in the book only when the holding finds no stored
		// thread (bookChecked unset). Only a run that may create the thread,
		// or names a checkpoint, looks it up first.
		lookup = b.IfNotExists == "create" || !isNull(b.Checkpoint) || b.CheckpointID != ""
		if err := h.existsUnless(ctx, threadID, !lookup); err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.status != http.StatusNotFound || b.IfNotExists != "create" {
				return nil, err
			}
			if err := h.threads.merge(ctx, threadID, nil, h.now()); err != nil {
				return nil, err
			}
		}
	}
	cp, err := checkpointArg(b.Checkpoint)
	if err != nil {
		return nil, err
	}
	if cp == "" {
		cp = b.CheckpointID
	}
	if cp != "" && !stateless {
		if p, err = h.forkPlan(ctx, threadID, cp, p); err != nil {
			return nil, err
		}
	}
	strategy := b.MultitaskStrategy
	if strategy == "" {
		strategy = "reject"
	}
	switch strategy {
	case "reject", "enqueue":
	case "interrupt":
		for _, other := range h.runs.activeRuns(threadID) {
			other.stop()
			<-other.done
		}
	case "rollback":
		for _, other := range h.runs.activeRuns(threadID) {
			if err := h.rollback(ctx, other); err != nil {
				return nil, err
			}
		}
	default:
		return nil, badRequest("multitask_strategy must be reject, enqueue, interrupt or rollback, not %q", strategy)
	}
	if strategy == "reject" && h.runs.active(threadID) {
		return nil, conflict(string(interlude.CodeThreadBusy), "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.")
	}
	now := h.now()
	md := b.Metadata
	if md == nil {
		md = map[string]any{}
	}
	temporary := stateless && b.OnCompletion != "keep"
	ru := &run{ID: newUUID(), ThreadID: threadID, AssistantID: h.assistantID(graphName), graphName: graphName, Metadata: md, Kwargs: kwargsOf(b, modeList, temporary),
		Multitask: strategy, CreatedAt: now, resumable: b.StreamResumable, stateless: stateless, waited: waited, temporary: temporary, modes: modes,
		bookChecked: stateless || lookup, status: "pending", updatedAt: now, changed: make(chan struct{}), done: make(chan struct{}), started: make(chan error, 1)}
	runCtx, cancel := context.WithCancel(interlude.WithAnswerer(h.runCtx, callerOf(r).Answerer()))
	ru.cancel = cancel
	h.runs.add(ru)
	h.wg.Add(1)
	if waited {
		// Its answer is its output, known once it has ended (a waited run
		// starts once its graph has run, see execute): it runs on the
		// request's goroutine, which would only wait for another.
		defer h.wg.Done()
		defer cancel()
		ka.start(ru)
		h.execute(runCtx, ru, p)
		var err error
		select {
		case err = <-ru.started:
		default:
			err = errors.New("the run ended before it started")
		}
		if c := h.choresOf(ru); c != (chores{}) {
			h.wg.Add(1)
			h.runners.run(func() {
				defer h.wg.Done()
				h.doChores(ru, c)
			})
		}
		if err != nil {
			h.runs.forget(ru)
			return nil, err
		}
		return ru, nil
	}
	h.runners.run(func() {
		defer h.wg.Done()
		defer cancel()
		h.execute(runCtx, ru, p)
		h.doChores(ru, h.choresOf(ru))
	})
	select {
	case err := <-ru.started:
		if err != nil {
			h.runs.forget(ru)
			return nil, err
		}
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return ru, nil
}

// chores is the housekeeping a run's end leaves that no answer waits for.
type chores struct {
	prune bool // forget the thread's oldest runs
	drop  bool // delete the thread of a temporary run
}

// choresOf is the housekeeping the run, which has ended, leaves.
func (h *Handler) choresOf(ru *run) chores {
	ru.mu.Lock()
	begun, storedThread := ru.begun, ru.storedThread
	ru.mu.Unlock()
	return chores{
		prune: begun && !ru.temporary && !storedThread && rand.N(pruneEvery) == 0,
		drop:  ru.temporary,
	}
}

// doChores does the housekeeping c of the run.
func (h *Handler) doChores(ru *run, c chores) {
	if c.prune {
		if err := h.runs.prune(context.Background(), ru.ThreadID); err != nil {
			h.log.Warn("the thread's oldest runs could not be forgotten", "thread_id", ru.ThreadID, "err", err)
		}
	}
	if c.drop {
		h.dropThread(ru.ThreadID)
	}
}

// stop cancels the run: its thread stays at its last checkpoint.
func (ru *run) stop() {
	ru.mu.Lock()
	ru.cancelled = true
	ru.mu.Unlock()
	ru.cancel()
}

// forkPlan decides what a run that names a checkpoint does: nothing more when
// it is the thread's latest (useStream sends it with every run), otherwise a
// fork from it, which takes no input or answer.
func (h *Handler) forkPlan(ctx context.Context, threadID, cp string, p plan) (plan, error) {
	v, ok := parseCheckpointID(cp)
	if !ok {
		return p, badRequest("checkpoint_id %q is not a checkpoint id of this server", cp)
	}
	st, err := h.stateAt(ctx, threadID, "")
	if err != nil {
		return p, err
	}
	if st.CheckpointID == nil {
		return p, notFound("thread %s has no checkpoint %s", threadID, cp)
	}
	head, _ := parseCheckpointID(*st.CheckpointID)
	if v == head {
		return p, nil
	}
	if p.kind != "continue" {
		return p, unsupported("a run from an earlier checkpoint takes no input or command in Interlude: fork first (a run with only checkpoint_id), then send input to the forked thread")
	}
	if _, err := h.stateAt(ctx, threadID, cp); err != nil {
		return p, err
	}
	return plan{kind: "fork", fork: v}, nil
}

// withLangGraphIDs returns err, a refusal of a run or an update of the held
// thread, with the Interlude interrupt ids it names replaced by the ids of the
// LangGraph interrupts that stand for them, as everything else on these routes
// names interrupts; an error naming none is returned as it is.
func (h *Handler) withLangGraphIDs(ctx context.Context, held *host.Held, threadID string, err error) error {
	var ie *interlude.Error
	if !errors.As(err, &ie) || len(ie.Interrupts) == 0 {
		return err
	}
	ae := toAPIError(err)
	var groups []lgInterrupt
	if pending, _, perr := held.Pending(ctx); perr == nil {
		groups = h.group(held.Graph.Name(), pending)
	}
	earlier := h.earlierInterrupts(ctx, held.Graph, threadID)
	ids := make([]string, 0, len(ie.Interrupts))
	for _, id := range ie.Interrupts {
		lg := interruptID(id)
		if g, _, ok := findInterrupt(groups, id); ok {
			lg = g.ID
		} else if g, _ := earlier(id); g != nil {
			lg = g.ID
		}
		ae.message = strings.ReplaceAll(ae.message, id, lg)
		if !slices.Contains(ids, lg) {
			ids = append(ids, lg)
		}
	}
	ae.interrupts = ids
	if ae.code == string(interlude.CodeThreadInterrupted) {
		ae.message = fmt.Sprintf("the thread is waiting for answers to %s; answer them first (command.resume, a map {interrupt_id: value}), or end them (command.goto \"__end__\"), then send input", strings.Join(ids, ", "))
	}
	return ae
}

// resumeAtBreakpoint refuses command.resume on a thread paused at breakpoint
// brk, which asks no question, saying how to continue it.
func resumeAtBreakpoint(brk *graph.Breakpoint) error {
	return &apiError{status: http.StatusConflict, code: string(interlude.CodeNotInterrupted),
		message: fmt.Sprintf("the thread is paused at a breakpoint %s node %q and asks no question for command.resume to answer; continue it with a run that has neither input nor command (input null)", brk.When, brk.Node)}
}

// replayLookback bounds the checkpoints an answer to an interrupt no longer
// pending is looked for in, so that a mistyped id costs bounded work: answers
// sent again (a retry, a double click) are to recent questions.
const replayLookback = 1000

// earlierInterrupts finds an interrupt no longer pending on the thread in its
// newest replayLookback checkpoints, newest first, grouped as it was while it
// was pending: what an answer sent again for it is matched against.
func (h *Handler) earlierInterrupts(ctx context.Context, g graph.Erased, threadID string) earlierFunc {
	return func(id string) (*lgInterrupt, error) {
		opt := graph.HistoryOptions{Limit: 100}
		for range replayLookback / opt.Limit {
			cps, err := g.History(ctx, threadID, opt)
			if err != nil {
				return nil, err
			}
			for _, c := range cps {
				if len(c.Interrupts) == 0 {
					continue
				}
				if li, _, ok := findInterrupt(h.group(g.Name(), c.Interrupts), id); ok {
					return li, nil
				}
			}
			if len(cps) < opt.Limit {
				return nil, nil
			}
			opt.Before = cps[len(cps)-1].ID
		}
		return nil, nil
	}
}

// applyUpdate applies a run's command.update and command.goto to its held
// thread, the way LangGraph applies them before the run goes on. A thread
// waiting for answers refuses them, unchanged: an update or a goto would pass
// its questions by, which Interlude's answers never allow.
func (h *Handler) applyUpdate(ctx context.Context, held *host.Held, p plan) error {
	pending, _, err := held.Pending(ctx)
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		ids := lgIDs(h.group(held.Graph.Name(), pending))
		return &apiError{status: http.StatusConflict, code: string(interlude.CodeThreadInterrupted), interrupts: ids,
			message: "the thread is waiting for answers, which command.update and command.goto would pass by: answer them first (command.resume), then update the thread"}
	}
	if !isNull(p.resume) {
		return &apiError{status: http.StatusConflict, code: string(interlude.CodeNotInterrupted), message: "the thread has no pending interrupt for command.resume to answer"}
	}
	if err := checkGoto(held.Graph, p.goTo); err != nil {
		return err
	}
	u := graph.StateUpdate{Goto: p.goTo}
	if p.update != nil {
		u.Values = p.update
	}
	_, err = held.UpdateState(ctx, u)
	return err
}

// rollback cancels a run and undoes what it committed, as LangGraph's
// rollback does: the thread's state becomes the one it had before the run
// (graph.Erased.Fork of that checkpoint, which keeps the abandoned steps in the
// history; a question the thread was waiting on then is asked again, with a
// new id), or, for a run that created the thread, the thread is emptied, its
// metadata kept. The run is forgotten.
func (h *Handler) rollback(ctx context.Context, ru *run) error {
	if !ru.ended() {
		ru.stop()
	}
	<-ru.done
	ru.mu.Lock()
	from := ru.heldAt
	ru.mu.Unlock()
	if from.IsZero() { // it never held its thread: nothing to undo
		return h.runs.drop(ctx, ru)
	}
	g, err := h.host.GraphFor(ctx, ru.ThreadID)
	if errors.Is(err, interlude.ErrNotFound) {
		return h.runs.drop(ctx, ru)
	}
	if err != nil {
		return err
	}
	var target, head int64
	opt := graph.HistoryOptions{Limit: 100}
	for target == 0 {
		cps, err := g.History(ctx, ru.ThreadID, opt)
		if err != nil {
			return err
		}
		for _, c := range cps {
			head = max(head, c.ID)
			if c.At.Before(from) {
				target = c.ID
				break
			}
		}
		if len(cps) < opt.Limit {
			break
		}
		opt.Before = cps[len(cps)-1].ID
	}
	switch {
	case target == 0:
		rec, kept := h.threads.get(ctx, ru.ThreadID)
		if err := h.host.Delete(ctx, ru.ThreadID); err != nil && !errors.Is(err, interlude.ErrNotFound) {
			return err
		}
		if kept {
			if err := h.threads.merge(ctx, ru.ThreadID, rec.metadata, rec.createdAt); err != nil {
				return err
			}
		}
	case target != head:
		if _, err := g.Fork(ctx, ru.ThreadID, target); err != nil {
			return err
		}
	}
	return h.runs.drop(ctx, ru)
}

// dropThread deletes a stateless run's thread.
func (h *Handler) dropThread(id string) {
	ctx := context.Background()
	h.host.Delete(ctx, id)
	h.threads.forget(ctx, id)
	h.runs.forgetThread(ctx, id)
}

// execute runs the run to its end, recording its events and output.
func (h *Handler) execute(ctx context.Context, ru *run, p plan) {
	started := false
	refuse := func(err error) {
		if !started {
			started = true
			ru.started <- err
		}
	}
	defer func() {
		// The run's end is recorded before anyone learns that it ended (its
		// output is answered once done is closed), so what they learn is
		// durable.
		ru.mu.Lock()
		begun, documented := ru.begun, ru.documented
		ru.mu.Unlock()
		if begun && !ru.temporary && !documented {
			if err := h.runs.persist(context.Background(), ru); err != nil {
				h.log.Warn("the run's end could not be recorded", "thread_id", ru.ThreadID, "run_id", ru.ID, "err", err)
			}
		}
		ru.mu.Lock()
		close(ru.done)
		close(ru.changed)
		ru.changed = make(chan struct{})
		ru.mu.Unlock()
	}()
	held, err := h.host.Hold(ctx, ru.ThreadID, ru.graphName, p.kind == "input" || p.kind == "continue" || p.kind == "update")
	if err != nil {
		var ie *interlude.Error
		if errors.As(err, &ie) && ie.Code == interlude.CodeInvalidRequest {
			err = badRequest("assistant %s runs graph %q, but %s", ru.AssistantID, ru.graphName, ie.Message)
		}
		if errors.Is(err, interlude.ErrNotFound) {
			if _, ok := h.threads.get(ctx, ru.ThreadID); ok {
				err = &apiError{status: http.StatusConflict, code: string(interlude.CodeNotInterrupted), message: "the thread has not run yet, so there is nothing to resume; send input first"}
			} else {
				err = errThreadNotFound(ru.ThreadID)
			}
		}
		refuse(err)
		ru.setStatus("error")
		return
	}
	defer held.Release()
	if held.Fresh && !ru.bookChecked && !h.threads.madeHere(ru.ThreadID) {
		// No stored thread: the run may create it only if it was created
		// here without a run (POST /threads), as exists tells.
		if _, ok := h.threads.get(ctx, ru.ThreadID); !ok {
			refuse(errThreadNotFound(ru.ThreadID))
			ru.setStatus("error")
			return
		}
	}
	ru.mu.Lock()
	ru.heldAt = time.Now()
	ru.mu.Unlock()
	g := held.Graph
	var cmd graph.Command
	switch p.kind {
	case "input":
		cmd = graph.Input(p.input)
	case "continue":
		cmd = graph.Continue()
	case "update":
		if err := h.applyUpdate(ctx, held, p); err != nil {
			refuse(err)
			ru.setStatus("error")
			return
		}
		cmd = graph.Continue()
	case "resume", "end":
		pending, brk, err := held.Pending(ctx)
		if err != nil {
			refuse(err)
			ru.setStatus("error")
			return
		}
		if p.kind == "end" {
			if len(pending) == 0 {
				refuse(&apiError{status: http.StatusConflict, code: string(interlude.CodeNotInterrupted), message: `the thread has no pending question, so there is nothing for command.goto "__end__" to end`})
				ru.setStatus("error")
				return
			}
			answers := map[string]interlude.Resolution{}
			for _, q := range pending {
				answers[q.ID] = interlude.Cancel()
			}
			cmd = graph.Respond(answers)
			break
		}
		if len(pending) == 0 && brk != nil && isNull(p.resume) {
			cmd = graph.Continue()
			break
		}
		answers, err := h.answers(g.Name(), pending, p.resume, h.earlierInterrupts(ctx, g, ru.ThreadID))
		if ae, ok := err.(*apiError); ok && ae.code == string(interlude.CodeNotInterrupted) && brk != nil {
			err = resumeAtBreakpoint(brk)
		}
		if err != nil {
			refuse(err)
			ru.setStatus("error")
			return
		}
		cmd = graph.Respond(answers)
	}
	if h.runs.docs != nil && !ru.temporary {
		cmd = cmd.WithEndDocuments(h.endDocuments(ru))
	}
	var events func(func(graph.Event, error) bool)
	switch {
	case p.kind == "fork":
		events = h.forkEvents(ctx, g, ru.ThreadID, p.fork)
	case ru.waited:
		// Nobody follows a waited run's steps: run it without a stream.
		events = invokeEvents(ctx, held, ru.ThreadID, cmd)
	case ru.modes["values"]:
		events = held.Stream(ctx, cmd, graph.WithValues())
	default:
		events = held.Stream(ctx, cmd)
	}
	var end *graph.Event
	var runErr error
	for e, err := range events {
		if err != nil {
			if !started {
				refuse(h.withLangGraphIDs(ctx, held, ru.ThreadID, err))
				ru.setStatus("error")
				return
			}
			runErr = err
			continue
		}
		if !started {
			started = true
			ru.setStatus("running")
			ru.addEncoded("metadata", metadataEvent(ru))
			ru.mu.Lock()
			ru.begun = true
			ru.mu.Unlock()
			// A waited run starts once its graph has run (invokeEvents): its
			// end, recorded next, is all there is to record.
			if !ru.waited {
				if err := h.runs.persist(context.WithoutCancel(ctx), ru); err != nil {
					h.log.Warn("the run could not be recorded", "thread_id", ru.ThreadID, "run_id", ru.ID, "err", err)
				}
			}
			ru.started <- nil
			if ru.modes["events"] {
				ru.add("events", map[string]any{"event": "on_chain_start", "name": "LangGraph", "run_id": ru.ID, "tags": []string{},
					"metadata": map[string]any{"graph_id": ru.graphName, "thread_id": ru.ThreadID}, "data": map[string]any{}})
			}
		}
		switch e.Type {
		case graph.EventUpdate:
			h.emitUpdate(ru, e)
		case graph.EventMessage:
			if ru.modes["messages-tuple"] {
				if m, ok := messageChunk(ru, e); ok {
					ru.add("messages", m)
				}
			}
		case graph.EventCustom:
			if ru.modes["custom"] {
				ru.add("custom", e.Data)
			}
		case graph.EventValues:
			if ru.modes["values"] {
				v := h.outValues(e.Values)
				ru.add("values", v)
				ru.lastValues = v
			}
		case graph.EventEnd:
			ev := e
			end = &ev
		}
	}
	h.finish(ctx, g, ru, end, runErr)
	ru.mu.Lock()
	ru.storedThread = held.Fresh && end != nil
	ru.mu.Unlock()
	if ru.storedThread {
		h.threads.unmade(ru.ThreadID)
	}
}

// metadataEvent is the data of a run's first event, {"attempt": 1, "run_id":
// ..., "thread_id": ...}, as encoding/json writes it.
func metadataEvent(ru *run) json.RawMessage {
	b := make([]byte, 0, 48+len(ru.ID)+len(ru.ThreadID))
	b = append(b, `{"attempt":1,"run_id":`...)
	b = jsonappend.String(b, ru.ID)
	b = append(b, `,"thread_id":`...)
	b = jsonappend.String(b, ru.ThreadID)
	return append(b, '}')
}

// invokeEvents runs the command without a stream, reported as the end of a run.
func invokeEvents(ctx context.Context, held *host.Held, threadID string, cmd graph.Command) func(func(graph.Event, error) bool) {
	return func(yield func(graph.Event, error) bool) {
		res, err := held.Invoke(ctx, cmd)
		if res == nil || (err != nil && res.Status != interlude.RunFailed) {
			if err == nil {
				err = errors.New("the graph returned no result")
			}
			yield(graph.Event{}, err)
			return
		}
		if !yield(graph.Event{Type: graph.EventMetadata, ThreadID: threadID}, nil) {
			return
		}
		if !yield(graph.Event{Type: graph.EventEnd, ThreadID: threadID, Status: res.Status, Values: res.Values, Interrupts: res.Interrupts,
			Next: res.Next, Error: res.Error, Checkpoint: res.Checkpoint}, nil) {
			return
		}
		if err != nil {
			yield(graph.Event{}, err)
		}
	}
}

// forkEvents forks the thread from a checkpoint, reported as the end of a run.
func (h *Handler) forkEvents(ctx context.Context, g graph.Erased, threadID string, version int64) func(func(graph.Event, error) bool) {
	return func(yield func(graph.Event, error) bool) {
		res, err := g.Fork(ctx, threadID, version)
		if res == nil {
			if err == nil {
				err = errors.New("the graph returned no result")
			}
			yield(graph.Event{}, err)
			return
		}
		if !yield(graph.Event{Type: graph.EventMetadata, ThreadID: threadID}, nil) {
			return
		}
		yield(graph.Event{Type: graph.EventEnd, ThreadID: threadID, Status: res.Status, Values: res.Values, Interrupts: res.Interrupts,
			Next: res.Next, Error: res.Error, Checkpoint: res.Checkpoint}, nil)
	}
}

// emitUpdate records a node's update in the modes that show it.
func (h *Handler) emitUpdate(ru *run, e graph.Event) {
	update := lcValues(e.Update)
	if len(update) == 0 {
		update = json.RawMessage("{}")
	}
	if ru.modes["updates"] {
		ru.add("updates", map[string]json.RawMessage{e.Node: update})
	}
	if ru.modes["tasks"] || ru.modes["debug"] {
		var fields map[string]json.RawMessage
		json.Unmarshal(update, &fields)
		result := [][2]any{}
		for _, k := range sortedKeys(fields) {
			result = append(result, [2]any{k, fields[k]})
		}
		task := map[string]any{"id": taskID(ru.ThreadID, e.Checkpoint, e.Node), "name": e.Node, "result": result, "interrupts": []any{}, "error": nil}
		if ru.modes["tasks"] {
			ru.add("tasks", task)
		}
		if ru.modes["debug"] {
			ru.add("debug", map[string]any{"type": "task_result", "timestamp": e.At, "step": e.Step, "payload": task})
		}
	}
	if ru.modes["events"] {
		ru.add("events", map[string]any{"event": "on_chain_end", "name": e.Node, "run_id": ru.ID, "tags": []string{},
			"metadata": map[string]any{"langgraph_node": e.Node, "langgraph_step": e.Step}, "data": map[string]any{"output": update}})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// finish records the run's end: the final values (with __interrupt__ when it
// paused), the interrupts as an update, or the error, and its output.
func (h *Handler) finish(ctx context.Context, g graph.Erased, ru *run, end *graph.Event, runErr error) {
	ru.mu.Lock()
	cancelled, ending := ru.cancelled, ru.ending
	ru.mu.Unlock()
	res, _ := host.Outcome(context.WithoutCancel(ctx), g, ru.ThreadID, end)
	values, pending, status, failure := res.Values, res.Interrupts, res.Status, res.Error
	switch {
	case cancelled || (runErr != nil && errors.Is(runErr, context.Canceled)):
		ru.add("error", map[string]string{"error": "UserInterrupt", "message": "the run was cancelled; the thread stays at its last checkpoint"})
		ru.output, _ = json.Marshal(map[string]any{"__error__": map[string]string{"error": "UserInterrupt", "message": "the run was cancelled"}})
		ru.setStatus("interrupted")
		return
	case status == interlude.RunFailed || (runErr != nil && end == nil):
		msg := failure
		if msg == "" && runErr != nil {
			msg = runErr.Error()
		}
		if runErr != nil {
			h.log.Warn("run failed", "graph", ru.graphName, "thread_id", ru.ThreadID, "run_id", ru.ID, "err", runErr)
		}
		e := map[string]string{"error": "RunError", "message": msg}
		ru.add("error", e)
		ru.output, _ = json.Marshal(map[string]any{"__error__": e})
		ru.setStatus("error")
		ru.settle(end)
		return
	}
	// The output is encoded once, for the values event and the answer: by
	// the commit that ended the run (endDocuments), when it was made from
	// the same end, or here.
	var output json.RawMessage
	if ending != nil && end != nil && ending.checkpoint == end.Checkpoint && ending.status == "success" && ending.madeFrom(values, pending) {
		output = ending.output
	}
	if status == interlude.RunInterrupted && (output == nil || ru.modes["updates"]) {
		raw, _ := json.Marshal(flat(h.group(ru.graphName, pending)))
		if ru.modes["updates"] {
			ru.add("updates", map[string]json.RawMessage{"__interrupt__": raw})
		}
		if output == nil {
			out := map[string]json.RawMessage{}
			json.Unmarshal(h.outValues(values), &out)
			out["__interrupt__"] = raw
			output, _ = json.Marshal(out)
		}
	}
	if output == nil {
		out := map[string]json.RawMessage{}
		json.Unmarshal(h.outValues(values), &out)
		output, _ = json.Marshal(out)
	}
	// out is the output as fields, read only by the modes that need them.
	out := func() map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		json.Unmarshal(output, &m)
		return m
	}
	if (ru.modes["values"] || ru.modes["messages-tuple"] || ru.modes["messages"]) && (status == interlude.RunInterrupted || ru.lastValues == nil || !sameJSON(ru.lastValues, out())) {
		ru.addEncoded("values", output)
	}
	if ru.modes["checkpoints"] {
		if st, err := h.stateAt(context.WithoutCancel(ctx), ru.ThreadID, ""); err == nil {
			ru.add("checkpoints", map[string]any{"values": st.Values, "next": st.Next, "tasks": st.Tasks, "metadata": st.Metadata,
				"config": map[string]any{"configurable": st.Checkpoint}, "parent_config": parentConfig(st)})
		}
	}
	if ru.modes["events"] {
		ru.add("events", map[string]any{"event": "on_chain_end", "name": "LangGraph", "run_id": ru.ID, "tags": []string{},
			"metadata": map[string]any{"graph_id": ru.graphName, "thread_id": ru.ThreadID}, "data": map[string]any{"output": out()}})
	}
	ru.output = output
	ru.setStatus("success")
	ru.settle(end)
}

// settle notes whether the record written with the commit that ended the
// run's graph run (endDocuments) is the run's record as it ended, and if so
// takes its time, so that the run reads the same here and from the store.
func (ru *run) settle(end *graph.Event) {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	e := ru.ending
	if e == nil || end == nil || end.Checkpoint != e.checkpoint || e.status != ru.status || !bytes.Equal(e.output, ru.output) {
		return
	}
	ru.updatedAt, ru.documented = e.at, true
}

// sameJSON reports whether raw encodes v, whatever the order of keys.
func sameJSON(raw json.RawMessage, v any) bool {
	if raw == nil {
		return false
	}
	var a any
	if json.Unmarshal(raw, &a) != nil {
		return false
	}
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(v)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func parentConfig(st threadState) any {
	if st.ParentCheckpoint == nil {
		return nil
	}
	return map[string]any{"configurable": st.ParentCheckpoint}
}

// writeOutput waits for the run's end and answers its output: the final
// values (with __interrupt__ when it paused) or {"__error__": ...}, with 200
// as LangGraph does. While it waits it sends a blank line now and then, which
// JSON allows before the value, so that the connection is not taken for idle.
func (h *Handler) writeOutput(w http.ResponseWriter, r *http.Request, ru *run) {
	h.writeOutputAfter(w, r, ru, false)
}

// writeOutputAfter is writeOutput after a keep-alive, which sent the status
// line if sent is set.
func (h *Handler) writeOutputAfter(w http.ResponseWriter, r *http.Request, ru *run, sent bool) {
	if !sent {
		setJSONHeaders(w.Header())
		w.WriteHeader(http.StatusOK)
	}
	rc := http.NewResponseController(w)
	answer := func() {
		rc.SetWriteDeadline(time.Now().Add(h.writeWait))
		w.Write(ru.output)
	}
	select {
	case <-ru.done: // as a waited run's usually is by now: no heartbeat to send
		answer()
		return
	default:
	}
	tick := time.NewTicker(h.heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ru.done:
			answer()
			return
		case <-tick.C:
			rc.SetWriteDeadline(time.Now().Add(h.writeWait))
			w.Write([]byte("\n"))
			rc.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// writeStream answers the run's events as SSE from index from on, until the
// run ends; with cancelOnGone, a client that goes away cancels the run.
func (h *Handler) writeStream(w http.ResponseWriter, r *http.Request, ru *run, from int, cancelOnGone bool) {
	ew := eventstream.New(w, true, h.writeWait)
	tick := time.NewTicker(h.heartbeat)
	defer tick.Stop()
	gone := func() {
		if cancelOnGone {
			ru.stop()
		}
	}
	for {
		evs, first, next, changed, ended := ru.since(from)
		for i, e := range evs {
			ew.SendID(e.name, e.data, int64(first+i))
		}
		if ew.Broken() {
			if !ended {
				gone()
			}
			return
		}
		from = next
		if ended {
			return
		}
		select {
		case <-changed:
		case <-tick.C:
			if ew.Comment("heartbeat"); ew.Broken() {
				gone()
				return
			}
		case <-r.Context().Done():
			gone()
			return
		}
	}
}

func (h *Handler) pathRun(r *http.Request) (*run, error) {
	tid, err := pathThread(r)
	if err != nil {
		return nil, err
	}
	ru := h.runs.get(tid, r.PathValue("rid"))
	if ru == nil {
		ru = h.runs.stored(r.Context(), tid, r.PathValue("rid"))
	}
	if ru == nil {
		return nil, notFound("Run with ID %s not found on thread %s", r.PathValue("rid"), tid)
	}
	return ru, nil
}

func (h *Handler) handleRunList(w http.ResponseWriter, r *http.Request) {
	tid, ok := threadIn(w, r)
	if !ok {
		return
	}
	if _, err := h.load(r.Context(), tid); err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	limit, offset := 10, 0
	if s := q.Get("limit"); s != "" {
		limit, _ = strconv.Atoi(s)
	}
	if s := q.Get("offset"); s != "" {
		offset, _ = strconv.Atoi(s)
	}
	runs, err := h.runs.all(r.Context(), tid)
	if err != nil {
		writeError(w, err)
		return
	}
	out := []runObject{}
	for _, ru := range runs {
		o := ru.object()
		if st := q.Get("status"); st != "" && o.Status != st {
			continue
		}
		out = append(out, o)
	}
	if offset > len(out) {
		offset = len(out)
	}
	out = out[offset:min(len(out), offset+max(limit, 0))]
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) handleRunGet(w http.ResponseWriter, r *http.Request) {
	ru, err := h.pathRun(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ru.object())
}

func (h *Handler) handleRunDelete(w http.ResponseWriter, r *http.Request) {
	if err := callerOf(r).Need(auth.RoleRun, "delete runs"); err != nil {
		writeError(w, err)
		return
	}
	ru, err := h.pathRun(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if !ru.ended() {
		writeError(w, conflict(string(interlude.CodeThreadBusy), "run %s is still going; cancel it first", ru.ID))
		return
	}
	if err := h.runs.drop(r.Context(), ru); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) handleRunJoin(w http.ResponseWriter, r *http.Request) {
	ru, err := h.pathRun(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if truthy(r.URL.Query().Get("cancel_on_disconnect")) {
		go func() {
			select {
			case <-r.Context().Done():
				ru.stop()
			case <-ru.done:
			}
		}()
	}
	h.writeOutput(w, r, ru)
}

// handleRunJoinStream joins a run's stream: a resumable run's events after
// Last-Event-ID (all of them for -1), or else those from now on.
func (h *Handler) handleRunJoinStream(w http.ResponseWriter, r *http.Request) {
	ru, err := h.pathRun(r)
	if err != nil {
		writeError(w, err)
		return
	}
	from := -1
	if last := r.Header.Get("Last-Event-ID"); last != "" && ru.resumable {
		n, err := strconv.Atoi(last)
		if err != nil || n < -1 {
			writeError(w, badRequest("Last-Event-ID %q is not an event id of this run", last))
			return
		}
		from = n + 1
	}
	if from < 0 {
		_, _, next, _, _ := ru.since(0)
		from = next
	}
	h.writeStream(w, r, ru, from, truthy(r.URL.Query().Get("cancel_on_disconnect")))
}

func truthy(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// handleRunCancel cancels a run: it stops where it is, its thread at its last
// checkpoint, and its status becomes interrupted.
func (h *Handler) handleRunCancel(w http.ResponseWriter, r *http.Request) {
	if err := callerOf(r).Need(auth.RoleRun, "cancel runs"); err != nil {
		writeError(w, err)
		return
	}
	ru, err := h.pathRun(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if a := r.URL.Query().Get("action"); a == "rollback" {
		if err := h.rollback(context.WithoutCancel(r.Context()), ru); err != nil {
			writeError(w, err)
			return
		}
		if truthy(r.URL.Query().Get("wait")) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if !ru.ended() {
		ru.stop()
	}
	if truthy(r.URL.Query().Get("wait")) {
		select {
		case <-ru.done:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// messageChunk turns a piece of model output an agent emits into LangChain's
// message chunk with its metadata, as the messages-tuple mode sends it: text,
// and tool calls as tool_call_chunks. Chunks of one model call share an id.
func messageChunk(ru *run, e graph.Event) ([2]any, bool) {
	raw, err := json.Marshal(e.Data)
	if err != nil {
		return [2]any{}, false
	}
	var c struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		Index      int    `json:"index"`
		ID         string `json:"id"`
		Name       string `json:"name"`
		InputDelta string `json:"input_delta"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return [2]any{}, false
	}
	msg := map[string]any{"type": "AIMessageChunk", "id": fmt.Sprintf("run-%s-%d", ru.ID, e.Step), "content": "", "tool_call_chunks": []any{}}
	switch c.Type {
	case "text_delta":
		msg["content"] = c.Text
	case "tool_call_start":
		msg["tool_call_chunks"] = []any{map[string]any{"id": c.ID, "name": c.Name, "args": "", "index": c.Index, "type": "tool_call_chunk"}}
	case "tool_call_delta":
		msg["tool_call_chunks"] = []any{map[string]any{"args": c.InputDelta, "index": c.Index, "type": "tool_call_chunk"}}
	default:
		return [2]any{}, false
	}
	meta := map[string]any{"langgraph_node": e.Node, "langgraph_step": e.Step, "thread_id": ru.ThreadID, "run_id": ru.ID, "tags": []string{}}
	return [2]any{msg, meta}, true
}

// existsUnless is exists, or nothing when skip is set.
func (h *Handler) existsUnless(ctx context.Context, id string, skip bool) error {
	if skip {
		return nil
	}
	return h.exists(ctx, id)
}

// exists reports, as an error, whether the thread is unknown: neither stored
// nor created here without a run.
func (h *Handler) exists(ctx context.Context, id string) error {
	if _, ok := h.threads.get(ctx, id); ok {
		return nil
	}
	_, err := h.host.Store().Meta(ctx, id)
	if errors.Is(err, interlude.ErrNotFound) {
		return errThreadNotFound(id)
	}
	return err
}
