package notify_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/sqlite"
)

func TestUnderLoadEveryNoticeReachesTheReceiverExactlyOnce(t *testing.T) {
	const threads, clients = 150, 16
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "load.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rcv, srv := newReceiver(t)
	g := approvals(t, "refund", "approval", st)
	// Two dispatchers share the outbox, as two replicas would.
	runCtx, stop := context.WithCancel(ctx)
	var running sync.WaitGroup
	var ds []*notify.Dispatcher
	for i := range 2 {
		d, err := notify.New(st, []notify.Destination{webhook(t, srv.URL, notify.Route{})}, notify.WithOwner(fmt.Sprint("replica-", i)))
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
		running.Go(func() { d.Run(runCtx) })
	}
	var work sync.WaitGroup
	next := make(chan int)
	for range clients {
		work.Go(func() {
			for i := range next {
				id := fmt.Sprint("order-", i)
				if _, err := g.Invoke(ctx, id, graph.Input(approval{Amount: i})); err != nil {
					t.Error(err)
					return
				}
				if _, err := g.Invoke(ctx, id, graph.Resume(interlude.Resolve(true))); err != nil {
					t.Error(err)
					return
				}
				ds[i%2].Wake()
			}
		})
	}
	for i := range threads {
		next <- i
	}
	close(next)
	work.Wait()
	rcv.wait(t, 2*threads)
	stop()
	running.Wait()
	rcv.mu.Lock()
	seen := map[string]int{}
	for _, id := range rcv.ids {
		seen[id]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("notice %s reached the receiver %d times", id, n)
		}
	}
	if len(seen) != 2*threads {
		t.Errorf("%d distinct notices arrived, want %d", len(seen), 2*threads)
	}
	rcv.mu.Unlock()
	delivered, err := st.Notices(ctx, store.NoticeQuery{State: store.NoticeDelivered, Limit: 1000})
	if err != nil || len(delivered) != 2*threads {
		t.Fatalf("%d notices recorded as delivered (%v), want %d", len(delivered), err, 2*threads)
	}
}
