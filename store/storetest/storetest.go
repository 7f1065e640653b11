// Package storetest is the conformance suite every store.Store passes.
//
// A store package runs it from its tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s := open(t) // a fresh, empty store
//			t.Cleanup(func() { s.Close() })
//			return s
//		}, storetest.Options{SetRecordFormat: ..., SetSnapshotFormat: ...})
//	}
//
// A store that implements store.ExpiryIndex must also pass the Expired
// subtests; for the others they skip.
//
// Each behaviour is a subtest named after it, so a failure names the rule that
// broke, and `go test -run 'TestConformance/CASConflict'` runs one of them.
//
// The package also holds the shared pieces of the store benchmarks: the synthetic
// threads a store seeds in bulk ([SyntheticThread]) and the listing benchmark
// ([BenchmarkList]), so every store is measured on the same data.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

// Options are the hooks a store gives the suite for what the Store interface
// cannot reach on purpose.
type Options struct {
	// SetRecordFormat overwrites, in place, the format version of the stored record
	// threadID@version, as a newer build of Interlude would have written it. Stores
	// refuse to append such records, so the suite needs this back door to check
	// that they also refuse to return them. Without it the unknown-format subtests
	// are skipped.
	SetRecordFormat func(s store.Store, threadID string, version int64, format int) error
	// SetSnapshotFormat overwrites, in place, the format version of threadID's
	// snapshots, like SetRecordFormat.
	SetSnapshotFormat func(s store.Store, threadID string, format int) error
	// Reopen closes s and opens the store again over the same data, as a
	// restarted process would. Without it the restart subtests are skipped.
	Reopen func(t *testing.T, s store.Store) store.Store
	// StepsKeepUpdatedAt says the store leaves a thread's UpdatedAt as it was
	// whenever store.Meta.UpdatedAt allows (a NoSync append that keeps the
	// graph, the status and the earliest expiry); without it the suite checks
	// only that it moves whenever it must.
	StepsKeepUpdatedAt bool
}

// Run runs the conformance suite. open must return a fresh, empty store for each
// call and arrange for it to be closed (t.Cleanup); every subtest opens its own.
// At most one Options may be given.
func Run(t *testing.T, open func(t *testing.T) store.Store, opts ...Options) {
	t.Helper()
	h := &harness{open: open}
	switch len(opts) {
	case 0:
	case 1:
		h.opts = opts[0]
	default:
		t.Fatal("storetest.Run takes at most one Options")
	}
	for _, c := range append([]struct {
		name string
		fn   func(*testing.T)
	}{
		{"RoundTrip", h.roundTrip},
		{"RecordsRange", h.recordsRange},
		{"MetaReplacedByEachAppend", h.metaReplaced},
		{"TimesDefaultToNow", h.timesDefaultToNow},
		{"NewThreadKeepsTheCreationTimeGiven", h.creationTimeGiven},
		{"DataIsCopied", h.dataIsCopied},
		{"BinaryAndLargeData", h.binaryAndLargeData},
		{"ManyRecordsInOneAppend", h.manyRecords},
		{"CASConflict", h.casConflict},
		{"NoSyncAppendsAreAppliedInOrderLikeOthers", h.noSyncAppends},
		{"UpdatedAtMovesWhenAStepChangesTheListing", h.stepUpdatedAt},
		{"ConcurrentAppendsToOneThread", h.concurrentOneThread},
		{"ConcurrentAppendsToManyThreads", h.concurrentManyThreads},
		{"HistoryOrder", h.historyOrder},
		{"LoadStartsFromTheNewestSnapshot", h.snapshotReplaces},
		{"HistoryPagesNewestFirstWithTheSnapshotBefore", h.historyPages},
		{"HistoryCursorIsStableWhileTheThreadGrows", h.historyGrowing},
		{"HistoryEdges", h.historyEdges},
		{"ListFilters", h.listFilters},
		{"ListOrderAndTies", h.listOrder},
		{"ListPagingVisitsEachThreadOnce", h.listPaging},
		{"ListMalformedCursor", h.listMalformedCursor},
		{"ListLimitDefaultAndCap", h.listLimit},
		{"Delete", h.delete},
		{"RecreateAfterDelete", h.recreateAfterDelete},
		{"UnknownFormatRefusedOnAppend", h.unknownFormatOnAppend},
		{"UnknownRecordFormatRefusedOnRead", h.unknownRecordFormat},
		{"UnknownSnapshotFormatRefusedOnRead", h.unknownSnapshotFormat},
		{"InvalidAppendRefused", h.invalidAppend},
		{"UnknownThread", h.unknownThread},
		{"ContextCancelled", h.contextCancelled},
	}, slices.Concat(h.expiryCases(), h.recoveryCases(), h.outboxCases(), h.documentCases())...) {
		t.Run(c.name, c.fn)
	}
}

type harness struct {
	open func(t *testing.T) store.Store
	opts Options
}

// base is the time the suite's explicit timestamps count from.
var base = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)

func rec(version int64, data string) store.Record {
	return store.Record{Version: version, Format: store.FormatVersion, Kind: "step", Data: []byte(data)}
}

// question returns an interrupt with every field set, including characters that
// trip naive encoders (NUL, HTML, non-ASCII) and numbers that lose precision as
// float64.
func question(id string) interlude.Interruption {
	exp := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	return interlude.Interruption{
		ID:         id,
		Name:       "approve",
		Node:       "refund",
		Path:       []string{"refund", "call_1"},
		ToolCallID: "call_1",
		Message:    "Approve a refund of $150? <b>&amp;</b> \x00 ünïcode ✓ \U0001F600",
		Reason:     interlude.ReasonToolApproval,
		Value:      json.RawMessage(`{"amount": 150, "big": 12345678901234567890, "items": [1, 2.5, "x", null, true]}`),
		Schema:     json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean"}}}`),
		State:      json.RawMessage(`{"attempt":1}`),
		CreatedAt:  time.Date(2026, 2, 1, 2, 3, 4, 5, time.UTC),
		ExpiresAt:  &exp,
	}
}

// appendOK appends and fails the test on error.
func appendOK(t *testing.T, s store.Store, a store.Append) {
	t.Helper()
	if err := s.Append(context.Background(), a); err != nil {
		t.Fatalf("Append(%s, expect %d): %v", a.ThreadID, a.Expect, err)
	}
}

// step appends the records [expect+1 .. expect+n] to id, with payloads
// "<id>@<version>", and a snapshot of the last one if snap is set.
func step(t *testing.T, s store.Store, id string, expect int64, n int, snap bool, meta store.Meta) {
	t.Helper()
	a := store.Append{ThreadID: id, Expect: expect, Meta: meta}
	for i := range n {
		v := expect + int64(i) + 1
		a.Records = append(a.Records, rec(v, fmt.Sprintf("%s@%d", id, v)))
	}
	if snap {
		v := expect + int64(n)
		a.Snapshot = &store.Snapshot{Version: v, Format: store.FormatVersion, Data: []byte(fmt.Sprintf("snap %s@%d", id, v))}
	}
	appendOK(t, s, a)
}

func load(t *testing.T, s store.Store, id string) *store.Loaded {
	t.Helper()
	l, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("Load(%s): %v", id, err)
	}
	return l
}

func records(t *testing.T, s store.Store, id string, after, before int64, limit int) []store.Record {
	t.Helper()
	rs, err := s.Records(context.Background(), id, after, before, limit)
	if err != nil {
		t.Fatalf("Records(%s, %d, %d, %d): %v", id, after, before, limit, err)
	}
	return rs
}

func versions(rs []store.Record) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.Version
	}
	return out
}

func span(from, to int64) []int64 {
	out := []int64{}
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

func checkVersions(t *testing.T, what string, rs []store.Record, want []int64) {
	t.Helper()
	got := versions(rs)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: versions %v, want %v", what, got, want)
	}
}

// checkRecords checks that each record carries the payload step wrote for it.
func checkRecords(t *testing.T, id string, rs []store.Record) {
	t.Helper()
	for _, r := range rs {
		if want := fmt.Sprintf("%s@%d", id, r.Version); string(r.Data) != want {
			t.Errorf("record %s@%d has data %q, want %q", id, r.Version, r.Data, want)
		}
		if r.Format != store.FormatVersion || r.Kind != "step" {
			t.Errorf("record %s@%d has format %d kind %q, want %d %q", id, r.Version, r.Format, r.Kind, store.FormatVersion, "step")
		}
		if r.CreatedAt.IsZero() {
			t.Errorf("record %s@%d has no CreatedAt", id, r.Version)
		}
	}
}

