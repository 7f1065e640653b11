package host

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
)

// WithExpiryWatch sets how often the host closes the questions whose time to
// live (interlude.Request.TTL) has passed: each is resolved as expired, by
// ExpiryActor, and its thread runs on as it does after a cancellation. With
// several processes over one store, each question is closed once, by
// whichever gets to it first. The default is every second; 0 turns it off,
// for a program that calls ExpireQuestions itself. The store must list
// expiries (store.ExpiryIndex, as the stores of this module do).
func WithExpiryWatch(every time.Duration) Option {
	return func(c *config) { c.watch.expiry = watchPeriod(c, "host.WithExpiryWatch", every) }
}

// WithRecoveryWatch sets how often the host finishes the runs that stopped
// before their end (their process died, or their context was cancelled)
// after committing work that left more to do: answers that started a step,
// or a step after which nodes were due. Such a thread reads as running, with
// no question pending, and the host runs it on from its last checkpoint
// (graph.Recover): an answered step's tasks receive the recorded answers, and
// committed steps are not run again. The host looks once when it starts and
// then every period; with several processes, each thread is finished by one
// of them, under the thread's lease, once the lease of the run that stopped
// has expired or been given up. The default is every second; 0 turns it off,
// for a program that calls RecoverThreads itself. The store must list such
// threads (store.RecoveryIndex, as the stores of this module do).
func WithRecoveryWatch(every time.Duration) Option {
	return func(c *config) { c.watch.recovery = watchPeriod(c, "host.WithRecoveryWatch", every) }
}

// WithLeaseWatch sets how often, with a store several processes share (a
// store.LeaseWatcher such as Postgres) and somewhere to announce events
// (WithEvents), the host looks for runs that died with their process: their
// lease expired. It announces an end event for each such thread, which one
// process sends: failed for a run that died before committing anything,
// interrupted for one that died after committing its pause (the thread's
// questions are pending). A run that died after committing answers or a step
// with more left to do gets none: the recovery watch finishes it, and that
// run ends it. The default is every second; 0 turns it off.
func WithLeaseWatch(every time.Duration) Option {
	return func(c *config) { c.watch.leases = watchPeriod(c, "host.WithLeaseWatch", every) }
}

// watchPeriod returns every, recording a negative one as a problem (0 turns
// a watch off).
func watchPeriod(c *config, option string, every time.Duration) time.Duration {
	if every < 0 {
		c.Refuse(option, "%v is negative; give a period, or 0 to turn the watch off", every)
		return 0
	}
	return every
}

// Start runs the watches the store allows and the options turn on, until Close
// or ctx ends. It returns at once; calling it again does nothing.
func (h *Host) Start(ctx context.Context) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.active != nil {
		return
	}
	h.active = &sync.WaitGroup{}
	stop := context.AfterFunc(ctx, h.stop)
	h.active.Go(func() {
		<-h.life.Done()
		stop()
	})
	if _, ok := store.As[store.ExpiryIndex](h.store); ok && h.watch.expiry > 0 {
		var lastEscalation time.Time
		h.active.Go(func() {
			h.every(h.watch.expiry, false, func() {
				if _, err := h.ExpireQuestions(h.life); err != nil && h.life.Err() == nil {
					h.log.Warn("closing expired questions failed", "err", err)
				}
				if time.Since(lastEscalation) >= escalationEvery {
					lastEscalation = time.Now()
					if _, err := h.EscalateQuestions(h.life); err != nil && h.life.Err() == nil {
						h.log.Warn("escalating questions failed", "err", err)
					}
				}
			})
		})
	}
	if _, ok := store.As[store.RecoveryIndex](h.store); ok && h.watch.recovery > 0 {
		h.active.Go(func() {
			h.every(h.watch.recovery, true, func() {
				if _, err := h.RecoverThreads(h.life); err != nil && h.life.Err() == nil {
					h.log.Warn("finishing the runs that stopped before their end failed", "err", err)
				}
			})
		})
	}
	if h.notifier != nil {
		h.active.Go(func() { h.notifier.Run(h.life) })
	}
	if w, ok := store.As[store.LeaseWatcher](h.store); ok && h.hub != nil && h.watch.leases > 0 {
		h.active.Go(func() { h.watchLeases(w, h.watch.leases) })
	}
}

// Close stops the watches and waits for them, cancelling the runs they were
// driving (their unfinished steps are not committed, and the next host to
// start over the store finishes them). Runs started by Invoke and Stream are
// the callers'. Close is safe to call more than once.
func (h *Host) Close() error {
	h.mu.Lock()
	h.closed = true
	active := h.active
	h.mu.Unlock()
	h.stop()
	if active != nil {
		active.Wait()
	}
	return nil
}

// every calls fn each period until the host closes, and first at once when
// now is set. A call that outlasts the period delays the next one rather than
// overlapping it.
func (h *Host) every(period time.Duration, now bool, fn func()) {
	if now {
		fn()
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-h.life.Done():
			return
		case <-tick.C:
			fn()
		}
	}
}

// eachThread calls run for each thread of due whose graph this host hosts, at
// most parallel at a time, so that one slow run (an agent waiting for its
// model) does not hold the others up, and adds up what the calls return. It
// starts no call once ctx is done.
func (h *Host) eachThread(ctx context.Context, due []store.Meta, parallel int, run func(g graph.Erased, m store.Meta) int) int {
	var (
		sum   atomic.Int64
		wg    sync.WaitGroup
		slots = make(chan struct{}, parallel)
	)
	for _, m := range due {
		g := h.graphs[m.Graph]
		if g == nil {
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			sum.Add(int64(run(g, m)))
		})
	}
	wg.Wait()
	return int(sum.Load())
}

// run runs cmd on an existing thread for a watch, holding it as Hold does;
// without wait a thread that a run of this process holds is refused as busy.
func (h *Host) run(ctx context.Context, threadID string, wait bool, cmd graph.Command) (*graph.Result[json.RawMessage], error) {
	held, err := h.hold(ctx, threadID, "", false, wait)
	if err != nil {
		return nil, err
	}
	defer held.Release()
	return held.Invoke(ctx, cmd)
}

// raced reports whether err says that another run or answer got to the thread
// first: the question is no longer there to close, or is being closed elsewhere.
func raced(err error) bool {
	for _, target := range []error{interlude.ErrThreadBusy, interlude.ErrConflict, interlude.ErrUnknownInterrupt,
		interlude.ErrNotInterrupted, interlude.ErrNotFound} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
