package notify_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/testclock"
	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/postgres"
	"github.com/jackc/pgx/v5"
)

// twoReplicas opens two stores, each with its own connection pool as two
// server processes would have, over one fresh schema.
func twoReplicas(t *testing.T) (*postgres.Store, *postgres.Store) {
	dsn := os.Getenv("INTERLUDE_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("set INTERLUDE_TEST_POSTGRES to a Postgres connection string to run this test")
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "interlude_test_" + hex.EncodeToString(b)
	ctx := context.Background()
	var out [2]*postgres.Store
	for i := range out {
		s, err := postgres.Open(ctx, dsn, postgres.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	t.Cleanup(func() {
		out[1].Close()
		if _, err := out[0].Pool().Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop the test schema: %v", err)
		}
		out[0].Close()
	})
	return out[0], out[1]
}

func TestExactlyOneReplicaDeliversEachNotificationOnPostgres(t *testing.T) {
	ctx := context.Background()
	a, b := twoReplicas(t)
	rcv, srv := newReceiver(t)
	const threads = 60
	// Each replica runs half the threads; both dispatch all of them.
	for i, st := range []store.Store{a, b} {
		g := approvals(t, "refund", "approval", st)
		for j := i; j < threads; j += 2 {
			if _, err := g.Invoke(ctx, fmt.Sprint("order-", j), graph.Input(approval{Amount: j})); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	for i, st := range []store.Store{a, b} {
		d, err := notify.New(st, []notify.Destination{webhook(t, srv.URL, notify.Route{})}, notify.WithOwner(fmt.Sprint("replica-", i)))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for {
				n, err := d.DeliverDue(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	rcv.mu.Lock()
	seen := map[string]int{}
	for _, id := range rcv.ids {
		seen[id]++
	}
	rcv.mu.Unlock()
	if len(seen) != threads {
		t.Fatalf("%d distinct notifications delivered, want %d", len(seen), threads)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("notification %s delivered %d times", id, n)
		}
	}
	for _, st := range []store.Store{a, b} {
		ns, err := st.(store.Outbox).Notices(ctx, store.NoticeQuery{State: store.NoticeDelivered, Limit: 1000})
		if err != nil || len(ns) != threads {
			t.Fatalf("delivered in the log: %d (%v), want %d", len(ns), err, threads)
		}
	}
}

func TestExactlyOneReplicaEscalatesEachQuestionOnPostgres(t *testing.T) {
	ctx := context.Background()
	a, b := twoReplicas(t)
	clock := testclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	policy := notify.Escalation{After: time.Minute, ReassignTo: []string{"ops"}}
	var hosts []*host.Host
	for _, st := range []store.Store{a, b} {
		d, err := notify.New(st, nil, notify.WithEscalations(policy), notify.WithClock(clock.Now))
		if err != nil {
			t.Fatal(err)
		}
		h, err := host.New(host.WithGraph(payoutGraph(t, st, clock.Now, 0, "finance")), host.WithNotifier(d), host.WithClock(clock.Now),
			host.WithExpiryWatch(0), host.WithRecoveryWatch(0))
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, h)
	}
	const threads = 20
	for i := range threads {
		if _, err := hosts[i%2].Invoke(ctx, fmt.Sprint("p-", i), "payout", graph.Input(approval{Amount: i})); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(clock.Now().Add(time.Minute))
	var (
		wg    sync.WaitGroup
		total atomic.Int64
	)
	for _, h := range hosts {
		wg.Go(func() {
			n, err := h.EscalateQuestions(ctx)
			if err != nil {
				t.Error(err)
			}
			total.Add(int64(n))
		})
	}
	wg.Wait()
	if total.Load() != threads {
		t.Fatalf("the replicas escalated %d steps for %d questions", total.Load(), threads)
	}
	for i := range threads {
		hist, err := hosts[0].History(ctx, fmt.Sprint("p-", i), graph.HistoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, c := range hist {
			if c.Kind == "escalate" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("thread p-%d has %d escalations in its history", i, n)
		}
	}
}
