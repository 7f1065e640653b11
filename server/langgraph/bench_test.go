package langgraph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interludehq/interlude/internal/cputime"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/sqlite"
)

// countingStore counts the calls a store gets: the durable commits (appends
// that wait for the disk, and document writes, which do), the appends that do
// not wait (NoSync), and the reads.
type countingStore struct {
	store.Store
	docs                   store.Documents
	head                   store.Header
	durable, noSync, reads atomic.Int64
}

func countStore(st store.Store) *countingStore {
	c := &countingStore{Store: st}
	c.docs, _ = store.As[store.Documents](st)
	c.head, _ = store.As[store.Header](st)
	return c
}

func (c *countingStore) Unwrap() store.Store { return c.Store }

func (c *countingStore) Append(ctx context.Context, a store.Append) error {
	if a.NoSync {
		c.noSync.Add(1)
	} else {
		c.durable.Add(1)
	}
	return c.Store.Append(ctx, a)
}

func (c *countingStore) Load(ctx context.Context, id string) (*store.Loaded, error) {
	c.reads.Add(1)
	return c.Store.Load(ctx, id)
}

func (c *countingStore) Meta(ctx context.Context, id string) (*store.Meta, error) {
	c.reads.Add(1)
	return c.Store.Meta(ctx, id)
}

func (c *countingStore) Version(ctx context.Context, id string) (int64, error) {
	c.reads.Add(1)
	return c.Store.Version(ctx, id)
}

func (c *countingStore) Head(ctx context.Context, id string) (*store.Meta, error) {
	c.reads.Add(1)
	return c.head.Head(ctx, id)
}

func (c *countingStore) PutDocument(ctx context.Context, d store.Document) error {
	c.durable.Add(1)
	return c.docs.PutDocument(ctx, d)
}

func (c *countingStore) Document(ctx context.Context, id, kind, key string) (*store.Document, error) {
	c.reads.Add(1)
	return c.docs.Document(ctx, id, kind, key)
}

func (c *countingStore) Documents(ctx context.Context, q store.DocumentQuery) ([]store.Document, error) {
	c.reads.Add(1)
	return c.docs.Documents(ctx, q)
}

func (c *countingStore) DeleteDocument(ctx context.Context, id, kind, key string) error {
	c.durable.Add(1)
	return c.docs.DeleteDocument(ctx, id, kind, key)
}

// deadlineRecorder is a recorder that takes deadlines, as a connection's
// writer does, so that the handlers' deadlines cost what they cost in a
// server rather than the error a recorder answers them with.
type deadlineRecorder struct{ *httptest.ResponseRecorder }

func (deadlineRecorder) SetReadDeadline(time.Time) error  { return nil }
func (deadlineRecorder) SetWriteDeadline(time.Time) error { return nil }

// BenchmarkCreateWaitResume measures one create → wait (pause) → wait
// (resume) cycle of the refund graph through the LangGraph routes, over a
// SQLite store, as bench/lgload drives it, with 64 cycles at once (with 2
// cores, -cpu 2 and SetParallelism 32) as its 64 clients do. cpu-ns/op is the
// process's CPU per cycle: with every write waiting for the disk, ns/op is
// mostly the disk's. durable-commits/op, nosync-commits/op and reads/op count
// the store's calls a cycle makes (a group commit may share one fsync among
// several durable commits).
func BenchmarkCreateWaitResume(b *testing.B) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "threads.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cs := countStore(st)
	srv := refundServer(b, cs)
	defer srv.Close()
	post := func(path string, body any, out any) {
		data, _ := json.Marshal(body)
		req := httptest.NewRequest("POST", path, bytes.NewReader(data))
		req.Host = "127.0.0.1"
		req.Header.Set("Content-Type", "application/json")
		w := deadlineRecorder{httptest.NewRecorder()}
		srv.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("%s answered %d: %s", path, w.Code, w.Body)
		}
		if err := json.Unmarshal(w.Body.Bytes(), out); err != nil {
			b.Fatalf("%s: %v: %s", path, err, w.Body)
		}
	}
	b.ReportAllocs()
	b.SetParallelism(32)
	cpu := cputime.Process()
	durable, noSync, reads := cs.durable.Load(), cs.noSync.Load(), cs.reads.Load()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			post("/threads", map[string]any{"metadata": map[string]any{}}, &th)
			var paused struct {
				Interrupt []json.RawMessage `json:"__interrupt__"`
			}
			post("/threads/"+th.ThreadID+"/runs/wait", map[string]any{"input": map[string]any{"amount": 150}, "assistant_id": "refund"}, &paused)
			if len(paused.Interrupt) != 1 {
				b.Fatal("the first wait did not pause")
			}
			var done struct {
				Outcome string `json:"outcome"`
			}
			post("/threads/"+th.ThreadID+"/runs/wait", map[string]any{"command": map[string]any{"resume": map[string]any{"approved": true}}, "assistant_id": "refund"}, &done)
			if done.Outcome != "refunded" {
				b.Fatalf("outcome %q", done.Outcome)
			}
		}
	})
	b.ReportMetric(float64((cputime.Process()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(cs.durable.Load()-durable)/float64(b.N), "durable-commits/op")
	b.ReportMetric(float64(cs.noSync.Load()-noSync)/float64(b.N), "nosync-commits/op")
	b.ReportMetric(float64(cs.reads.Load()-reads)/float64(b.N), "reads/op")
}
