package langgraph_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/interludehq/interlude/internal/cputime"
	"github.com/interludehq/interlude/store/sqlite"
)

// BenchmarkCreateWaitResume measures one create → wait (pause) → wait
// (resume) cycle of the refund graph through the LangGraph routes, over a
// SQLite store, as bench/lgload drives it, with 64 cycles at once (with 2
// cores, -cpu 2 and SetParallelism 32) as its 64 clients do. cpu-ns/op is the
// process's CPU per cycle: with every write waiting for the disk, ns/op is
// mostly the disk's.
func BenchmarkCreateWaitResume(b *testing.B) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "threads.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	srv := refundServer(b, st)
	defer srv.Close()
	post := func(path string, body any, out any) {
		data, _ := json.Marshal(body)
		req := httptest.NewRequest("POST", path, bytes.NewReader(data))
		req.Host = "127.0.0.1"
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
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
}