// canonicalJSON decodes and re-encodes v so that values equal as JSON compare
// equal as strings: stores may re-encode interrupts (whitespace, key order,
// escapes) but must not change what they mean.
func canonicalJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	out, _ := json.Marshal(x)
	return string(out)
}

func checkInterrupts(t *testing.T, what string, got, want []interlude.Interruption) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if g, w := canonicalJSON(t, got), canonicalJSON(t, want); g != w {
		t.Errorf("%s: interrupts\n got %s\nwant %s", what, g, w)
	}
}

// checkMeta compares the facts the caller controls, and the version.
func checkMeta(t *testing.T, what string, got, want store.Meta) {
	t.Helper()
	if got.ThreadID != want.ThreadID || got.Graph != want.Graph || got.Status != want.Status || got.Version != want.Version {
		t.Errorf("%s: meta (id %q, graph %q, status %q, version %d), want (%q, %q, %q, %d)", what,
			got.ThreadID, got.Graph, got.Status, got.Version, want.ThreadID, want.Graph, want.Status, want.Version)
	}
	if !want.UpdatedAt.IsZero() && !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Errorf("%s: UpdatedAt %v, want %v", what, got.UpdatedAt, want.UpdatedAt)
	}
	if !want.CreatedAt.IsZero() && !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("%s: CreatedAt %v, want %v", what, got.CreatedAt, want.CreatedAt)
	}
	if got.CreatedAt.IsZero() || got.UpdatedAt.IsZero() {
		t.Errorf("%s: CreatedAt %v / UpdatedAt %v must be set", what, got.CreatedAt, got.UpdatedAt)
	}
	checkInterrupts(t, what, got.Interrupts, want.Interrupts)
}

// checkLoaded checks that a Load is consistent: the records are exactly those
// after the snapshot, up to the thread's version.
func checkLoaded(t *testing.T, id string, l *store.Loaded) {
	t.Helper()
	var after int64
	if l.Snapshot != nil {
		after = l.Snapshot.Version
	}
	checkVersions(t, "Load("+id+") records", l.Records, span(after+1, l.Meta.Version))
}

func isCode(err error, target error) bool { return errors.Is(err, target) }

func (h *harness) roundTrip(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	meta := store.Meta{Graph: "refund", Status: interlude.ThreadInterrupted,
		Interrupts: []interlude.Interruption{question("int_1"), question("int_2")}, UpdatedAt: base}
	created := base.Add(-time.Hour)
	r1, r2 := rec(1, "one"), rec(2, "two")
	r1.CreatedAt, r2.CreatedAt = created, created.Add(time.Nanosecond)
	r2.Kind = "pause"
	before := time.Now()
	appendOK(t, s, store.Append{ThreadID: "t1", Meta: meta, Records: []store.Record{r1, r2}})
	after := time.Now()

	l := load(t, s, "t1")
	want := meta
	want.ThreadID, want.Version = "t1", 2
	checkMeta(t, "Load.Meta", l.Meta, want)
	if c := l.Meta.CreatedAt; c.Before(before.Add(-time.Second)) || c.After(after.Add(time.Second)) {
		t.Errorf("CreatedAt %v is not the time of the first append (%v .. %v)", c, before, after)
	}
	if l.Snapshot != nil {
		t.Errorf("Load without a snapshot returned snapshot %+v", l.Snapshot)
	}
	if len(l.Records) != 2 {
		t.Fatalf("Load returned %d records, want 2", len(l.Records))
	}
	for i, w := range []store.Record{r1, r2} {
		g := l.Records[i]
		if g.Version != w.Version || g.Format != w.Format || g.Kind != w.Kind || !bytes.Equal(g.Data, w.Data) || !g.CreatedAt.Equal(w.CreatedAt) {
			t.Errorf("record %d = %+v, want %+v", i, g, w)
		}
	}

	m, err := s.Meta(ctx, "t1")
	if err != nil {
		t.Fatalf("Meta: %v", err)
	}
	checkMeta(t, "Meta", *m, want)
	if !m.CreatedAt.Equal(l.Meta.CreatedAt) {
		t.Errorf("Meta CreatedAt %v, Load says %v", m.CreatedAt, l.Meta.CreatedAt)
	}
	if hd, ok := store.As[store.Header](s); ok {
		hm, err := hd.Head(ctx, "t1")
		if err != nil {
			t.Fatalf("Head: %v", err)
		}
		head := *m
		head.Interrupts = nil
		checkMeta(t, "Head", *hm, head)
		if !hm.CreatedAt.Equal(m.CreatedAt) {
			t.Errorf("Head CreatedAt %v, Meta says %v", hm.CreatedAt, m.CreatedAt)
		}
		if _, err := hd.Head(ctx, "never"); !isCode(err, interlude.ErrNotFound) {
			t.Errorf("Head of an unknown thread: err = %v, want ErrNotFound", err)
		}
	}
	if v, err := s.Version(ctx, "t1"); err != nil || v != 2 {
		t.Errorf("Version = %d, %v; want 2", v, err)
	}

	// A snapshot at 3, then 4 and 5: Load returns the snapshot and 4, 5 only.
	step(t, s, "t1", 2, 1, true, meta)
	step(t, s, "t1", 3, 2, false, meta)
	l = load(t, s, "t1")
	if l.Snapshot == nil || l.Snapshot.Version != 3 || l.Snapshot.Format != store.FormatVersion || string(l.Snapshot.Data) != "snap t1@3" {
		t.Fatalf("Load snapshot = %+v, want version 3 %q", l.Snapshot, "snap t1@3")
	}
	checkVersions(t, "Load records after the snapshot", l.Records, []int64{4, 5})
	checkRecords(t, "t1", l.Records)
	if l.Meta.Version != 5 {
		t.Errorf("Load version %d, want 5", l.Meta.Version)
	}
	// The records before the snapshot are still there for history.
	all := records(t, s, "t1", 0, 0, 0)
	checkVersions(t, "Records(all)", all, span(1, 5))
	if string(all[0].Data) != "one" || string(all[1].Data) != "two" {
		t.Errorf("the first records changed: %q %q", all[0].Data, all[1].Data)
	}
}

func (h *harness) recordsRange(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	step(t, s, "r", 0, 4, false, meta)
	step(t, s, "r", 4, 3, true, meta)
	step(t, s, "r", 7, 3, false, meta) // versions 1..10, snapshot at 7
	for _, c := range []struct {
		after, before int64
		limit         int
		want          []int64
	}{
		{0, 0, 0, span(1, 10)},
		{0, 0, 3, span(1, 3)},
		{3, 0, 0, span(4, 10)},
		{3, 0, 2, []int64{4, 5}},
		{2, 5, 0, []int64{3, 4, 5}}, // after < version <= before
		{2, 5, 2, []int64{3, 4}},
		{0, 1, 0, []int64{1}},
		{5, 5, 0, nil},
		{6, 5, 0, nil},
		{10, 0, 0, nil},
		{12, 0, 0, nil},
		{0, 20, 0, span(1, 10)},
		{-3, 0, 2, []int64{1, 2}},
		{0, -1, 0, span(1, 10)},
		{0, 0, -1, span(1, 10)},
	} {
		rs, err := s.Records(ctx, "r", c.after, c.before, c.limit)
		if err != nil {
			t.Errorf("Records(after %d, before %d, limit %d): %v", c.after, c.before, c.limit, err)
			continue
		}
		checkVersions(t, fmt.Sprintf("Records(after %d, before %d, limit %d)", c.after, c.before, c.limit), rs, c.want)
		checkRecords(t, "r", rs)
	}
}

