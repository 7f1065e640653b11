package graph_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store/sqlite"
)

type blobState struct {
	Blob string `json:"blob"`
	Done bool   `json:"done"`
}

// heapAlloc returns the live heap after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func TestCachedStatesKeepTheHeapWithinTheCacheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 16 MiB of threads")
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "heap.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const budget = 4 << 20
	b := graph.New[blobState]()
	b.AddNode("mark", func(ctx context.Context, s blobState) (blobState, error) { return blobState{Done: true}, nil })
	b.AddEdge(graph.Start, "mark")
	g, err := b.Compile(graph.WithStore(st), graph.WithCacheBytes(budget))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	blob := strings.Repeat("x", 256<<10) // each state is 1/16 of the budget: cached
	if _, err := g.Invoke(ctx, "warm-up", graph.Input(blobState{Blob: blob})); err != nil {
		t.Fatal(err)
	}
	before := heapAlloc()
	for i := range 64 { // four times the budget
		if _, err := g.Invoke(ctx, "t"+strconv.Itoa(i), graph.Input(blobState{Blob: blob})); err != nil {
			t.Fatal(err)
		}
	}
	after := heapAlloc()
	grown := int64(after) - int64(before)
	t.Logf("heap %d -> %d KiB (%+d KiB) for 64 threads of 256 KiB with a budget of %d KiB", before>>10, after>>10, grown>>10, budget>>10)
	if slack := int64(4 << 20); grown > budget+slack {
		t.Errorf("the heap grew by %d KiB, over the cache budget of %d KiB (plus %d KiB of slack)", grown>>10, budget>>10, slack>>10)
	}
	// The newest threads are still there to run again.
	if res, err := g.Invoke(ctx, "t63", graph.Input(blobState{})); err != nil || !res.Values.Done || len(res.Values.Blob) != len(blob) {
		t.Fatalf("running the newest thread again: %v", err)
	}
	runtime.KeepAlive(g)
}
