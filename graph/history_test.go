package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
)

// countingStore counts the bytes of records and snapshots its reads return.
type countingStore struct {
	store.Store
	mu    sync.Mutex
	bytes int
}

func (c *countingStore) add(n int) {
	c.mu.Lock()
	c.bytes += n
	c.mu.Unlock()
}

func (c *countingStore) read() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.bytes
	c.bytes = 0
	return n
}

func recordBytes(rs []store.Record) (n int) {
	for _, r := range rs {
		n += len(r.Data)
	}
	return n
}

func (c *countingStore) Load(ctx context.Context, id string) (*store.Loaded, error) {
	l, err := c.Store.Load(ctx, id)
	if err == nil {
		n := recordBytes(l.Records)
		if l.Snapshot != nil {
			n += len(l.Snapshot.Data)
		}
		c.add(n)
	}
	return l, err
}

func (c *countingStore) Records(ctx context.Context, id string, after, before int64, limit int) ([]store.Record, error) {
	rs, err := c.Store.Records(ctx, id, after, before, limit)
	c.add(recordBytes(rs))
	return rs, err
}

func (c *countingStore) History(ctx context.Context, id string, before int64, limit int) (*store.HistoryPage, error) {
	p, err := c.Store.History(ctx, id, before, limit)
	if err == nil {
		n := recordBytes(p.Records) + recordBytes(p.Lead)
		if p.Base != nil {
			n += len(p.Base.Data)
		}
		c.add(n)
	}
	return p, err
}

// TestHistoryPageCostDoesNotGrowWithTheThread reads pages of five checkpoints
// (the newest, one in the middle and the oldest) of threads of 10 to 3,000
// checkpoints and counts the bytes the store returns for them: a page costs its
// records, one snapshot and at most a snapshot interval of records before the
// page, whatever the thread's length.
func TestHistoryPageCostDoesNotGrowWithTheThread(t *testing.T) {
	// A record of this thread is about 300 bytes and its state about 250: the
	// page is 1.5 KB, and a snapshot comes every 4 KiB or so of records. A read
	// from the start of a thread of 1,000 checkpoints is 300 KB.
	const budget = 16 << 10
	ctx := context.Background()
	for _, n := range []int{10, 100, 1000, 3000} {
		st := &countingStore{Store: memory.New()}
		app := ledgerThread(t, st, n)
		for _, before := range []int64{0, int64(n / 2), 6} {
			st.read()
			h, err := app.History(ctx, "t", graph.HistoryOptions{Limit: 5, Before: before})
			if err != nil {
				t.Fatal(err)
			}
			read := st.read()
			newest := int64(n)
			if before > 0 {
				newest = min(newest, before-1)
			}
			if len(h) != int(min(5, newest)) || h[0].ID != newest || h[0].Values.Turn != int(newest) || h[len(h)-1].Values.Turn != int(h[len(h)-1].ID) {
				t.Fatalf("%d checkpoints, page before %d: %+v", n, before, h)
			}
			if read > budget {
				t.Errorf("%d checkpoints: the page before %d read %d bytes from the store, over %d", n, before, read, budget)
			}
		}
	}
}

// review is a thread state that asks a question every third turn.
type review struct {
	Turn    int      `json:"turn"`
	Note    string   `json:"note"`
	Answers []string `json:"answers" graph:"append"`
}

