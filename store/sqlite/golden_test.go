package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

var writeGolden = flag.Bool("write-golden", false, "create a missing testdata/schema-vN.sqlite fixture for the current schema version")

// goldenFile is the fixture written by a schema version. Released fixtures are
// never rewritten: each schema version adds its own, and every build must open all
// of them.
func goldenFile(version int) string {
	return fmt.Sprintf("testdata/schema-v%d.sqlite", version)
}

var goldenAt = time.Date(2026, 11, 1, 12, 0, 0, 123456789, time.UTC)

func goldenQuestion() interlude.Interruption {
	return interlude.Interruption{ID: "int_9f2c", Node: "refund", Path: []string{"refund"}, Message: "Approve a refund of $150?",
		Reason: interlude.ReasonToolApproval, Value: json.RawMessage(`{"amount":150}`),
		Schema:    json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}`),
		CreatedAt: goldenAt}
}

// goldenAppends are what the fixture of a schema version holds: those of the
// version before it and what the version added. A released version's appends
// never change, as its fixture does not.
func goldenAppends(version int) []store.Append {
	rec := func(v int64, kind, data string) store.Record {
		return store.Record{Version: v, Format: 1, Kind: kind, Data: []byte(data), CreatedAt: goldenAt.Add(time.Duration(v) * time.Second)}
	}
	ask := func(id string, expires *time.Time) interlude.Interruption {
		q := goldenQuestion()
		q.ID, q.ExpiresAt = id, expires
		return q
	}
	ptr := func(t time.Time) *time.Time { return &t }
	var out []store.Append
	if version >= 1 {
		out = append(out,
			store.Append{ThreadID: "order-42", Meta: store.Meta{Graph: "refund", Status: interlude.ThreadIdle, UpdatedAt: goldenAt},
				Records:  []store.Record{rec(1, "input", `{"v":1,"input":{"amount":150}}`), rec(2, "step", `{"v":1,"writes":{"refund":1}}`)},
				Snapshot: &store.Snapshot{Version: 2, Format: 1, Data: []byte(`{"v":1,"values":{"amount":150}}`)}},
			store.Append{ThreadID: "order-42", Expect: 2, Meta: store.Meta{Graph: "refund", Status: interlude.ThreadInterrupted,
				Interrupts: []interlude.Interruption{goldenQuestion()}, UpdatedAt: goldenAt.Add(3 * time.Second)},
				Records: []store.Record{rec(3, "pause", `{"v":1,"interrupts":["int_9f2c"]}`)}},
			store.Append{ThreadID: "chat-7", Meta: store.Meta{Graph: "agent", Status: interlude.ThreadIdle, UpdatedAt: goldenAt.Add(time.Minute)},
				Records: []store.Record{rec(1, "input", `{"v":1}`), rec(2, "step", `{"v":1}`)}},
			store.Append{ThreadID: "job-9", Meta: store.Meta{Graph: "batch", Status: interlude.ThreadFailed, UpdatedAt: goldenAt.Add(time.Hour)},
				Records: []store.Record{{Version: 1, Format: 1, Kind: "fail", Data: []byte{0, 1, 2, 0xfe, 0xff}, CreatedAt: goldenAt}}},
		)
	}
	if version >= 2 {
		// Schema version 2 indexes the earliest expiry of a thread's pending
		// questions, to the nanosecond.
		out = append(out,
			// Two pending questions, one without an expiry: the other is indexed.
			store.Append{ThreadID: "review-3", Meta: store.Meta{Graph: "refund", Status: interlude.ThreadInterrupted,
				Interrupts: []interlude.Interruption{ask("int_a1", nil), ask("int_a2", ptr(goldenAt.Add(2*time.Hour+7)))},
				UpdatedAt:  goldenAt.Add(2 * time.Minute)},
				Records: []store.Record{rec(1, "pause", `{"v":1,"interrupts":["int_a1","int_a2"]}`)}},
			// Expires first, in a zone other than UTC.
			store.Append{ThreadID: "approve-8", Meta: store.Meta{Graph: "agent", Status: interlude.ThreadInterrupted,
				Interrupts: []interlude.Interruption{ask("int_b1", ptr(goldenAt.Add(30*time.Minute).In(time.FixedZone("UTC+2", 2*3600))))},
				UpdatedAt:  goldenAt.Add(3 * time.Minute)},
				Records: []store.Record{rec(1, "pause", `{"v":1,"interrupts":["int_b1"]}`)}},
			// Its expiring question was answered: the thread leaves the index.
			store.Append{ThreadID: "lapsed-5", Meta: store.Meta{Graph: "agent", Status: interlude.ThreadInterrupted,
				Interrupts: []interlude.Interruption{ask("int_c1", ptr(goldenAt.Add(time.Minute)))}, UpdatedAt: goldenAt.Add(4 * time.Minute)},
				Records: []store.Record{rec(1, "pause", `{"v":1,"interrupts":["int_c1"]}`)}},
			store.Append{ThreadID: "lapsed-5", Expect: 1, Meta: store.Meta{Graph: "agent", Status: interlude.ThreadIdle, UpdatedAt: goldenAt.Add(5 * time.Minute)},
				Records: []store.Record{rec(2, "resume", `{"v":1}`)}},
		)
	}
	if version >= 3 {
		// Schema version 3 keeps every snapshot of a thread, not only the newest.
		out = append(out,
			store.Append{ThreadID: "notes-4", Meta: store.Meta{Graph: "agent", Status: interlude.ThreadIdle, UpdatedAt: goldenAt.Add(6 * time.Minute)},
				Records:  []store.Record{rec(1, "input", `{"v":1}`), rec(2, "step", `{"v":1}`)},
				Snapshot: &store.Snapshot{Version: 2, Format: 1, Data: []byte(`{"v":1,"values":{"notes":["a"]}}`)}},
			store.Append{ThreadID: "notes-4", Expect: 2, Meta: store.Meta{Graph: "agent", Status: interlude.ThreadIdle, UpdatedAt: goldenAt.Add(7 * time.Minute)},
				Records:  []store.Record{rec(3, "input", `{"v":1}`), rec(4, "step", `{"v":1}`)},
				Snapshot: &store.Snapshot{Version: 4, Format: 1, Data: []byte(`{"v":1,"values":{"notes":["a","b"]}}`)}},
			store.Append{ThreadID: "notes-4", Expect: 4, Meta: store.Meta{Graph: "agent", Status: interlude.ThreadIdle, UpdatedAt: goldenAt.Add(8 * time.Minute)},
				Records: []store.Record{rec(5, "input", `{"v":1}`)}},
		)
	}
	if version >= 4 {
		// Schema version 4 keeps the outbox: notices written with their append.
		out = append(out,
			store.Append{ThreadID: "notify-6", Meta: store.Meta{Graph: "refund", Status: interlude.ThreadInterrupted,
				Interrupts: []interlude.Interruption{ask("int_d1", nil)}, UpdatedAt: goldenAt.Add(9 * time.Minute)},
				Records: []store.Record{rec(1, "pause", `{"v":1,"interrupts":["int_d1"]}`)},
				Outbox: []store.Notice{{ID: "evt_d1", Graph: "refund", Type: store.NoticeRaised, InterruptID: "int_d1",
					Data: []byte(`{"thread_id":"notify-6"}`), CreatedAt: goldenAt.Add(9 * time.Minute)}}},
		)
	}
	return out
}

// TestWriteGolden creates the fixture of the current schema version, if it is
// missing, with go test ./store/sqlite -run TestWriteGolden -write-golden.
func TestWriteGolden(t *testing.T) {
	if !*writeGolden {
		t.Skip("run with -write-golden to create a missing fixture")
	}
	file := goldenFile(SchemaVersion)
	if _, err := os.Stat(file); err == nil {
		t.Fatalf("%s exists; released fixtures are never rewritten", file)
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range goldenAppends(SchemaVersion) {
		if err := s.Append(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file + "-wal"); err == nil {
		t.Fatalf("%s-wal is left over; the fixture must be one file", file)
	}
}

// goldenVersions are the schema versions of the fixtures in testdata. There is
// one for every version up to the current one.
func goldenVersions(t *testing.T) []int {
	t.Helper()
	files, err := filepath.Glob("testdata/schema-v*.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	var versions []int
	for _, f := range files {
		var v int
		if _, err := fmt.Sscanf(filepath.Base(f), "schema-v%d.sqlite", &v); err != nil || goldenFile(v) != filepath.ToSlash(f) {
			t.Fatalf("%s: not a fixture name (schema-vN.sqlite)", f)
		}
		versions = append(versions, v)
	}
	slices.Sort(versions)
	if want := span(1, SchemaVersion); !slices.Equal(versions, want) {
		t.Fatalf("fixtures for schema versions %v, want %v: create the current version's with go test ./store/sqlite -run TestWriteGolden -write-golden", versions, want)
	}
	return versions
}

// TestGolden opens the fixture written by each schema version, migrates it to
// the current version and reads every thread back.
func TestGolden(t *testing.T) {
	for _, version := range goldenVersions(t) {
		t.Run(fmt.Sprint("v", version), func(t *testing.T) { testGolden(t, version) })
	}
}

func testGolden(t *testing.T, version int) {
	path := filepath.Join(t.TempDir(), fmt.Sprintf("v%d.sqlite", version))
	copyFile(t, goldenFile(version), path)
	s, err := Open(path)
	if err != nil {
		t.Fatalf("open the schema v%d fixture: %v", version, err)
	}
	defer s.Close()
	ctx := context.Background()

	var versions []int
	rows, err := s.r.Query(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int
		rows.Scan(&v)
		versions = append(versions, v)
	}
	rows.Close()
	if want := span(1, SchemaVersion); !slices.Equal(versions, want) {
		t.Errorf("schema_migrations after opening the fixture = %v, want %v", versions, want)
	}

	// Replay the fixture's appends in memory terms: the last state of each thread.
	type want struct {
		meta    store.Meta
		records []store.Record
		snap    *store.Snapshot
		snaps   []*store.Snapshot // every one, oldest first
	}
	wants := map[string]*want{}
	for _, a := range goldenAppends(version) {
		w := wants[a.ThreadID]
		if w == nil {
			w = &want{}
			wants[a.ThreadID] = w
		}
		w.meta = a.Meta
		w.meta.ThreadID, w.meta.Version = a.ThreadID, a.Records[len(a.Records)-1].Version
		w.records = append(w.records, a.Records...)
		if a.Snapshot != nil {
			w.snap = a.Snapshot
			w.snaps = append(w.snaps, a.Snapshot)
		}
	}
	for id, w := range wants {
		l, err := s.Load(ctx, id)
		if err != nil {
			t.Errorf("Load(%s): %v", id, err)
			continue
		}
		m := l.Meta
		if m.Graph != w.meta.Graph || m.Status != w.meta.Status || m.Version != w.meta.Version || !m.UpdatedAt.Equal(w.meta.UpdatedAt) || m.CreatedAt.IsZero() {
			t.Errorf("%s: meta %+v, want %+v", id, m, w.meta)
		}
		if g, w := mustJSON(t, m.Interrupts), mustJSON(t, w.meta.Interrupts); g != w {
			t.Errorf("%s: interrupts %s, want %s", id, g, w)
		}
		if (l.Snapshot == nil) != (w.snap == nil) || l.Snapshot != nil && (l.Snapshot.Version != w.snap.Version || !bytes.Equal(l.Snapshot.Data, w.snap.Data)) {
			t.Errorf("%s: snapshot %+v, want %+v", id, l.Snapshot, w.snap)
		}
		all, err := s.Records(ctx, id, 0, 0, 0)
		if err != nil {
			t.Errorf("Records(%s): %v", id, err)
			continue
		}
		if len(all) != len(w.records) {
			t.Errorf("%s: %d records, want %d", id, len(all), len(w.records))
			continue
		}
		for i, r := range all {
			x := w.records[i]
			if r.Version != x.Version || r.Format != x.Format || r.Kind != x.Kind || !bytes.Equal(r.Data, x.Data) || !r.CreatedAt.Equal(x.CreatedAt) {
				t.Errorf("%s record %d = %+v, want %+v", id, i, r, x)
			}
		}
		// Each record as a page of one comes with the newest snapshot before it
		// (a file before schema version 3 kept only the newest of each thread).
		for _, x := range w.records {
			p, err := s.History(ctx, id, x.Version+1, 1)
			if err != nil || len(p.Records) != 1 || p.Records[0].Version != x.Version || !bytes.Equal(p.Records[0].Data, x.Data) {
				t.Errorf("History(%s, before %d, 1) = %+v, %v", id, x.Version+1, p, err)
				continue
			}
			var base *store.Snapshot
			for _, sn := range w.snaps {
				if sn.Version < x.Version && (version >= 3 || sn == w.snap) {
					base = sn
				}
			}
			if (p.Base == nil) != (base == nil) || base != nil && (p.Base.Version != base.Version || !bytes.Equal(p.Base.Data, base.Data)) {
				t.Errorf("History(%s, before %d, 1): base %+v, want %+v", id, x.Version+1, p.Base, base)
			}
		}
	}

	// The interrupted threads, newest updated first.
	var interrupted []store.Meta
	for _, w := range wants {
		if w.meta.Status == interlude.ThreadInterrupted {
			interrupted = append(interrupted, w.meta)
		}
	}
	slices.SortFunc(interrupted, func(a, b store.Meta) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ThreadID, a.ThreadID)
	})
	p, err := s.List(ctx, store.Query{Status: interlude.ThreadInterrupted})
	if err != nil || !slices.Equal(threadIDs(p.Threads), threadIDs(interrupted)) {
		t.Errorf("List(interrupted) = %+v, %v; want %v", p, err, threadIDs(interrupted))
	}

	// The threads whose questions expire, earliest first: the index lists each at
	// its expiry, and none a nanosecond before.
	type expiry struct {
		id string
		at time.Time
	}
	var expiries []expiry
	for id, w := range wants {
		if e := storekit.EarliestExpiry(w.meta); e != nil {
			expiries = append(expiries, expiry{id, *e})
		}
	}
	slices.SortFunc(expiries, func(a, b expiry) int { return a.at.Compare(b.at) })
	if version == 1 && len(expiries) != 0 {
		t.Fatalf("the schema v1 fixture has expiring questions %v; it was written before they were indexed", expiries)
	}
	var indexed int
	if err := s.r.QueryRow(`SELECT count(*) FROM threads WHERE expires_at IS NOT NULL`).Scan(&indexed); err != nil || indexed != len(expiries) {
		t.Errorf("%d threads of the fixture have an indexed expiry (%v), want %d", indexed, err, len(expiries))
	}
	expired := func(now time.Time, want []expiry) {
		t.Helper()
		ms, err := s.Expired(ctx, now, nil, 0)
		var ids, wantIDs []string
		for _, m := range ms {
			ids = append(ids, m.ThreadID)
		}
		for _, e := range want {
			wantIDs = append(wantIDs, e.id)
		}
		if err != nil || !slices.Equal(ids, wantIDs) {
			t.Errorf("Expired(%v) = %v, %v; want %v", now, ids, err, wantIDs)
		}
	}
	expired(goldenAt, nil)
	for i, e := range expiries {
		expired(e.at.Add(-1), expiries[:i])
		expired(e.at, expiries[:i+1])
	}
	expired(goldenAt.AddDate(100, 0, 0), expiries)

	// The migrated file takes new appends.
	if err := s.Append(ctx, store.Append{ThreadID: "chat-7", Expect: 2, Meta: store.Meta{Graph: "agent", Status: interlude.ThreadIdle},
		Records: []store.Record{{Version: 3, Format: 1, Kind: "step", Data: []byte("{}")}}}); err != nil {
		t.Errorf("append to a migrated thread: %v", err)
	}
}

func threadIDs(ms []store.Meta) []string {
	ids := []string{}
	for _, m := range ms {
		ids = append(ids, m.ThreadID)
	}
	return ids
}

// TestUpgradeIndexesExpiries rewinds a file to schema version 1, without the
// expiry column, and opens it again: the upgrade fills the column from the
// threads' pending questions, to the millisecond that SQLite's date functions
// read, and Expired finds them.
func TestUpgradeIndexesExpiries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.sqlite")
	copyFile(t, goldenFile(1), path)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.UTC)
	ptr := func(t time.Time) *time.Time { return &t }
	ask := func(expires ...*time.Time) store.Meta {
		m := store.Meta{Graph: "g", Status: interlude.ThreadInterrupted}
		for i, e := range expires {
			q := goldenQuestion()
			q.ID, q.ExpiresAt = fmt.Sprint("q", i), e
			m.Interrupts = append(m.Interrupts, q)
		}
		return m
	}
	threads := map[string]store.Meta{
		"two":       ask(ptr(at.Add(time.Hour)), ptr(at.In(time.FixedZone("UTC-3", -3*3600))), nil),
		"earlier":   ask(ptr(at.Add(-time.Millisecond))),
		"never":     ask(nil),
		"centuries": ask(ptr(at.Add(math.MaxInt64))),
	}
	for id, m := range threads {
		if err := s.Append(ctx, store.Append{ThreadID: id, Meta: m, Records: []store.Record{{Version: 1, Format: 1, Kind: "k", Data: []byte("x")}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := writerExec(s, `DROP INDEX threads_expiry; ALTER TABLE threads DROP COLUMN expires_at; DELETE FROM schema_migrations WHERE version > 1`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	millis := func(t time.Time) int64 { return (t.UnixNano() + 500000) / 1000000 * 1000000 }
	want := map[string]any{"two": millis(at), "earlier": millis(at.Add(-time.Millisecond)), "centuries": int64(math.MaxInt64),
		"never": nil, "order-42": nil, "chat-7": nil, "job-9": nil}
	rows, err := s.r.Query(`SELECT id, expires_at FROM threads`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var got any
		if err := rows.Scan(&id, &got); err != nil {
			t.Fatal(err)
		}
		if w, ok := want[id]; !ok || got != w {
			t.Errorf("%s: expires_at %v (%T) after the upgrade, want %v", id, got, got, w)
		}
	}
	ms, err := s.Expired(ctx, at.Add(time.Millisecond), nil, 0)
	if err != nil || len(ms) != 2 || ms[0].ThreadID != "earlier" || ms[1].ThreadID != "two" {
		t.Errorf("Expired after the upgrade = %+v, %v; want earlier, two", ms, err)
	}
}

func span(from, to int) []int {
	var out []int
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) == "null" {
		return "[]"
	}
	return string(b)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
