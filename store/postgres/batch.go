package postgres

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// batcher sends the one-row statements that concurrent callers make on a pool
// in shared round trips. One batch is out at a time; calls made meanwhile
// queue, and when it returns, everything queued goes out as the next one: one
// pipeline, so one round trip and one implicit transaction, whose single commit
// (and WAL flush, for durable writes) serves every call in it. A caller alone
// sends its statement at once, so batching adds no wait to an idle store, and a
// busy one makes fewer round trips and commits the busier it gets. (Letting two
// batches out at once measured slower: the second mostly halves the first.)
//
// Under load, a batch handed on with only a few calls waits briefly (wait,
// default DefaultBatchWait) for more before it goes out, and the calls made
// meanwhile join it: every call that joins saves the database a round trip and
// a commit, which on a busy machine cost more than the wait. With only a few
// callers about, it waits only until the callers of the batch before it have
// called again (see gather). A call that finds no batch out is sent at once.
//
// A batch carries at most one call per thread, so its statements never touch
// the same rows, and at most a few megabytes of data, so that large snapshots
// do not make one huge transaction. If a statement fails, the transaction
// rolls back and the calls of the batch are sent again one by one, so that
// only the failing call fails.
type batcher struct {
	pool      *pgxpool.Pool
	maxCalls  int
	maxBytes  int           // a batch's calls carry at most this many bytes of data, unless it has one call
	wait      time.Duration // how long a batch handed on with fewer than waitBelow calls waits for more
	waitBelow int
	pause     func(d time.Duration, enough <-chan struct{}) // waits for d or enough; a test may stand in

	mu     sync.Mutex
	busy   bool // a batch is out
	queue  []*call
	sent   int           // the calls of the batch that came back last
	want   int           // while a batch waits for more calls: how many queued calls end the wait
	enough chan struct{} // closed once want calls are queued; nil unless a batch waits
}

// call is one statement of a batch and what came of it.
type call struct {
	ctx      context.Context
	threadID string   // the thread the statement writes
	threads  []string // instead, the threads whose events it writes
	query    string
	args     []any
	dest     []any
	size     int // the bytes of data it carries, roughly: records, snapshots, events
	err      error
	// wake receives nil once the call's result is in, or a batch led by this
	// call, which its caller then sends.
	wake chan []*call
}

// newBatcher returns a batcher on pool whose small batches wait for more
// calls for wait under load (0: never).
func newBatcher(pool *pgxpool.Pool, wait time.Duration) *batcher {
	return &batcher{pool: pool, maxCalls: 64, maxBytes: 4 << 20, wait: wait, waitBelow: 16, pause: pause}
}

// pause waits for d to pass or enough to be closed, whichever comes first.
func pause(d time.Duration, enough <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-enough:
	}
}

// queryRow runs query with args as pool.QueryRow(...).Scan(dest...) would, in a
// batch with the calls of others. threadID names the thread the statement
// writes. A caller whose ctx ends while its call is queued leaves the queue.
// Once the call is sent, its caller waits for the outcome, so that a statement
// that took effect is never reported as abandoned; the batch is cancelled when
// the contexts of all its callers have ended.
func (b *batcher) queryRow(ctx context.Context, threadID, query string, args []any, dest ...any) error {
	return b.do(&call{ctx: ctx, threadID: threadID, query: query, args: args, dest: dest})
}

// do runs c in a batch with the calls of others, as queryRow does.
func (b *batcher) do(c *call) error { return b.await(c, b.submit(c)) }

// submit queues c, or reports true if no batch is out: c then leads the next
// one, and no call submitted later goes before it. The caller must pass what
// submit reports to await. Calls on one thread are sent in the order they are
// submitted, so a caller that submits under a lock of its own orders them.
func (b *batcher) submit(c *call) (lead bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.busy {
		b.busy = true
		return true
	}
	c.wake = make(chan []*call, 1)
	b.queue = append(b.queue, c)
	if b.enough != nil && len(b.queue) >= b.want {
		close(b.enough)
		b.enough = nil
	}
	return false
}

// await sends c, if it leads, or waits for the batch that carries it, and
// returns what came of it.
func (b *batcher) await(c *call, lead bool) error {
	if lead {
		b.lead([]*call{c}, c)
		return c.err
	}
	var batch []*call
	select {
	case batch = <-c.wake:
	case <-c.ctx.Done():
		if b.withdraw(c) {
			return c.ctx.Err()
		}
		batch = <-c.wake
	}
	if batch != nil {
		b.lead(b.gather(batch), c)
	}
	return c.err
}