// reviewThread runs turns on thread "r": every third asks a question, answered
// at once.
func reviewThread(t *testing.T, app *graph.Graph[review], turns int) {
	t.Helper()
	ctx := interlude.WithActor(context.Background(), "alice")
	for range turns {
		res, err := app.Invoke(ctx, "r", graph.Input(review{}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Status == interlude.RunInterrupted {
			if _, err := app.Invoke(ctx, "r", graph.Resume(interlude.Resolve(fmt.Sprint("ok ", res.Values.Turn)))); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func reviewGraph(t *testing.T, st store.Store) *graph.Graph[review] {
	t.Helper()
	g := graph.New[review]()
	g.AddNode("turn", func(ctx context.Context, s review) (review, error) {
		out := review{Turn: s.Turn + 1, Note: fmt.Sprintf("turn %d %s", s.Turn+1, strings.Repeat("y", 400))}
		if out.Turn%3 == 0 {
			ans, err := interlude.Interrupt(ctx, interlude.Request{Message: fmt.Sprintf("Keep turn %d?", out.Turn)})
			if err != nil {
				return review{}, err
			}
			var a string
			if err := ans.Decode(&a); err != nil {
				return review{}, err
			}
			out.Answers = []string{a}
		}
		return out, nil
	})
	g.AddEdge(graph.Start, "turn")
	app, err := g.Compile(graph.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// TestHistoryPagesReturnEveryCheckpointOnceNewestFirst pages through a thread
// with questions, answers and many snapshots in pages of several sizes: each
// checkpoint comes exactly once, newest first, and as the whole history read
// from the thread's first record shows it.
func TestHistoryPagesReturnEveryCheckpointOnceNewestFirst(t *testing.T) {
	ctx := context.Background()
	app := reviewGraph(t, memory.New())
	reviewThread(t, app, 40)
	all, err := app.History(ctx, "r", graph.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 66 || all[0].ID != 66 { // 40 turns, and a pause and an answer for each of 13 questions
		t.Fatalf("the whole history has %d checkpoints, the newest %d", len(all), all[0].ID)
	}
	for _, limit := range []int{1, 4, 7, 100} {
		var paged []graph.Checkpoint[review]
		for before := int64(0); ; {
			page, err := app.History(ctx, "r", graph.HistoryOptions{Limit: limit, Before: before})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit {
				t.Fatalf("a page of %d has %d checkpoints", limit, len(page))
			}
			if len(page) == 0 {
				break
			}
			paged = append(paged, page...)
			before = page[len(page)-1].ID
		}
		if len(paged) != len(all) {
			t.Fatalf("pages of %d gave %d checkpoints, want %d", limit, len(paged), len(all))
		}
		for i := range all {
			if !reflect.DeepEqual(canonical(t, paged[i]), canonical(t, all[i])) {
				t.Fatalf("pages of %d: checkpoint %d is\n%s\nwant\n%s", limit, i, canonical(t, paged[i]), canonical(t, all[i]))
			}
		}
	}
	var raised, resolved int
	for _, cp := range all {
		raised += len(cp.Raised)
		for _, a := range cp.Resolved {
			resolved++
			if a.Interrupt.Message == "" || a.Interrupt.ID != a.Resolution.InterruptID || a.Resolution.By != "alice" {
				t.Errorf("checkpoint %d: answer %+v does not carry its question", cp.ID, a)
			}
		}
	}
	if raised != 13 || resolved != 13 {
		t.Errorf("the history raises %d questions and answers %d, want 13 each", raised, resolved)
	}
}

func canonical(t *testing.T, cp graph.Checkpoint[review]) string {
	t.Helper()
	b, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHistoryCursorStaysStableWhileTheThreadGrows reads a first page, lets the
// thread grow, and goes on from the first page's oldest checkpoint: the next
// pages continue right below it, and every checkpoint of the thread as it was
// comes once.
func TestHistoryCursorStaysStableWhileTheThreadGrows(t *testing.T) {
	ctx := context.Background()
	app := reviewGraph(t, memory.New())
	reviewThread(t, app, 10)
	first, err := app.History(ctx, "r", graph.HistoryOptions{Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	newest := first[0].ID
	ids := []int64{}
	for _, cp := range first {
		ids = append(ids, cp.ID)
	}
	reviewThread(t, app, 10)
	for before := first[len(first)-1].ID; ; {
		page, err := app.History(ctx, "r", graph.HistoryOptions{Limit: 4, Before: before})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, cp := range page {
			ids = append(ids, cp.ID)
		}
		before = page[len(page)-1].ID
	}
	for i, id := range ids {
		if id != newest-int64(i) {
			t.Fatalf("paging from a first page of %d while the thread grew gave %v", newest, ids)
		}
	}
	if len(ids) != int(newest) {
		t.Fatalf("paging gave %d checkpoints, want %d", len(ids), newest)
	}
	if h, _ := app.History(ctx, "r", graph.HistoryOptions{Limit: 1}); h[0].ID <= newest {
		t.Fatalf("the newest page after the thread grew starts at %d", h[0].ID)
	}
}
