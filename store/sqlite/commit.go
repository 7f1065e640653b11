package sqlite

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/interludehq/interlude/store"
)

// Group commit: SQLite has one writer, and the caller that finds it free
// commits its own request at once, on its own goroutine (the leader). Requests
// made while a group is being committed wait in a queue; when the group is
// done, the leader wakes the first of them, which takes every request waiting
// at that moment and applies them in one transaction. Every group commits
// under synchronous=NORMAL, without an fsync; right after COMMIT its NoSync
// requests learn their outcome, and if it holds a durable one, one fdatasync
// of the log (Store.syncLog), still holding the writer, makes the group
// durable before its durable requests learn theirs and the writer passes on.
// So concurrent appends share the sync, and a NoSync append never waits for
// it. If the leader's own request is NoSync, the group's first durable request
// runs the sync and the hand-off instead, so the leader's caller goes on too.
// Document writes (documents.go), the outbox's claims, settles and retries
// (outbox.go), deletions and copies join a group as writes in place of an
// append; a checkpoint on the writer runs alone between two groups. So every
// write runs on the writer's one connection, which the store holds for its
// whole life, with its statements, BEGIN IMMEDIATE, COMMIT and ROLLBACK among
// them, prepared once: a group costs no transaction object of database/sql
// (and its goroutine) and no statement bound anew to one. A group is applied
// without savepoints, and again with one per request only when a request
// fails after writing (docs/ARCHITECTURE.md, "Why only acknowledged commits
// wait for the disk").

// maxGroup caps how many appends share one transaction.
const maxGroup = 256

type appendReq struct {
	ctx        context.Context
	a          store.Append
	interrupts []byte
	// write, if set, is the request's change instead of the append a (of
	// which only ThreadID, for messages, and NoSync are read): a document's
	// write, an outbox claim or settle, a deletion, a copy. It runs inside
	// the group's transaction, on the writer's connection (Store.wc).
	write func(ctx context.Context) error
	// solo, if set, is the request instead: it runs alone on the writer's
	// connection, outside any transaction, between two groups (a checkpoint
	// on the writer, for one). It is never part of a group.
	solo  func(ctx context.Context) error
	err   error
	tried bool // applied in the group's transaction, whatever the outcome
	// wake receives once: when the request's group is done, or, with lead
	// set, when its caller is to commit the next group.
	wake chan struct{}
	lead bool
	// durable is set when the request's group committed it and it waits for
	// the log's sync; sync, when its caller is to run that sync and hand the
	// writer on (the leader's own request did not wait for it).
	durable, sync bool
}

type committer struct {
	s       *Store
	mu      sync.Mutex
	queue   []*appendReq // waiting for the next group, oldest first
	leading bool         // a caller is committing a group
	closed  bool
	idle    sync.Cond    // signalled when the last group ends after close
	group   []*appendReq // the leader's group, reused by the next leader
	groups  atomic.Int64 // groups committed, for tests
	// listed holds the listing facts of the threads the leaders last wrote
	// (see Store.updateThread); only the leader uses it.
	listed map[string]listing
}

var (
	errClosed    = errors.New("sqlite store: the store is closed")
	errAbandoned = errors.New("sqlite store: the group commit holding the append stopped before reporting its outcome")
)

func newCommitter(s *Store) *committer {
	c := &committer{s: s, listed: make(map[string]listing)}
	c.idle.L = &c.mu
	return c
}

// submit queues req and waits until its group is committed or refused,
// committing the group itself when the writer is free. Once queued, an append
// is not abandoned when ctx ends: the caller learns its outcome.
func (c *committer) submit(ctx context.Context, req *appendReq) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req.wake = make(chan struct{}, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	c.queue = append(c.queue, req)
	if c.leading {
		c.mu.Unlock()
		<-req.wake
		if req.sync {
			c.syncGroup(c.group, req)
			return req.err
		}
		if !req.lead {
			return req.err
		}
		c.mu.Lock()
		if c.closed {
			c.refuseLocked()
			return req.err
		}
	}
	c.leading = true
	c.lead()
	return req.err
}

// lead commits the group at the head of the queue, whose first request is the
// caller's, then hands the writer to the next waiting request. It is entered
// with c.mu held and returns with it released.
func (c *committer) lead() {
	n := min(len(c.queue), maxGroup)
	if c.queue[0].solo != nil {
		n = 1
	} else if i := slices.IndexFunc(c.queue[:n], isSolo); i >= 0 {
		n = i
	}
	group := append(c.group[:0], c.queue[:n]...)
	c.group = group
	rest := copy(c.queue, c.queue[n:])
	clear(c.queue[rest:])
	c.queue = c.queue[:rest]
	c.mu.Unlock()

	finished := false
	defer func() {
		if finished {
			return
		}
		// A panic in a write: its waiters and the next leader go on.
		for _, r := range group[1:] {
			if r.err == nil {
				r.err = errAbandoned
			}
			r.wake <- struct{}{}
		}
		clear(group)
		c.handOff()
	}()
	if r := group[0]; r.solo != nil {
		if r.err = r.ctx.Err(); r.err == nil {
			r.err = r.solo(context.Background())
		}
		finished = true
		clear(group)
		c.handOff()
		return
	}
	needSync := c.commit(group)
	finished = true
	if needSync {
		for _, r := range group {
			r.durable = r.err == nil && !r.a.NoSync
		}
	}
	for _, r := range group[1:] {
		if !r.durable {
			r.wake <- struct{}{}
		}
	}
	if !needSync {
		clear(group)
		c.handOff()
		return
	}
	if group[0].durable {
		c.syncGroup(group, group[0])
		return
	}
	for _, r := range group[1:] {
		if r.durable {
			r.sync = true
			r.wake <- struct{}{}
			return
		}
	}
}