// gather returns batch, which was handed on, with the calls queued while it
// waited for them, if it is small enough to wait. It waits until wait has
// passed or the batch would be full; when it, the queue and the batch before
// it hold fewer than waitBelow calls in all, only until as many calls are
// queued as the batch before it carried.
func (b *batcher) gather(batch []*call) []*call {
	if b.wait <= 0 || len(batch) >= b.waitBelow {
		return batch
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	want := b.maxCalls - len(batch) // under load: the whole wait, unless the batch fills
	if len(batch)+len(b.queue)+b.sent < b.waitBelow {
		want = min(b.sent, want) // a few callers: until those of the batch before call again
	}
	if len(b.queue) < want {
		enough := make(chan struct{})
		b.want, b.enough = want, enough
		b.mu.Unlock()
		b.pause(b.wait, enough)
		b.mu.Lock()
		b.enough = nil
	}
	return b.takeInto(batch)
}

// lead sends batch, which holds own, the caller's call, then hands the queue
// on as the next batch to the first of its callers and wakes the other callers
// of this one. It does so even if sending panics, so that the store goes on
// serving.
func (b *batcher) lead(batch []*call, own *call) {
	sent := false
	defer func() {
		if !sent {
			for _, c := range batch {
				c.err = errBatchFailed
			}
		}
		b.handOn(batch, own)
	}()
	b.send(batch)
	sent = true
}

var errBatchFailed = errors.New("postgres store: sending this statement failed unexpectedly; try again")

// handOn gives the queue, as the next batch, to the first of its callers, and
// wakes the callers of batch but the leader, whose call is own.
func (b *batcher) handOn(batch []*call, own *call) {
	b.mu.Lock()
	next := b.take()
	b.busy, b.sent = next != nil, len(batch)
	b.mu.Unlock()
	if next != nil {
		next[0].wake <- next
	}
	for _, c := range batch {
		if c != own {
			c.wake <- nil
		}
	}
}

// take removes the next batch from the queue: the oldest calls, up to
// maxCalls and maxBytes, one per thread, except that a call carrying several
// threads' events may go ahead of calls on those threads in the same batch. A
// call never passes an earlier one on the same thread that stays queued, so
// each thread's calls are sent in the order they were submitted. It returns
// nil if nothing is queued.
//
// The batch goes out with the calls carrying several threads' events first,
// then the others in the order of their threads: batches of different replicas
// then lock the rows they share in the same order, and never deadlock.
func (b *batcher) take() []*call {
	if len(b.queue) == 0 {
		return nil
	}
	return b.takeInto(nil)
}

// takeInto adds to next, a batch taken earlier, the queued calls that may
// join it by take's rules, as if they had been queued behind it, and returns
// it in take's order.
func (b *batcher) takeInto(next []*call) []*call {
	size := 0
	taken := make(map[string]bool)   // threads with a one-thread call in next
	waiting := make(map[string]bool) // threads with a call left queued
	for _, c := range next {
		size += c.size
		if c.threads == nil {
			taken[c.threadID] = true
		}
	}
	rest := b.queue[:0]
	for _, c := range b.queue {
		threads := c.threads
		if threads == nil {
			threads = []string{c.threadID}
		}
		ok := len(next) < b.maxCalls && (len(next) == 0 || size+c.size <= b.maxBytes)
		for _, t := range threads {
			ok = ok && !taken[t] && !waiting[t]
		}
		if !ok {
			rest = append(rest, c)
			for _, t := range threads {
				waiting[t] = true
			}
			continue
		}
		next, size = append(next, c), size+c.size
		if c.threads == nil {
			taken[c.threadID] = true
		}
	}
	clear(b.queue[len(rest):])
	b.queue = rest
	slices.SortStableFunc(next, func(x, y *call) int {
		if c := cmp.Compare(x.rank(), y.rank()); c != 0 || x.threads != nil {
			return c
		}
		return strings.Compare(x.threadID, y.threadID)
	})
	return next
}

// rank orders a batch: calls carrying several threads' events (which lock no
// rows) before calls on one thread.
func (c *call) rank() int {
	if c.threads != nil {
		return 0
	}
	return 1
}

// withdraw removes c from the queue, reporting false if it was already taken.
func (b *batcher) withdraw(c *call) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.queue, c)
	if i < 0 {
		return false
	}
	b.queue = slices.Delete(b.queue, i, i+1)
	return true
}

// send runs the calls of batch and sets what came of each.
func (b *batcher) send(batch []*call) {
	if len(batch) == 1 {
		b.sendOne(batch[0].ctx, batch[0])
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].ctx))
	defer cancel()
	live := len(batch)
	var mu sync.Mutex
	for _, c := range batch {
		stop := context.AfterFunc(c.ctx, func() {
			mu.Lock()
			defer mu.Unlock()
			if live--; live == 0 {
				cancel()
			}
		})
		defer stop()
	}
	var pb pgx.Batch
	for _, c := range batch {
		pb.Queue(c.query, c.args...)
	}
	results := b.pool.SendBatch(ctx, &pb)
	for _, c := range batch {
		c.err = results.QueryRow().Scan(c.dest...)
	}
	err := results.Close()
	if rolledBack(err) || slices.ContainsFunc(batch, func(c *call) bool { return rolledBack(c.err) }) {
		// A statement failed, so none of the batch was written: send each
		// call alone, so that the others succeed.
		for _, c := range batch {
			b.sendOne(ctx, c)
		}
		return
	}
	if err != nil {
		// The connection failed: what was committed is unknown, so every call
		// reports the failure.
		for _, c := range batch {
			if c.err == nil || errors.Is(c.err, pgx.ErrNoRows) {
				c.err = err
			}
		}
	}
}

func (b *batcher) sendOne(ctx context.Context, c *call) {
	c.err = b.pool.QueryRow(ctx, c.query, c.args...).Scan(c.dest...)
}

// rolledBack reports whether err is the server's refusal of a statement, which
// rolls back the transaction it was in.
func rolledBack(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr)
}