func (h *harness) metaReplaced(t *testing.T) {
	s := h.open(t)
	m1 := store.Meta{Graph: "g1", Status: interlude.ThreadInterrupted, Interrupts: []interlude.Interruption{question("a")}, UpdatedAt: base}
	step(t, s, "m", 0, 1, false, m1)
	first := load(t, s, "m").Meta
	m2 := store.Meta{Graph: "g2", Status: interlude.ThreadIdle, UpdatedAt: base.Add(time.Minute),
		// The store sets these three itself; whatever the caller says is ignored.
		ThreadID: "other", Version: 99, CreatedAt: base.Add(-24 * time.Hour)}
	step(t, s, "m", 1, 1, false, m2)
	got := load(t, s, "m").Meta
	want := store.Meta{ThreadID: "m", Graph: "g2", Status: interlude.ThreadIdle, Version: 2, UpdatedAt: m2.UpdatedAt, CreatedAt: first.CreatedAt}
	checkMeta(t, "after the second append", got, want)
	if len(got.Interrupts) != 0 {
		t.Errorf("interrupts were not replaced: %+v", got.Interrupts)
	}
	if v, _ := s.Version(context.Background(), "other"); v != 0 {
		t.Errorf("Meta.ThreadID was honoured: thread %q exists", "other")
	}
}

func (h *harness) timesDefaultToNow(t *testing.T) {
	s := h.open(t)
	before := time.Now()
	step(t, s, "n", 0, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle})
	after := time.Now()
	l := load(t, s, "n")
	in := func(what string, x time.Time) {
		if x.Before(before.Add(-time.Second)) || x.After(after.Add(time.Second)) {
			t.Errorf("%s = %v, want the time of the append (%v .. %v)", what, x, before, after)
		}
	}
	in("UpdatedAt", l.Meta.UpdatedAt)
	in("CreatedAt", l.Meta.CreatedAt)
	in("record CreatedAt", l.Records[0].CreatedAt)
}

// creationTimeGiven checks that a new thread keeps the creation time its first
// append gives, to the nanosecond: the runtime knows its copy of the thread by it.
func (h *harness) creationTimeGiven(t *testing.T) {
	s := h.open(t)
	created := base.Add(-time.Hour + 123456789*time.Nanosecond)
	step(t, s, "c", 0, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle, CreatedAt: created})
	if got := load(t, s, "c").Meta.CreatedAt; !got.Equal(created) {
		t.Errorf("CreatedAt = %v, want the %v the first append gave", got, created)
	}
}

func (h *harness) dataIsCopied(t *testing.T) {
	s := h.open(t)
	data, snap := []byte("original"), []byte("snapshot")
	qs := []interlude.Interruption{question("q")}
	appendOK(t, s, store.Append{ThreadID: "c", Meta: store.Meta{Graph: "g", Status: interlude.ThreadInterrupted, Interrupts: qs},
		Records:  []store.Record{{Version: 1, Format: 1, Kind: "step", Data: data}},
		Snapshot: &store.Snapshot{Version: 1, Format: 1, Data: snap}})
	copy(data, "XXXXXXXX")
	copy(snap, "XXXXXXXX")
	qs[0].Message = "changed"
	l := load(t, s, "c")
	if string(l.Snapshot.Data) != "snapshot" {
		t.Errorf("the store kept the caller's snapshot slice: %q", l.Snapshot.Data)
	}
	if rs := records(t, s, "c", 0, 0, 0); string(rs[0].Data) != "original" {
		t.Errorf("the store kept the caller's record slice: %q", rs[0].Data)
	}
	if l.Meta.Interrupts[0].Message == "changed" {
		t.Errorf("the store kept the caller's interrupts slice")
	}
}

func (h *harness) binaryAndLargeData(t *testing.T) {
	s := h.open(t)
	bin := make([]byte, 256)
	for i := range bin {
		bin[i] = byte(i)
	}
	large := bytes.Repeat([]byte("0123456789abcdef\x00\xff"), 1<<16) // about 1 MiB
	recs := []store.Record{
		{Version: 1, Format: 1, Kind: "bin", Data: bin},
		{Version: 2, Format: 1, Kind: "large", Data: large},
		{Version: 3, Format: 1, Kind: "empty", Data: nil},
	}
	appendOK(t, s, store.Append{ThreadID: "b", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle}, Records: recs,
		Snapshot: &store.Snapshot{Version: 3, Format: 1, Data: large}})
	got := records(t, s, "b", 0, 0, 0)
	if len(got) != 3 {
		t.Fatalf("got %d records, want 3", len(got))
	}
	for i := range recs {
		if !bytes.Equal(got[i].Data, recs[i].Data) || got[i].Kind != recs[i].Kind {
			t.Errorf("record %d (%s): %d bytes back, want %d, equal %v", i+1, recs[i].Kind, len(got[i].Data), len(recs[i].Data), bytes.Equal(got[i].Data, recs[i].Data))
		}
	}
	if l := load(t, s, "b"); !bytes.Equal(l.Snapshot.Data, large) {
		t.Errorf("large snapshot: %d bytes back, want %d", len(l.Snapshot.Data), len(large))
	}
}

func (h *harness) manyRecords(t *testing.T) {
	s := h.open(t)
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	step(t, s, "many", 0, 100, false, meta)
	step(t, s, "many", 100, 100, true, meta)
	rs := records(t, s, "many", 0, 0, 0)
	checkVersions(t, "Records", rs, span(1, 200))
	checkRecords(t, "many", rs)
	if l := load(t, s, "many"); l.Meta.Version != 200 || len(l.Records) != 0 {
		t.Errorf("Load: version %d, %d records after the snapshot; want 200, 0", l.Meta.Version, len(l.Records))
	}
}

func (h *harness) casConflict(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle, UpdatedAt: base}
	step(t, s, "cas", 0, 2, true, meta)
	before := load(t, s, "cas")
	other := store.Meta{Graph: "other", Status: interlude.ThreadFailed, UpdatedAt: base.Add(time.Hour)}
	for _, expect := range []int64{0, 1, 3, 10} {
		a := store.Append{ThreadID: "cas", Expect: expect, Meta: other,
			Records:  []store.Record{rec(expect+1, "stale")},
			Snapshot: &store.Snapshot{Version: expect + 1, Format: 1, Data: []byte("stale")}}
		err := s.Append(ctx, a)
		if !isCode(err, interlude.ErrConflict) {
			t.Errorf("Append with stale Expect %d: err = %v, want ErrConflict", expect, err)
		}
	}
	after := load(t, s, "cas")
	if !reflect.DeepEqual(canonicalJSON(t, before), canonicalJSON(t, after)) {
		t.Errorf("a refused append changed the thread:\nbefore %+v\nafter  %+v", before, after)
	}
	checkVersions(t, "Records", records(t, s, "cas", 0, 0, 0), []int64{1, 2})

	// A new thread with Expect > 0 conflicts and creates nothing.
	err := s.Append(ctx, store.Append{ThreadID: "new", Expect: 4, Meta: meta, Records: []store.Record{rec(5, "x")}})
	if !isCode(err, interlude.ErrConflict) {
		t.Errorf("Append to an unknown thread with Expect 4: err = %v, want ErrConflict", err)
	}
	if v, _ := s.Version(ctx, "new"); v != 0 {
		t.Errorf("a refused append created the thread at version %d", v)
	}
	if _, err := s.Load(ctx, "new"); !isCode(err, interlude.ErrNotFound) {
		t.Errorf("Load after a refused append: err = %v, want ErrNotFound", err)
	}
	// The right Expect still works.
	step(t, s, "cas", 2, 1, false, meta)
}

// StepCase is one of the appends StepCases lists.
type StepCase struct {
	Name       string                   // what the append is, for messages
	Graph      string                   // the thread's graph after it
	Status     interlude.ThreadStatus   // the thread's status after it
	Interrupts []interlude.Interruption // the thread's pending questions after it
	Durable    bool                     // not marked NoSync
	Moves      bool                     // the thread's UpdatedAt must move to the append's time
}

// StepCases lists the appends of two runs on one thread, in order: steps
// marked NoSync that keep or change the thread's graph, status and earliest
// expiry, a pause, an answer and durable steps, each saying whether
// store.Meta.UpdatedAt must move.
func StepCases() []StepCase {
	later := base.Add(time.Hour)
	asked := []interlude.Interruption{{ID: "q1", Name: "approve", Node: "n", Path: []string{"n"}}}
	expiring := []interlude.Interruption{{ID: "q2", Name: "approve", Node: "n", Path: []string{"n"}, ExpiresAt: &later}}
	return []StepCase{
		{"the run starts", "g", interlude.ThreadRunning, nil, false, true},
		{"a step", "g", interlude.ThreadRunning, nil, false, false},
		{"a step that asks", "g", interlude.ThreadRunning, asked, false, false},
		{"a step that asks with an expiry", "g", interlude.ThreadRunning, expiring, false, true},
		{"a step keeping the expiry", "g", interlude.ThreadRunning, expiring, false, false},
		{"a step dropping the expiry", "g", interlude.ThreadRunning, asked, false, true},
		{"a pause", "g", interlude.ThreadInterrupted, asked, false, true},
		{"the answer", "g", interlude.ThreadRunning, nil, false, true},
		{"a step of another graph", "g2", interlude.ThreadRunning, nil, false, true},
		{"a durable step", "g2", interlude.ThreadRunning, nil, true, true},
		{"a step after it", "g2", interlude.ThreadRunning, nil, false, false},
		{"the end", "g2", interlude.ThreadIdle, nil, true, true},
	}
}

