package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/store"
)

// documentCases are the subtests of stores that implement store.Documents or
// store.Copier; Run skips them for the others.
func (h *harness) documentCases() []struct {
	name string
	fn   func(*testing.T)
} {
	return []struct {
		name string
		fn   func(*testing.T)
	}{
		{"DocumentsRoundTripAndReplaceKeepsCreation", h.documentsRoundTrip},
		{"DocumentsListNewestFirstByKindAndThread", h.documentsList},
		{"DocumentsGoWithTheirThread", h.documentsDeleted},
		{"DocumentsWrittenWithAnAppendOrNotAtAll", h.documentsWithAppend},
		{"CopyThreadReadsAsTheOriginal", h.copyThread},
		{"CopyThreadRefusesAnUnknownSourceOrATakenTarget", h.copyRefused},
	}
}

func (h *harness) openDocuments(t *testing.T) (store.Store, store.Documents) {
	t.Helper()
	s := h.open(t)
	d, ok := s.(store.Documents)
	if !ok {
		t.Skipf("%T does not implement store.Documents", s)
	}
	return s, d
}

func (h *harness) documentsRoundTrip(t *testing.T) {
	_, d := h.openDocuments(t)
	ctx := context.Background()
	if _, err := d.Document(ctx, "t", "k", ""); !isCode(err, interlude.ErrNotFound) {
		t.Fatalf("Document of nothing: err = %v, want ErrNotFound", err)
	}
	data := []byte("{\"a\":1,\"nul\":\"\x00 ✓\"}")
	if err := d.PutDocument(ctx, store.Document{ThreadID: "t", Kind: "k", Data: data, CreatedAt: base, UpdatedAt: base}); err != nil {
		t.Fatal(err)
	}
	data[1] = 'X' // the store keeps its own copy
	got, err := d.Document(ctx, "t", "k", "")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != "{\"a\":1,\"nul\":\"\x00 ✓\"}" || !got.CreatedAt.Equal(base) || !got.UpdatedAt.Equal(base) {
		t.Errorf("Document = %q created %v updated %v; want what was put at %v", got.Data, got.CreatedAt, got.UpdatedAt, base)
	}
	later := base.Add(time.Hour)
	if err := d.PutDocument(ctx, store.Document{ThreadID: "t", Kind: "k", Data: []byte("two"), CreatedAt: later, UpdatedAt: later}); err != nil {
		t.Fatal(err)
	}
	got, err = d.Document(ctx, "t", "k", "")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != "two" || !got.CreatedAt.Equal(base) || !got.UpdatedAt.Equal(later) {
		t.Errorf("replaced Document = %q created %v updated %v; want two, created %v, updated %v", got.Data, got.CreatedAt, got.UpdatedAt, base, later)
	}
	before := time.Now().Add(-time.Second)
	if err := d.PutDocument(ctx, store.Document{ThreadID: "t", Kind: "k", Key: "now"}); err != nil {
		t.Fatal(err)
	}
	if got, err = d.Document(ctx, "t", "k", "now"); err != nil || got.CreatedAt.Before(before) || got.UpdatedAt.Before(before) || len(got.Data) != 0 {
		t.Errorf("Document put without times = %+v, %v; want empty data, both times now", got, err)
	}
	if err := d.PutDocument(ctx, store.Document{Kind: "k"}); !isCode(err, interlude.ErrInvalidRequest) {
		t.Errorf("PutDocument without a thread: err = %v, want ErrInvalidRequest", err)
	}
	if err := d.DeleteDocument(ctx, "t", "k", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Document(ctx, "t", "k", ""); !isCode(err, interlude.ErrNotFound) {
		t.Errorf("Document after DeleteDocument: err = %v, want ErrNotFound", err)
	}
	if err := d.DeleteDocument(ctx, "t", "k", "unknown"); err != nil {
		t.Errorf("DeleteDocument of an unknown document: %v, want nil", err)
	}
	if _, err := d.Document(ctx, "t", "k", "now"); err != nil {
		t.Errorf("the other document went too: %v", err)
	}
}

func (h *harness) documentsList(t *testing.T) {
	_, d := h.openDocuments(t)
	ctx := context.Background()
	put := func(thread, kind, key string, at time.Duration) {
		t.Helper()
		if err := d.PutDocument(ctx, store.Document{ThreadID: thread, Kind: kind, Key: key, Data: []byte(key), CreatedAt: base.Add(at)}); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "run", "r1", 1)
	put("a", "run", "r2", 3)
	put("b", "run", "r3", 2)
	put("b", "run", "r4", 3) // a tie with a/r2: thread b sorts first, descending
	put("a", "thread", "", 5)
	list := func(q store.DocumentQuery) []string {
		t.Helper()
		ds, err := d.Documents(ctx, q)
		if err != nil {
			t.Fatalf("Documents(%+v): %v", q, err)
		}
		out := []string{}
		for _, x := range ds {
			out = append(out, fmt.Sprintf("%s/%s", x.ThreadID, x.Data))
		}
		return out
	}
	for _, c := range []struct {
		q    store.DocumentQuery
		want []string
	}{
		{store.DocumentQuery{Kind: "run"}, []string{"b/r4", "a/r2", "b/r3", "a/r1"}},
		{store.DocumentQuery{Kind: "run", ThreadID: "a"}, []string{"a/r2", "a/r1"}},
		{store.DocumentQuery{Kind: "run", Limit: 2, Offset: 1}, []string{"a/r2", "b/r3"}},
		{store.DocumentQuery{Kind: "run", Offset: 10}, []string{}},
		{store.DocumentQuery{Kind: "thread"}, []string{"a/"}},
		{store.DocumentQuery{Kind: "none"}, []string{}},
	} {
		if got := list(c.q); !slices.Equal(got, c.want) {
			t.Errorf("Documents(%+v) = %v, want %v", c.q, got, c.want)
		}
	}
	if _, err := d.Documents(ctx, store.DocumentQuery{}); !isCode(err, interlude.ErrInvalidRequest) {
		t.Errorf("Documents without a kind: err = %v, want ErrInvalidRequest", err)
	}
}

func (h *harness) documentsDeleted(t *testing.T) {
	s, d := h.openDocuments(t)
	ctx := context.Background()
	step(t, s, "gone", 0, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle})
	for _, id := range []string{"gone", "empty", "kept"} { // "empty" has no record, only documents
		if err := d.PutDocument(ctx, store.Document{ThreadID: id, Kind: "thread", Data: []byte(id)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"gone", "empty"} {
		if err := s.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Document(ctx, id, "thread", ""); !isCode(err, interlude.ErrNotFound) {
			t.Errorf("a document of %s after Delete: err = %v, want ErrNotFound", id, err)
		}
	}
	if _, err := d.Document(ctx, "kept", "thread", ""); err != nil {
		t.Errorf("another thread's document went too: %v", err)
	}
}

func (h *harness) documentsWithAppend(t *testing.T) {
	s, d := h.openDocuments(t)
	ctx := context.Background()
	put := func(kind, key, data string) {
		t.Helper()
		if err := d.PutDocument(ctx, store.Document{ThreadID: "w", Kind: kind, Key: key, Data: []byte(data), CreatedAt: base, UpdatedAt: base}); err != nil {
			t.Fatal(err)
		}
	}
	put("run", "r1", "old")
	put("thread", "", "{}")
	put("note", "", "changed since read")
	put("gone", "", "anything")
	later := base.Add(time.Hour)
	a := store.Append{ThreadID: "w", Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle}, Records: []store.Record{rec(1, "w@1")},
		Documents: []store.DocumentWrite{
			{Document: store.Document{Kind: "run", Key: "r1", Data: []byte("new"), CreatedAt: later, UpdatedAt: later}},
			{Document: store.Document{ThreadID: "w", Kind: "run", Key: "r2", Data: []byte("two")}},
			{Document: store.Document{Kind: "thread", Data: []byte("{}")}, Delete: true, IfUnchanged: true},
			{Document: store.Document{Kind: "note", Data: []byte("as read")}, Delete: true, IfUnchanged: true},
			{Document: store.Document{Kind: "gone"}, Delete: true},
			{Document: store.Document{Kind: "never", Key: "there"}, Delete: true},
		}}
	appendOK(t, s, a)
	got := func(kind, key string) string {
		t.Helper()
		doc, err := d.Document(ctx, "w", kind, key)
		if isCode(err, interlude.ErrNotFound) {
			return "<none>"
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(doc.Data)
	}
	for _, c := range []struct{ kind, key, want string }{
		{"run", "r1", "new"}, {"run", "r2", "two"}, {"thread", "", "<none>"}, {"note", "", "changed since read"}, {"gone", "", "<none>"},
	} {
		if g := got(c.kind, c.key); g != c.want {
			t.Errorf("document %s %q after the append = %q, want %q", c.kind, c.key, g, c.want)
		}
	}
	if doc, err := d.Document(ctx, "w", "run", "r1"); err != nil || !doc.CreatedAt.Equal(base) || !doc.UpdatedAt.Equal(later) {
		t.Errorf("replaced run r1 = %+v, %v; want created %v (the first put's), updated %v", doc, err, base, later)
	}
	// A refused append writes none of its documents.
	err := s.Append(ctx, store.Append{ThreadID: "w", Expect: 5, Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle}, Records: []store.Record{rec(6, "w@6")},
		Documents: []store.DocumentWrite{{Document: store.Document{Kind: "run", Key: "r3", Data: []byte("three")}}, {Document: store.Document{Kind: "run", Key: "r1"}, Delete: true}}})
	if !isCode(err, interlude.ErrConflict) {
		t.Fatalf("append at the wrong version: err = %v, want ErrConflict", err)
	}
	if g1, g3 := got("run", "r1"), got("run", "r3"); g1 != "new" || g3 != "<none>" {
		t.Errorf("after a refused append, r1 = %q and r3 = %q; want new and <none>", g1, g3)
	}
	// A NoSync append carries documents as well.
	appendOK(t, s, store.Append{ThreadID: "w", Expect: 1, Meta: store.Meta{Graph: "g", Status: interlude.ThreadIdle}, Records: []store.Record{rec(2, "w@2")}, NoSync: true,
		Documents: []store.DocumentWrite{{Document: store.Document{Kind: "run", Key: "r2"}, Delete: true}}})
	if g := got("run", "r2"); g != "<none>" {
		t.Errorf("r2 after a NoSync append deleted it = %q, want <none>", g)
	}
	for name, ws := range map[string][]store.DocumentWrite{
		"another thread's document": {{Document: store.Document{ThreadID: "x", Kind: "run"}}},
		"a document without a kind": {{Document: store.Document{Key: "k"}}},
		"one document twice":        {{Document: store.Document{Kind: "run", Key: "r"}}, {Document: store.Document{Kind: "run", Key: "r"}, Delete: true}},
		"a put marked IfUnchanged":  {{Document: store.Document{Kind: "run", Key: "r"}, IfUnchanged: true}},
	} {
		err := s.Append(ctx, store.Append{ThreadID: "w", Expect: 2, Meta: store.Meta{Graph: "g"}, Records: []store.Record{rec(3, "w@3")}, Documents: ws})
		if !isCode(err, interlude.ErrInvalidRequest) {
			t.Errorf("an append with %s: err = %v, want ErrInvalidRequest", name, err)
		}
	}
}

func (h *harness) openCopier(t *testing.T) (store.Store, store.Copier) {
	t.Helper()
	s := h.open(t)
	c, ok := s.(store.Copier)
	if !ok {
		t.Skipf("%T does not implement store.Copier", s)
	}
	return s, c
}

func (h *harness) copyThread(t *testing.T) {
	s, c := h.openCopier(t)
	ctx := context.Background()
	meta := store.Meta{Graph: "g", Status: interlude.ThreadInterrupted, Interrupts: []interlude.Interruption{question("q")}, UpdatedAt: base}
	step(t, s, "src", 0, 3, true, meta)
	step(t, s, "src", 3, 2, false, meta)
	before := time.Now().Add(-time.Second)
	if err := c.CopyThread(ctx, "src", "dst"); err != nil {
		t.Fatalf("CopyThread: %v", err)
	}
	orig, cp := load(t, s, "src"), load(t, s, "dst")
	if cp.Meta.ThreadID != "dst" || cp.Meta.Graph != "g" || cp.Meta.Status != interlude.ThreadInterrupted || cp.Meta.Version != 5 ||
		len(cp.Meta.Interrupts) != 1 || cp.Meta.Interrupts[0].ID != "q" || cp.Meta.CreatedAt.Before(before) {
		t.Errorf("the copy's facts = %+v; want the original's, created now", cp.Meta)
	}
	if cp.Snapshot == nil || orig.Snapshot == nil || cp.Snapshot.Version != 3 || string(cp.Snapshot.Data) != string(orig.Snapshot.Data) {
		t.Errorf("the copy's snapshot = %+v, want the original's %+v", cp.Snapshot, orig.Snapshot)
	}
	if len(cp.Records) != 2 || string(cp.Records[1].Data) != "src@5" || !cp.Records[1].CreatedAt.Equal(orig.Records[1].CreatedAt) {
		t.Errorf("the copy's records after its snapshot = %+v, want the original's", cp.Records)
	}
	page, err := s.History(ctx, "dst", 3, 0)
	if err != nil || len(page.Records) != 2 || string(page.Records[0].Data) != "src@2" {
		t.Errorf("the copy's History before 3 = %+v, %v; want records 2 and 1", page, err)
	}
	ids, _ := listAll(t, s, store.Query{Graph: "g", Status: interlude.ThreadInterrupted})
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"dst", "src"}) {
		t.Errorf("List after the copy = %v, want [dst src]", ids)
	}
	// Each goes its own way.
	step(t, s, "dst", 5, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle})
	if v, _ := s.Version(ctx, "src"); v != 5 {
		t.Errorf("the original is at version %d after an append to the copy, want 5", v)
	}
	if err := s.Delete(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	if l := load(t, s, "dst"); l.Meta.Version != 6 {
		t.Errorf("the copy after deleting the original is at version %d, want 6", l.Meta.Version)
	}
}

func (h *harness) copyRefused(t *testing.T) {
	s, c := h.openCopier(t)
	ctx := context.Background()
	step(t, s, "a", 0, 1, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle})
	step(t, s, "b", 0, 2, false, store.Meta{Graph: "g", Status: interlude.ThreadIdle})
	if err := c.CopyThread(ctx, "none", "c"); !isCode(err, interlude.ErrNotFound) {
		t.Errorf("CopyThread of an unknown thread: err = %v, want ErrNotFound", err)
	}
	if err := c.CopyThread(ctx, "a", "b"); !isCode(err, interlude.ErrConflict) {
		t.Errorf("CopyThread onto an existing thread: err = %v, want ErrConflict", err)
	}
	if v, _ := s.Version(ctx, "b"); v != 2 {
		t.Errorf("the refused copy changed its target: version %d, want 2", v)
	}
	if v, _ := s.Version(ctx, "c"); v != 0 {
		t.Errorf("a refused copy created its target: version %d", v)
	}
	if err := c.CopyThread(ctx, "a", "a"); !isCode(err, interlude.ErrInvalidRequest) {
		t.Errorf("CopyThread onto itself: err = %v, want ErrInvalidRequest", err)
	}
}