func isSolo(r *appendReq) bool { return r.solo != nil }

// syncGroup syncs the log after a group's commit, wakes the group's durable
// requests but self, whose caller runs it, and hands the writer on. A failed
// sync fails the durable requests.
func (c *committer) syncGroup(group []*appendReq, self *appendReq) {
	if err := c.s.syncLog(); err != nil {
		for _, r := range group {
			if r.durable {
				r.err = err
			}
		}
	}
	for _, r := range group[1:] {
		if r.durable && r != self {
			r.wake <- struct{}{}
		}
	}
	clear(group)
	c.handOff()
}

// handOff wakes the next leader, if a request waits, or frees the writer.
func (c *committer) handOff() {
	c.mu.Lock()
	switch {
	case c.closed:
		c.refuseLocked()
		return
	case len(c.queue) > 0:
		next := c.queue[0]
		next.lead = true
		next.wake <- struct{}{}
	default:
		c.leading = false
	}
	c.mu.Unlock()
}

// refuseLocked refuses the requests still queued once the store is closing and
// releases the writer. It is entered with c.mu held and returns with it
// released.
func (c *committer) refuseLocked() {
	for _, r := range c.queue {
		r.err = errClosed
		if !r.lead {
			r.wake <- struct{}{}
		}
	}
	clear(c.queue)
	c.queue = c.queue[:0]
	c.leading = false
	c.idle.Broadcast()
	c.mu.Unlock()
}

// commit applies a group in one transaction, sets each append's outcome and
// reports whether the log is to be synced: the group committed a durable
// append and the store syncs them.
func (c *committer) commit(group []*appendReq) (needSync bool) {
	s := c.s
	c.groups.Add(1)
	finish := func(err error) {
		for _, r := range group {
			if r.err == nil {
				r.err = err
			}
		}
	}
	// Appends whose callers gave up before the group started are not applied.
	live := 0
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.err = err
		} else {
			live++
		}
	}
	if live == 0 {
		finish(nil)
		return false
	}
	ctx := context.Background() // the group outlives any one caller's context
	if err := s.begin(ctx); err != nil {
		finish(s.wrap("append to", group[0].a.ThreadID, err))
		return false
	}
	applied, undo := c.applyAll(ctx, group, false)
	if undo {
		// An append failed after writing: start the group over with a
		// savepoint around each append.
		if err := s.rollback(ctx); err != nil {
			finish(s.wrap("append to", group[0].a.ThreadID, err))
			return false
		}
		for _, r := range group {
			if r.err == nil || r.tried {
				r.err, r.tried = nil, false
			}
		}
		if err := s.begin(ctx); err != nil {
			finish(s.wrap("append to", group[0].a.ThreadID, err))
			return false
		}
		applied, _ = c.applyAll(ctx, group, true)
	}
	if applied == 0 {
		s.rollback(ctx)
		finish(nil)
		return false
	}
	if _, err := s.commitTx.ExecContext(ctx); err != nil {
		// A COMMIT that failed may leave the transaction open (SQLITE_BUSY)
		// or may have rolled it back already; either way none of it holds.
		s.rollback(ctx)
		finish(s.wrap("append to", group[0].a.ThreadID, err))
		return false
	}
	for range applied {
		s.ckpt.appended()
	}
	finish(nil)
	return s.durable && slices.ContainsFunc(group, func(r *appendReq) bool { return r.err == nil && !r.a.NoSync })
}

// applyAll applies the group's live appends in the open transaction, each inside a savepoint if
// saved is set, and returns how many were applied. Without savepoints it stops
// and reports undo at the first append that failed after writing, whose
// changes only a rollback takes back.
func (c *committer) applyAll(ctx context.Context, group []*appendReq, saved bool) (applied int, undo bool) {
	s := c.s
	for _, r := range group {
		if r.err != nil {
			continue
		}
		r.tried = true
		var wrote bool
		if saved && len(group) > 1 {
			r.err = s.applySaved(ctx, r)
		} else {
			wrote, r.err = s.do(ctx, r)
		}
		switch {
		case r.err == nil:
			applied++
		case wrote && len(group) > 1:
			return applied, true
		}
	}
	return applied, false
}

// applySaved applies one append of a group inside a savepoint, so its failure
// leaves the others' changes in place.
func (s *Store) applySaved(ctx context.Context, r *appendReq) error {
	if _, err := s.savepoint.ExecContext(ctx); err != nil {
		return s.wrap("append to", r.a.ThreadID, err)
	}
	_, err := s.do(ctx, r)
	if err != nil {
		if _, rerr := s.rollbackTo.ExecContext(ctx); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	if _, rerr := s.release.ExecContext(ctx); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// do applies one request of a group, its write or else its append, and
// reports whether it wrote anything before it failed. A write that fails is
// taken to have written, so that only a rollback takes it back.
func (s *Store) do(ctx context.Context, r *appendReq) (wrote bool, err error) {
	if r.write != nil {
		err := r.write(ctx)
		return err != nil, err
	}
	return s.apply(ctx, r)
}

// close waits for the group being committed, if any, and makes every later
// request fail with errClosed.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	for c.leading {
		c.idle.Wait()
	}
	c.mu.Unlock()
}