// Append is the case as the i-th append (from 0) to the thread, made at the
// given time, with one record holding the case's name.
func (c StepCase) Append(threadID string, i int, at time.Time) store.Append {
	v := int64(i)
	return store.Append{ThreadID: threadID, Expect: v, NoSync: !c.Durable,
		Meta:    store.Meta{Graph: c.Graph, Status: c.Status, Interrupts: c.Interrupts, UpdatedAt: at},
		Records: []store.Record{rec(v+1, c.Name)}}
}

// stepUpdatedAt appends StepCases to a thread and checks after each that
// UpdatedAt moved to the step's time whenever it must, stayed otherwise if
// the store keeps it (StepsKeepUpdatedAt), and that a listing shows the
// thread as Meta does.
func (h *harness) stepUpdatedAt(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }
	var updated time.Time
	for i, st := range StepCases() {
		appendOK(t, s, st.Append("t", i, at(i)))
		m, err := s.Meta(ctx, "t")
		if err != nil {
			t.Fatalf("after %s: Meta: %v", st.Name, err)
		}
		switch got := m.UpdatedAt; {
		case st.Moves || !h.opts.StepsKeepUpdatedAt:
			if !got.Equal(at(i)) && (st.Moves || !got.Equal(updated)) {
				t.Errorf("after %s UpdatedAt is %v, want %v", st.Name, got, at(i))
			}
		case !got.Equal(updated):
			t.Errorf("after %s UpdatedAt is %v, want %v, as before it", st.Name, got, updated)
		}
		updated = m.UpdatedAt
		if m.Graph != st.Graph || m.Status != st.Status || m.Version != int64(i+1) || len(m.Interrupts) != len(st.Interrupts) {
			t.Errorf("after %s Meta is %+v, want graph %s, status %s, version %d, %d questions", st.Name, m, st.Graph, st.Status, i+1, len(st.Interrupts))
		}
		page, err := s.List(ctx, store.Query{Status: st.Status, Graph: st.Graph})
		if err != nil {
			t.Fatalf("after %s: List: %v", st.Name, err)
		}
		if len(page.Threads) != 1 || !page.Threads[0].UpdatedAt.Equal(m.UpdatedAt) {
			t.Errorf("after %s the listing of %s threads of %s shows %+v, want the thread updated at %v", st.Name, st.Status, st.Graph, page.Threads, m.UpdatedAt)
		}
	}
}

