package host

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude/graph"
)

// publish publishes a custom event of about size bytes on the thread.
func publish(h *Hub, threadID string, size int) {
	h.Publish(graph.Event{Type: graph.EventCustom, ThreadID: threadID, Data: strings.Repeat("x", size)})
}

// kept returns the ids of the thread's kept events.
func kept(h *Hub, threadID string) []int64 {
	var ids []int64
	for _, ev := range h.kept.after(threadID, 0) {
		ids = append(ids, ev.ID)
	}
	return ids
}

func TestTheHubForgetsTheThreadsThatPublishedLeastRecentlyFirst(t *testing.T) {
	h, err := NewHub(WithHubBytes(64 << 10)) // events of up to 8 KiB are kept
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		for range 4 {
			publish(h, id, 4000)
		}
	}
	publish(h, "a", 4000) // a published last; b is now the oldest
	for i := range 8 {
		publish(h, "new"+strconv.Itoa(i), 4000)
	}
	if size, _ := h.kept.usage(); size > 64<<10 {
		t.Fatalf("the hub keeps %d bytes, over its budget of %d", size, 64<<10)
	}
	if len(kept(h, "b")) != 0 {
		t.Error("thread b, which published least recently, kept its events")
	}
	if len(kept(h, "a")) != 5 {
		t.Errorf("thread a, which published recently, keeps %d of its 5 events", len(kept(h, "a")))
	}
	if len(kept(h, "new7")) != 1 {
		t.Error("the newest thread lost its event")
	}
}

func TestTheHubKeepsNoEventOverAnEighthOfItsBudgetNorTheOlderOnes(t *testing.T) {
	h, err := NewHub(WithHubBytes(64 << 10))
	if err != nil {
		t.Fatal(err)
	}
	publish(h, "t", 100)
	publish(h, "other", 100)
	publish(h, "t", 9000) // over 8 KiB
	if ids := kept(h, "t"); len(ids) != 0 {
		t.Fatalf("the thread keeps %d events across the one too large to keep; a replay would skip it", len(ids))
	}
	publish(h, "t", 100)
	if ids := kept(h, "t"); len(ids) != 1 {
		t.Fatalf("after the large event the thread keeps %d events, want the one after it", len(ids))
	}
	if len(kept(h, "other")) != 1 {
		t.Error("another thread lost its event")
	}
	// A thread alone over the budget loses its oldest events.
	for range 100 {
		publish(h, "t", 4000)
	}
	if size, n := h.kept.usage(); size > 64<<10 || n < 10 {
		t.Fatalf("the hub keeps %d events of %d bytes, want the newest within %d", n, size, 64<<10)
	}
}

func TestHubEventsKeepTheHeapWithinTheBudget(t *testing.T) {
	const budget = 8 << 20
	h, err := NewHub(WithHubBytes(budget))
	if err != nil {
		t.Fatal(err)
	}
	before := heapAlloc()
	// Threads publish 0.9 MB events (as a large topic's updates would), 22 MB
	// in all.
	for i := range 24 {
		publish(h, "thread"+strconv.Itoa(i), 900_000)
	}
	after := heapAlloc()
	grown := int64(after) - int64(before)
	t.Logf("heap %d -> %d KiB (%+d KiB) for 24 events of 0.9 MB with a budget of %d KiB", before>>10, after>>10, grown>>10, budget>>10)
	if slack := int64(4 << 20); grown > budget+slack {
		t.Errorf("the heap grew by %d KiB, over the hub's budget of %d KiB (plus %d KiB of slack)", grown>>10, budget>>10, slack>>10)
	}
	runtime.KeepAlive(h)
}

// heapAlloc returns the live heap after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func TestAHubIsListeningOnlyWhileSomeoneSubscribes(t *testing.T) {
	hub, err := NewHub()
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	if hub.Listening("t") {
		t.Fatal("a hub without subscribers says someone listens")
	}
	sub, err := hub.SubscribeAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !hub.Listening("t") {
		t.Fatal("a hub with a subscriber says nobody listens")
	}
	sub.Close()
	if hub.Listening("t") {
		t.Fatal("a hub whose subscriber left still says someone listens")
	}
}

// lateLog is an EventLog whose listener delivers only when the test says, as
// a log's listener that is slow to catch up does.
type lateLog struct {
	last    int64
	deliver chan func(id int64, threadID, name string, data []byte)
}

func (l *lateLog) Publish(string, string, []byte, bool) {}
func (l *lateLog) Read(context.Context, string, int64, func(int64, string, []byte) error) error {
	return nil
}
func (l *lateLog) Ready(context.Context) error                 { return nil }
func (l *lateLog) Last(context.Context, string) (int64, error) { return l.last, nil }
func (l *lateLog) Listen(ctx context.Context, _ func() bool, deliver func(int64, string, string, []byte), _ func()) error {
	l.deliver <- deliver
	<-ctx.Done()
	return ctx.Err()
}

func TestALiveSubscriptionSkipsEventsAtOrBeforeWhereItStarted(t *testing.T) {
	log := &lateLog{last: 3, deliver: make(chan func(int64, string, string, []byte), 1)}
	hub, err := NewHub(WithHubLog(log))
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	deliver := <-log.deliver
	ctx := context.Background()
	sub, err := hub.Subscribe(ctx, "t", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Position() != 3 {
		t.Fatalf("the subscription starts at %d, want 3", sub.Position())
	}
	// The log's listener was behind: it delivers events the thread had
	// before the subscription started, then a new one.
	for id := int64(1); id <= 4; id++ {
		deliver(id, "t", "updates", []byte(`{}`))
	}
	ev, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != 4 {
		t.Fatalf("the first live event had id %d, want 4: the ones at or before the start were delivered", ev.ID)
	}
}

func TestResumingFromZeroReplaysEveryKeptEventOfTheThread(t *testing.T) {
	hub, err := NewHub()
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	publish(hub, "t", 10)
	publish(hub, "other", 10)
	publish(hub, "t", 10)
	want := kept(hub, "t")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // the events are there, or the test fails
	defer cancel()
	sub, err := hub.Subscribe(ctx, "t", true, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for _, id := range want {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.ID != id {
			t.Fatalf("resuming from 0 delivered event %d, want %d (the kept ones are %v)", ev.ID, id, want)
		}
	}
}