// noSyncAppends checks that an append marked NoSync differs from others only
// in when it reaches the disk: it is seen at once, in order, by every read,
// keeps its compare-and-set, and mixes with durable appends, also from
// concurrent writers of other threads.
func (h *harness) noSyncAppends(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	meta := store.Meta{Graph: "g", Status: interlude.ThreadRunning, UpdatedAt: base}
	for v := int64(0); v < 6; v++ {
		a := store.Append{ThreadID: "lazy", Expect: v, Meta: meta, Records: []store.Record{rec(v+1, fmt.Sprintf("lazy@%d", v+1))}, NoSync: v%3 != 2}
		if v == 4 {
			a.Snapshot = &store.Snapshot{Version: v + 1, Format: store.FormatVersion, Data: []byte("snap lazy@5")}
		}
		appendOK(t, s, a)
		if got, err := s.Version(ctx, "lazy"); err != nil || got != v+1 {
			t.Fatalf("after append %d (NoSync %v) the version is %d (%v), want %d", v+1, a.NoSync, got, err, v+1)
		}
	}
	l := load(t, s, "lazy")
	if l.Snapshot == nil || l.Snapshot.Version != 5 {
		t.Fatalf("Load started from snapshot %+v, want the one at version 5", l.Snapshot)
	}
	checkVersions(t, "Load", l.Records, []int64{6})
	rs := records(t, s, "lazy", 0, 0, 0)
	checkVersions(t, "Records", rs, span(1, 6))
	checkRecords(t, "lazy", rs)
	err := s.Append(ctx, store.Append{ThreadID: "lazy", Expect: 3, Meta: meta, Records: []store.Record{rec(4, "stale")}, NoSync: true})
	if !isCode(err, interlude.ErrConflict) {
		t.Errorf("a NoSync append with stale Expect 3: err = %v, want ErrConflict", err)
	}

	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			id := fmt.Sprintf("lazy-%d", w)
			for v := int64(0); v < 10; v++ {
				a := store.Append{ThreadID: id, Expect: v, Meta: meta, Records: []store.Record{rec(v+1, fmt.Sprintf("%s@%d", id, v+1))}, NoSync: (v+int64(w))%2 == 0}
				if err := s.Append(ctx, a); err != nil {
					errs <- fmt.Errorf("%s append %d: %w", id, v+1, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range writers {
		id := fmt.Sprintf("lazy-%d", w)
		rs := records(t, s, id, 0, 0, 0)
		checkVersions(t, id, rs, span(1, 10))
		checkRecords(t, id, rs)
	}
}

func (h *harness) concurrentOneThread(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	const writers = 50
	var (
		start = make(chan struct{})
		wg    sync.WaitGroup
		errs  = make(chan error, writers)
	)
	for i := range writers {
		wg.Go(func() {
			<-start
			payload := fmt.Sprintf("writer-%02d", i)
			for {
				v, err := s.Version(ctx, "hot")
				if err != nil {
					errs <- fmt.Errorf("Version: %w", err)
					return
				}
				a := store.Append{ThreadID: "hot", Expect: v,
					Meta:    store.Meta{Graph: "g", Status: interlude.ThreadRunning},
					Records: []store.Record{{Version: v + 1, Format: 1, Kind: "step", Data: []byte(payload)}}}
				if i%5 == 0 {
					a.Snapshot = &store.Snapshot{Version: v + 1, Format: 1, Data: []byte("snap " + payload)}
				}
				err = s.Append(ctx, a)
				if err == nil {
					return
				}
				if !isCode(err, interlude.ErrConflict) {
					errs <- fmt.Errorf("writer %d: Append at %d: %w", i, v, err)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rs := records(t, s, "hot", 0, 0, 0)
	checkVersions(t, "Records", rs, span(1, writers))
	seen := map[string]int{}
	for _, r := range rs {
		seen[string(r.Data)]++
	}
	for i := range writers {
		if p := fmt.Sprintf("writer-%02d", i); seen[p] != 1 {
			t.Errorf("%s landed %d times, want exactly once", p, seen[p])
		}
	}
	l := load(t, s, "hot")
	if l.Meta.Version != writers {
		t.Errorf("version %d, want %d", l.Meta.Version, writers)
	}
	checkLoaded(t, "hot", l)
	if l.Snapshot != nil {
		if want := "snap " + string(rs[l.Snapshot.Version-1].Data); string(l.Snapshot.Data) != want {
			t.Errorf("snapshot at %d has data %q, want %q (from the append that wrote it)", l.Snapshot.Version, l.Snapshot.Data, want)
		}
	}
}

func (h *harness) concurrentManyThreads(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	const threads, steps = 12, 15
	var (
		writers, readers sync.WaitGroup
		done             = make(chan struct{})
		errs             = make(chan error, threads+4)
	)
	for i := range threads {
		writers.Go(func() {
			id := fmt.Sprintf("th-%02d", i)
			for v := range int64(steps) {
				a := store.Append{ThreadID: id, Expect: v, Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle},
					Records: []store.Record{rec(v+1, fmt.Sprintf("%s@%d", id, v+1))}}
				if v%4 == 3 {
					a.Snapshot = &store.Snapshot{Version: v + 1, Format: 1, Data: []byte("s")}
				}
				if err := s.Append(ctx, a); err != nil {
					errs <- fmt.Errorf("%s: Append at %d: %w", id, v, err)
					return
				}
			}
		})
	}
	// Readers run while the writers write: every Load they see is consistent.
	for r := range 3 {
		readers.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				id := fmt.Sprintf("th-%02d", (n+r)%threads)
				l, err := s.Load(ctx, id)
				if isCode(err, interlude.ErrNotFound) {
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("Load(%s): %w", id, err)
					return
				}
				var after int64
				if l.Snapshot != nil {
					after = l.Snapshot.Version
				}
				if got, want := versions(l.Records), span(after+1, l.Meta.Version); !slices.Equal(got, want) && len(got)+len(want) > 0 {
					errs <- fmt.Errorf("Load(%s) inconsistent: version %d, snapshot %d, records %v", id, l.Meta.Version, after, got)
					return
				}
				if _, err := s.List(ctx, store.Query{Status: interlude.ThreadIdle, Limit: 5}); err != nil {
					errs <- fmt.Errorf("List: %w", err)
					return
				}
			}
		})
	}
	writers.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range threads {
		id := fmt.Sprintf("th-%02d", i)
		rs := records(t, s, id, 0, 0, 0)
		checkVersions(t, id, rs, span(1, steps))
		checkRecords(t, id, rs)
	}
	page, err := s.List(ctx, store.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Threads) != threads {
		t.Errorf("List found %d threads, want %d", len(page.Threads), threads)
	}
}

func (h *harness) historyOrder(t *testing.T) {
	s := h.open(t)
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	kinds := []string{"input", "step", "pause", "resolve", "step"}
	var v int64
	var want []string
	for i := range 12 {
		n := 1 + i%3
		a := store.Append{ThreadID: "h", Expect: v, Meta: meta}
		for j := range n {
			v++
			k := kinds[(i+j)%len(kinds)]
			a.Records = append(a.Records, store.Record{Version: v, Format: 1, Kind: k, Data: []byte(fmt.Sprintf("%d:%s", v, k))})
			want = append(want, fmt.Sprintf("%d:%s", v, k))
		}
		if i%4 == 1 {
			a.Snapshot = &store.Snapshot{Version: v, Format: 1, Data: []byte("s")}
		}
		appendOK(t, s, a)
	}
	rs := records(t, s, "h", 0, 0, 0)
	var got []string
	for _, r := range rs {
		got = append(got, string(r.Data))
		if fmt.Sprintf("%d:%s", r.Version, r.Kind) != string(r.Data) {
			t.Errorf("record %d: kind %q does not match its data %q", r.Version, r.Kind, r.Data)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("history\n got %v\nwant %v", got, want)
	}
	// Paging through history in pages of 5 gives the same sequence.
	var paged []string
	for after := int64(0); ; {
		page := records(t, s, "h", after, 0, 5)
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			paged = append(paged, string(r.Data))
		}
		after = page[len(page)-1].Version
	}
	if !slices.Equal(paged, want) {
		t.Errorf("paged history\n got %v\nwant %v", paged, want)
	}
}

func (h *harness) snapshotReplaces(t *testing.T) {
	s := h.open(t)
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	step(t, s, "s", 0, 1, true, meta)
	step(t, s, "s", 1, 2, true, meta)
	l := load(t, s, "s")
	if l.Snapshot == nil || l.Snapshot.Version != 3 || string(l.Snapshot.Data) != "snap s@3" {
		t.Fatalf("snapshot %+v, want the one at 3", l.Snapshot)
	}
	if len(l.Records) != 0 {
		t.Errorf("Load returned records %v at the snapshot's version", versions(l.Records))
	}
	step(t, s, "s", 3, 1, false, meta)
	l = load(t, s, "s")
	if l.Snapshot.Version != 3 {
		t.Errorf("an append without a snapshot changed the snapshot to %d", l.Snapshot.Version)
	}
	checkVersions(t, "records after snapshot 3", l.Records, []int64{4})
	checkRecords(t, "s", l.Records)
	step(t, s, "s", 4, 3, true, meta)
	l = load(t, s, "s")
	if l.Snapshot.Version != 7 || string(l.Snapshot.Data) != "snap s@7" || len(l.Records) != 0 {
		t.Errorf("after a snapshot at 7: snapshot %d %q, records %v", l.Snapshot.Version, l.Snapshot.Data, versions(l.Records))
	}
	checkVersions(t, "history", records(t, s, "s", 0, 0, 0), span(1, 7))
}

// history returns the page of id's log before `before`, failing the test on
// error, after checking what every page must be: at most limit records, newest
// first and contiguous, and a base snapshot older than them with the records
// between the two.
func history(t *testing.T, s store.Store, id string, before int64, limit int) *store.HistoryPage {
	t.Helper()
	p, err := s.History(context.Background(), id, before, limit)
	if err != nil {
		t.Fatalf("History(%s, %d, %d): %v", id, before, limit, err)
	}
	if limit > 0 && len(p.Records) > limit {
		t.Fatalf("History(%s, %d, %d) returned %d records", id, before, limit, len(p.Records))
	}
	if len(p.Records) == 0 {
		if p.Base != nil || len(p.Lead) != 0 {
			t.Errorf("an empty page has a base %+v and lead %v", p.Base, versions(p.Lead))
		}
		return p
	}
	newest, oldest := p.Records[0].Version, p.Records[len(p.Records)-1].Version
	if before > 0 && newest >= before {
		t.Errorf("History(%s, before %d) returned version %d", id, before, newest)
	}
	checkVersions(t, "page", p.Records, spanDown(newest, oldest))
	checkRecords(t, id, p.Records)
	var after int64
	if p.Base != nil {
		after = p.Base.Version
		if after >= oldest {
			t.Errorf("the base snapshot %d is not older than the page's oldest record %d", after, oldest)
		}
		if want := fmt.Sprintf("snap %s@%d", id, after); string(p.Base.Data) != want {
			t.Errorf("base snapshot data %q, want %q", p.Base.Data, want)
		}
	}
	checkVersions(t, "lead", p.Lead, span(after+1, oldest-1))
	checkRecords(t, id, p.Lead)
	return p
}

func spanDown(from, to int64) []int64 {
	out := []int64{}
	for v := from; v >= to; v-- {
		out = append(out, v)
	}
	return out
}

// historyThread appends 30 records to id in appends of 1 to 4, with snapshots at
// the given versions (each must end an append), and returns them.
func historyThread(t *testing.T, s store.Store, id string) []int64 {
	t.Helper()
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	var snaps []int64
	var v int64
	for i := 0; v < 30; i++ {
		n := min(int64(1+i%4), 30-v)
		snap := i%3 == 1
		step(t, s, id, v, int(n), snap, meta)
		v += n
		if snap {
			snaps = append(snaps, v)
		}
	}
	return snaps
}

func (h *harness) historyPages(t *testing.T) {
	s := h.open(t)
	snaps := historyThread(t, s, "h")
	for _, limit := range []int{1, 3, 7, 30, 100} {
		var seen []int64
		for before := int64(0); ; {
			p := history(t, s, "h", before, limit)
			if len(p.Records) == 0 {
				break
			}
			oldest := p.Records[len(p.Records)-1].Version
			// The base is the newest snapshot older than the page.
			var want int64
			for _, v := range snaps {
				if v < oldest {
					want = v
				}
			}
			if got := p.Base; (got == nil) != (want == 0) || got != nil && got.Version != want {
				t.Errorf("limit %d, page before %d: base %+v, want the snapshot at %d", limit, before, got, want)
			}
			seen = append(seen, versions(p.Records)...)
			before = oldest
		}
		if !slices.Equal(seen, spanDown(30, 1)) {
			t.Errorf("limit %d: paging visited %v, want each of 30..1 once", limit, seen)
		}
	}
	// Without a limit the whole log is one page, from nothing.
	if p := history(t, s, "h", 0, 0); len(p.Records) != 30 || p.Base != nil {
		t.Errorf("History without a limit: %d records, base %+v", len(p.Records), p.Base)
	}
}

func (h *harness) historyGrowing(t *testing.T) {
	s := h.open(t)
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	step(t, s, "g", 0, 6, true, meta)
	step(t, s, "g", 6, 4, false, meta)
	first := history(t, s, "g", 0, 4)
	checkVersions(t, "first page", first.Records, []int64{10, 9, 8, 7})
	// The thread grows between pages: the next page still starts below the
	// first one, and a new first page starts at the new newest record.
	step(t, s, "g", 10, 5, true, meta)
	next := history(t, s, "g", 7, 4)
	checkVersions(t, "next page", next.Records, []int64{6, 5, 4, 3})
	if next.Base != nil {
		t.Errorf("the page from 3 has base %+v; the first snapshot is at 6", next.Base)
	}
	again := history(t, s, "g", 11, 4)
	checkVersions(t, "the first page again", again.Records, []int64{10, 9, 8, 7})
	if again.Base == nil || again.Base.Version != 6 {
		t.Errorf("the page from 7 has base %+v, want the snapshot at 6", again.Base)
	}
	checkVersions(t, "new first page", history(t, s, "g", 0, 4).Records, []int64{15, 14, 13, 12})
}

func (h *harness) historyEdges(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	step(t, s, "e", 0, 3, true, meta)
	// The snapshot at the newest record is no base for a page that holds it.
	if p := history(t, s, "e", 0, 1); p.Base != nil || len(p.Lead) != 2 {
		t.Errorf("latest page: base %+v, lead %v; want none and 1, 2", p.Base, versions(p.Lead))
	}
	checkVersions(t, "before past the end", history(t, s, "e", 99, 2).Records, []int64{3, 2})
	if p := history(t, s, "e", 1, 5); len(p.Records) != 0 {
		t.Errorf("History before 1 = %v, want an empty page", versions(p.Records))
	}
	for _, id := range []string{"unknown", "", "E"} {
		if _, err := s.History(ctx, id, 0, 5); !isCode(err, interlude.ErrNotFound) {
			t.Errorf("History(%q): err = %v, want ErrNotFound", id, err)
		}
	}
	if err := s.Delete(ctx, "e"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.History(ctx, "e", 0, 5); !isCode(err, interlude.ErrNotFound) {
		t.Errorf("History of a deleted thread: err = %v, want ErrNotFound", err)
	}
	// Its snapshots went with it: the thread created again starts from nothing.
	step(t, s, "e", 0, 2, false, meta)
	if p := history(t, s, "e", 0, 1); p.Base != nil {
		t.Errorf("a thread created again after a delete has the old base %+v", p.Base)
	}
}

// listThread is a thread seedList creates.
type listThread struct {
	id     string
	graph  string
	status interlude.ThreadStatus
	at     time.Time
}

// seedList creates threads with the given graph, status and UpdatedAt.
func seedList(t *testing.T, s store.Store, threads []listThread) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(threads))
	sem := make(chan struct{}, 8)
	for _, th := range threads {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			m := store.Meta{Graph: th.graph, Status: th.status, UpdatedAt: th.at}
			if th.status == interlude.ThreadInterrupted {
				m.Interrupts = []interlude.Interruption{question("int_" + th.id)}
			}
			if err := s.Append(context.Background(), store.Append{ThreadID: th.id, Meta: m, Records: []store.Record{rec(1, th.id)}}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// listAll pages through q and returns the ids in order, failing on a repeat.
func listAll(t *testing.T, s store.Store, q store.Query) ([]string, []store.Meta) {
	t.Helper()
	var ids []string
	var metas []store.Meta
	seen := map[string]bool{}
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("listing does not end")
		}
		p, err := s.List(context.Background(), q)
		if err != nil {
			t.Fatalf("List(%+v): %v", q, err)
		}
		if q.Limit > 0 && len(p.Threads) > q.Limit {
			t.Fatalf("List returned %d threads, limit %d", len(p.Threads), q.Limit)
		}
		for _, m := range p.Threads {
			if seen[m.ThreadID] {
				t.Fatalf("List returned %s twice", m.ThreadID)
			}
			seen[m.ThreadID] = true
			ids = append(ids, m.ThreadID)
			metas = append(metas, m)
		}
		if p.NextCursor == "" {
			return ids, metas
		}
		if len(p.Threads) == 0 {
			t.Fatal("List returned an empty page with a next cursor")
		}
		q.Cursor = p.NextCursor
	}
}

// expected sorts threads the way List must: newest UpdatedAt first, then thread
// id descending.
func expected(threads []listThread, keep func(listThread) bool) []string {
	var sel []listThread
	for _, th := range threads {
		if keep(th) {
			sel = append(sel, th)
		}
	}
	slices.SortFunc(sel, func(a, b listThread) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	ids := []string{}
	for _, th := range sel {
		ids = append(ids, th.id)
	}
	return ids
}

func listFixture() []listThread {
	statuses := []interlude.ThreadStatus{interlude.ThreadInterrupted, interlude.ThreadIdle, interlude.ThreadInterrupted, interlude.ThreadFailed, interlude.ThreadRunning}
	var out []listThread
	for i := range 40 {
		out = append(out, listThread{
			id:     fmt.Sprintf("thread-%02d", i),
			graph:  []string{"alpha", "beta", "gamma"}[i%3],
			status: statuses[i%len(statuses)],
			// Groups of four share a timestamp, and the groups are not in id order.
			at: base.Add(time.Duration((i*7)%10) * time.Second),
		})
	}
	return out
}

func (h *harness) listFilters(t *testing.T) {
	s := h.open(t)
	threads := listFixture()
	seedList(t, s, threads)
	for _, q := range []store.Query{
		{},
		{Status: interlude.ThreadInterrupted},
		{Status: interlude.ThreadIdle},
		{Graph: "beta"},
		{Graph: "beta", Status: interlude.ThreadInterrupted},
		{Graph: "nope"},
		{Status: interlude.ThreadInterrupted, Graph: "gamma", Limit: 2},
	} {
		got, metas := listAll(t, s, q)
		want := expected(threads, func(th listThread) bool {
			return (q.Status == "" || th.status == q.Status) && (q.Graph == "" || th.graph == q.Graph)
		})
		if len(got) == 0 {
			got = []string{}
		}
		if !slices.Equal(got, want) {
			t.Errorf("List(status %q, graph %q)\n got %v\nwant %v", q.Status, q.Graph, got, want)
		}
		for _, m := range metas {
			var th listThread
			for _, x := range threads {
				if x.id == m.ThreadID {
					th = x
				}
			}
			w := store.Meta{ThreadID: th.id, Graph: th.graph, Status: th.status, Version: 1, UpdatedAt: th.at}
			if th.status == interlude.ThreadInterrupted {
				w.Interrupts = []interlude.Interruption{question("int_" + th.id)}
			}
			checkMeta(t, "listed "+th.id, m, w)
		}
	}
}

func (h *harness) listOrder(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	threads := []listThread{
		{"a", "g", interlude.ThreadInterrupted, base},
		{"b", "g", interlude.ThreadInterrupted, base.Add(time.Nanosecond)},
		{"c", "g", interlude.ThreadInterrupted, base},
		{"B", "g", interlude.ThreadInterrupted, base},
		{"a-1", "g", interlude.ThreadInterrupted, base},
		{"d", "g", interlude.ThreadInterrupted, base.Add(-time.Nanosecond)},
		{"e", "g", interlude.ThreadInterrupted, base.Add(48 * time.Hour)},
	}
	seedList(t, s, threads)
	p, err := s.List(ctx, store.Query{Status: interlude.ThreadInterrupted})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range p.Threads {
		got = append(got, m.ThreadID)
	}
	// Ties are broken by id descending, bytewise: "c" > "a-1" > "a" > "B".
	if want := []string{"e", "b", "c", "a-1", "a", "B", "d"}; !slices.Equal(got, want) {
		t.Errorf("order\n got %v\nwant %v", got, want)
	}
	if p.NextCursor != "" {
		t.Errorf("a complete listing has next cursor %q", p.NextCursor)
	}
	// Moving a thread forward in time moves it to the front.
	appendOK(t, s, store.Append{ThreadID: "d", Expect: 1, Meta: store.Meta{Graph: "g", Status: interlude.ThreadInterrupted, UpdatedAt: base.Add(72 * time.Hour)},
		Records: []store.Record{rec(2, "d")}})
	p, err = s.List(ctx, store.Query{Status: interlude.ThreadInterrupted, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Threads) != 1 || p.Threads[0].ThreadID != "d" || p.NextCursor == "" {
		t.Errorf("after updating d: first page %+v, cursor %q; want d and a cursor", p.Threads, p.NextCursor)
	}
}

func (h *harness) listPaging(t *testing.T) {
	s := h.open(t)
	// 30 threads that all share one timestamp, 30 spread over three more: pages
	// must split ties without losing or repeating anyone.
	var threads []listThread
	for i := range 60 {
		at := base
		if i >= 30 {
			at = base.Add(time.Duration(i%3+1) * time.Millisecond)
		}
		threads = append(threads, listThread{fmt.Sprintf("p%03d", (i*37)%60), []string{"x", "y"}[i%2], interlude.ThreadInterrupted, at})
	}
	threads = append(threads, listThread{"idle-1", "x", interlude.ThreadIdle, base}, listThread{"idle-2", "x", interlude.ThreadIdle, base.Add(time.Hour)})
	seedList(t, s, threads)
	for _, limit := range []int{1, 3, 7, 29, 30, 31, 60, 61} {
		for _, graph := range []string{"", "x"} {
			q := store.Query{Status: interlude.ThreadInterrupted, Graph: graph, Limit: limit}
			got, _ := listAll(t, s, q)
			want := expected(threads, func(th listThread) bool {
				return th.status == interlude.ThreadInterrupted && (graph == "" || th.graph == graph)
			})
			if !slices.Equal(got, want) {
				t.Errorf("paging with limit %d, graph %q\n got %v\nwant %v", limit, graph, got, want)
			}
		}
	}
	// A page that ends exactly at the end of the listing has no next cursor.
	p, err := s.List(context.Background(), store.Query{Status: interlude.ThreadIdle, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Threads) != 2 || p.NextCursor != "" {
		t.Errorf("exact last page: %d threads, cursor %q; want 2 and none", len(p.Threads), p.NextCursor)
	}
}

func (h *harness) listMalformedCursor(t *testing.T) {
	s := h.open(t)
	seedList(t, s, listFixture()[:3])
	for _, c := range []string{"not a cursor!", "e30x", "%%%", "eyJ1IjoxfQ", storekit.EncodeCursor(storekit.Cursor{})[:3] + "@"} {
		_, err := s.List(context.Background(), store.Query{Cursor: c})
		if !isCode(err, interlude.ErrInvalidRequest) {
			t.Errorf("List(cursor %q): err = %v, want ErrInvalidRequest", c, err)
		}
	}
}

func (h *harness) listLimit(t *testing.T) {
	s := h.open(t)
	var threads []listThread
	for i := range 1005 {
		threads = append(threads, listThread{fmt.Sprintf("l%04d", i), "g", interlude.ThreadInterrupted, base.Add(time.Duration(i) * time.Microsecond)})
	}
	seedList(t, s, threads)
	for _, c := range []struct{ limit, want int }{{0, 50}, {-5, 50}, {1, 1}, {1000, 1000}, {1001, 1000}, {5000, 1000}} {
		p, err := s.List(context.Background(), store.Query{Status: interlude.ThreadInterrupted, Limit: c.limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Threads) != c.want || p.NextCursor == "" {
			t.Errorf("List(limit %d): %d threads, cursor %q; want %d and a cursor", c.limit, len(p.Threads), p.NextCursor, c.want)
		}
	}
	got, _ := listAll(t, s, store.Query{Status: interlude.ThreadInterrupted, Limit: 1000})
	if len(got) != len(threads) {
		t.Errorf("paging by 1000 found %d threads, want %d", len(got), len(threads))
	}
}

func (h *harness) delete(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	meta := store.Meta{Graph: "g", Status: interlude.ThreadInterrupted, Interrupts: []interlude.Interruption{question("q")}}
	step(t, s, "gone", 0, 3, true, meta)
	step(t, s, "gone", 3, 2, false, meta)
	step(t, s, "kept", 0, 2, true, meta)
	if err := s.Delete(ctx, "gone"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Load(ctx, "gone"); !isCode(err, interlude.ErrNotFound) {
		t.Errorf("Load after Delete: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Meta(ctx, "gone"); !isCode(err, interlude.ErrNotFound) {
		t.Errorf("Meta after Delete: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Records(ctx, "gone", 0, 0, 0); !isCode(err, interlude.ErrNotFound) {
		t.Errorf("Records after Delete: err = %v, want ErrNotFound", err)
	}
	if v, err := s.Version(ctx, "gone"); v != 0 || err != nil {
		t.Errorf("Version after Delete = %d, %v; want 0", v, err)
	}
	for _, q := range []store.Query{{}, {Status: interlude.ThreadInterrupted}, {Graph: "g", Status: interlude.ThreadInterrupted}} {
		ids, _ := listAll(t, s, q)
		if !slices.Equal(ids, []string{"kept"}) {
			t.Errorf("List(%+v) after Delete = %v, want [kept]", q, ids)
		}
	}
	// The other thread is untouched.
	l := load(t, s, "kept")
	if l.Meta.Version != 2 || l.Snapshot == nil || l.Snapshot.Version != 2 {
		t.Errorf("Delete touched another thread: %+v", l.Meta)
	}
	// Deleting again, or deleting what never existed, is not an error.
	if err := s.Delete(ctx, "gone"); err != nil {
		t.Errorf("second Delete: %v", err)
	}
	if err := s.Delete(ctx, "never"); err != nil {
		t.Errorf("Delete of an unknown thread: %v", err)
	}
}

func (h *harness) recreateAfterDelete(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	step(t, s, "re", 0, 4, true, meta)
	step(t, s, "re", 4, 1, false, meta)
	old := load(t, s, "re").Meta
	if err := s.Delete(ctx, "re"); err != nil {
		t.Fatal(err)
	}
	// An append that still believes in the old thread conflicts.
	err := s.Append(ctx, store.Append{ThreadID: "re", Expect: 5, Meta: meta, Records: []store.Record{rec(6, "x")}})
	if !isCode(err, interlude.ErrConflict) {
		t.Errorf("Append at the deleted version: err = %v, want ErrConflict", err)
	}
	appendOK(t, s, store.Append{ThreadID: "re", Meta: store.Meta{Graph: "g2", Status: interlude.ThreadIdle},
		Records: []store.Record{{Version: 1, Format: 1, Kind: "step", Data: []byte("new life")}}})
	l := load(t, s, "re")
	if l.Meta.Version != 1 || l.Meta.Graph != "g2" || l.Snapshot != nil {
		t.Errorf("recreated thread: version %d, graph %q, snapshot %+v; want 1, g2, none", l.Meta.Version, l.Meta.Graph, l.Snapshot)
	}
	if len(l.Records) != 1 || string(l.Records[0].Data) != "new life" {
		t.Errorf("recreated thread has records %v", versions(l.Records))
	}
	if l.Meta.CreatedAt.Before(old.CreatedAt) {
		t.Errorf("recreated thread kept the old CreatedAt")
	}
	checkVersions(t, "history of the recreated thread", records(t, s, "re", 0, 0, 0), []int64{1})
	step(t, s, "re", 1, 1, false, meta)
}

func (h *harness) unknownFormatOnAppend(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	for _, c := range []struct {
		name string
		a    store.Append
	}{
		{"newer record", store.Append{ThreadID: "f", Meta: meta, Records: []store.Record{{Version: 1, Format: store.FormatVersion + 1, Data: []byte("x")}}}},
		{"zero record", store.Append{ThreadID: "f", Meta: meta, Records: []store.Record{{Version: 1, Format: 0, Data: []byte("x")}}}},
		{"newer snapshot", store.Append{ThreadID: "f", Meta: meta, Records: []store.Record{rec(1, "x")},
			Snapshot: &store.Snapshot{Version: 1, Format: store.FormatVersion + 1, Data: []byte("x")}}},
	} {
		if err := s.Append(ctx, c.a); !isCode(err, interlude.ErrUnknownFormat) {
			t.Errorf("%s: err = %v, want ErrUnknownFormat", c.name, err)
		}
	}
	if v, _ := s.Version(ctx, "f"); v != 0 {
		t.Errorf("a refused append created the thread")
	}
}

func (h *harness) unknownRecordFormat(t *testing.T) {
	if h.opts.SetRecordFormat == nil {
		t.Skip("the store gave no Options.SetRecordFormat hook")
	}
	s := h.open(t)
	ctx := context.Background()
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	step(t, s, "uf", 0, 2, true, meta)
	step(t, s, "uf", 2, 2, false, meta) // snapshot at 2, records 3 and 4 after it
	for _, format := range []int{store.FormatVersion + 1, 0} {
		if err := h.opts.SetRecordFormat(s, "uf", 4, format); err != nil {
			t.Fatalf("SetRecordFormat: %v", err)
		}
		_, err := s.Load(ctx, "uf")
		if !isCode(err, interlude.ErrUnknownFormat) {
			t.Errorf("Load over a record of format %d: err = %v, want ErrUnknownFormat", format, err)
		} else if !strings.Contains(err.Error(), "format") {
			t.Errorf("the error does not say what is wrong: %v", err)
		}
		if _, err := s.Records(ctx, "uf", 0, 0, 0); !isCode(err, interlude.ErrUnknownFormat) {
			t.Errorf("Records over a record of format %d: err = %v, want ErrUnknownFormat", format, err)
		}
		if _, err := s.History(ctx, "uf", 0, 1); !isCode(err, interlude.ErrUnknownFormat) {
			t.Errorf("History over a record of format %d: err = %v, want ErrUnknownFormat", format, err)
		}
		// Reading around the bad record still works.
		checkVersions(t, "Records before the bad one", records(t, s, "uf", 0, 3, 0), span(1, 3))
		checkVersions(t, "History before the bad one", history(t, s, "uf", 4, 1).Records, []int64{3})
	}
	// A bad record before the snapshot does not stop Load, only history.
	if err := h.opts.SetRecordFormat(s, "uf", 4, store.FormatVersion); err != nil {
		t.Fatal(err)
	}
	if err := h.opts.SetRecordFormat(s, "uf", 1, store.FormatVersion+1); err != nil {
		t.Fatal(err)
	}
	if l, err := s.Load(ctx, "uf"); err != nil {
		t.Errorf("Load with a bad record before the snapshot: %v", err)
	} else {
		checkLoaded(t, "uf", l)
	}
	if _, err := s.Records(ctx, "uf", 0, 0, 0); !isCode(err, interlude.ErrUnknownFormat) {
		t.Errorf("Records over record 1 of a newer format: err = %v, want ErrUnknownFormat", err)
	}
}

func (h *harness) unknownSnapshotFormat(t *testing.T) {
	if h.opts.SetSnapshotFormat == nil {
		t.Skip("the store gave no Options.SetSnapshotFormat hook")
	}
	s := h.open(t)
	ctx := context.Background()
	step(t, s, "us", 0, 2, true, store.Meta{Graph: "g", Status: interlude.ThreadIdle})
	for _, format := range []int{store.FormatVersion + 1, 0} {
		if err := h.opts.SetSnapshotFormat(s, "us", format); err != nil {
			t.Fatalf("SetSnapshotFormat: %v", err)
		}
		if _, err := s.Load(ctx, "us"); !isCode(err, interlude.ErrUnknownFormat) {
			t.Errorf("Load of a snapshot of format %d: err = %v, want ErrUnknownFormat", format, err)
		}
	}
	step(t, s, "us", 2, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle})
	if _, err := s.History(ctx, "us", 0, 1); !isCode(err, interlude.ErrUnknownFormat) {
		t.Errorf("History from a snapshot of a newer format: err = %v, want ErrUnknownFormat", err)
	}
	// The records are still readable one by one.
	checkVersions(t, "Records", records(t, s, "us", 0, 0, 0), []int64{1, 2, 3})
}

func (h *harness) invalidAppend(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	step(t, s, "ok", 0, 2, false, meta)
	snap := func(v int64) *store.Snapshot { return &store.Snapshot{Version: v, Format: 1, Data: []byte("s")} }
	for _, c := range []struct {
		name string
		a    store.Append
	}{
		{"empty thread id", store.Append{Meta: meta, Records: []store.Record{rec(1, "x")}}},
		{"no records", store.Append{ThreadID: "x", Meta: meta}},
		{"no records on an existing thread", store.Append{ThreadID: "ok", Expect: 2, Meta: meta}},
		{"first version 0", store.Append{ThreadID: "x", Meta: meta, Records: []store.Record{rec(0, "x")}}},
		{"first version 2", store.Append{ThreadID: "x", Meta: meta, Records: []store.Record{rec(2, "x")}}},
		{"gap", store.Append{ThreadID: "x", Meta: meta, Records: []store.Record{rec(1, "x"), rec(3, "x")}}},
		{"repeat", store.Append{ThreadID: "x", Meta: meta, Records: []store.Record{rec(1, "x"), rec(1, "x")}}},
		{"behind expect", store.Append{ThreadID: "ok", Expect: 2, Meta: meta, Records: []store.Record{rec(2, "x")}}},
		{"negative expect", store.Append{ThreadID: "x", Expect: -1, Meta: meta, Records: []store.Record{rec(0, "x")}}},
		{"snapshot not at the last record", store.Append{ThreadID: "ok", Expect: 2, Meta: meta, Records: []store.Record{rec(3, "x"), rec(4, "x")}, Snapshot: snap(3)}},
		{"snapshot ahead", store.Append{ThreadID: "ok", Expect: 2, Meta: meta, Records: []store.Record{rec(3, "x")}, Snapshot: snap(4)}},
	} {
		err := s.Append(ctx, c.a)
		if !isCode(err, interlude.ErrInvalidRequest) {
			t.Errorf("%s: err = %v, want ErrInvalidRequest", c.name, err)
		}
	}
	for _, id := range []string{"x", ""} {
		if v, _ := s.Version(ctx, id); v != 0 {
			t.Errorf("a refused append created thread %q", id)
		}
	}
	if l := load(t, s, "ok"); l.Meta.Version != 2 || l.Snapshot != nil || len(l.Records) != 2 {
		t.Errorf("a refused append changed thread ok: version %d", l.Meta.Version)
	}
}

func (h *harness) unknownThread(t *testing.T) {
	s := h.open(t)
	ctx := context.Background()
	step(t, s, "known", 0, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle})
	for _, id := range []string{"unknown", "", "KNOWN", "known "} {
		if v, err := s.Version(ctx, id); v != 0 || err != nil {
			t.Errorf("Version(%q) = %d, %v; want 0, nil", id, v, err)
		}
		if _, err := s.Load(ctx, id); !isCode(err, interlude.ErrNotFound) {
			t.Errorf("Load(%q): err = %v, want ErrNotFound", id, err)
		}
		if _, err := s.Meta(ctx, id); !isCode(err, interlude.ErrNotFound) {
			t.Errorf("Meta(%q): err = %v, want ErrNotFound", id, err)
		}
		if _, err := s.Records(ctx, id, 0, 0, 0); !isCode(err, interlude.ErrNotFound) {
			t.Errorf("Records(%q): err = %v, want ErrNotFound", id, err)
		}
	}
	// A known thread with nothing in the range is not an error.
	if rs, err := s.Records(ctx, "known", 5, 0, 0); err != nil || len(rs) != 0 {
		t.Errorf("Records past the end = %v, %v; want none, nil", versions(rs), err)
	}
	p, err := s.List(ctx, store.Query{Status: interlude.ThreadFailed})
	if err != nil || len(p.Threads) != 0 || p.NextCursor != "" {
		t.Errorf("empty listing = %+v, %v", p, err)
	}
}

func (h *harness) contextCancelled(t *testing.T) {
	s := h.open(t)
	meta := store.Meta{Graph: "g", Status: interlude.ThreadIdle}
	step(t, s, "ctx", 0, 1, false, meta)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: err = %v, want context.Canceled", what, err)
		}
	}
	check("Append", s.Append(ctx, store.Append{ThreadID: "ctx", Expect: 1, Meta: meta, Records: []store.Record{rec(2, "x")}}))
	check("Append new", s.Append(ctx, store.Append{ThreadID: "ctx2", Meta: meta, Records: []store.Record{rec(1, "x")}}))
	_, err := s.Load(ctx, "ctx")
	check("Load", err)
	_, err = s.Version(ctx, "ctx")
	check("Version", err)
	_, err = s.Records(ctx, "ctx", 0, 0, 0)
	check("Records", err)
	_, err = s.History(ctx, "ctx", 0, 1)
	check("History", err)
	_, err = s.Meta(ctx, "ctx")
	check("Meta", err)
	_, err = s.List(ctx, store.Query{})
	check("List", err)
	check("Delete", s.Delete(ctx, "ctx"))
	// Nothing happened.
	l := load(t, s, "ctx")
	if l.Meta.Version != 1 {
		t.Errorf("a cancelled Append or Delete changed the thread: version %d", l.Meta.Version)
	}
	if v, _ := s.Version(context.Background(), "ctx2"); v != 0 {
		t.Errorf("a cancelled Append created a thread")
	}
}
