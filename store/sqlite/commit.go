package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"

	"github.com/interludehq/interlude/store"
)

// Group commit: one goroutine owns SQLite's one writer. It takes every request
// waiting at that moment, applies them in one transaction and commits it with
// one fsync, so that concurrent appends share the fsync; a group of NoSync
// requests only commits without it. Document writes (documents.go) and the
// outbox's claims and settles (outbox.go) join a group as writes in place of an
// append. A group is applied without savepoints, and again with one per request
// only when a request fails after writing (docs/ARCHITECTURE.md, "Why only
// acknowledged commits wait for the disk").

// maxGroup caps how many appends share one transaction.
const maxGroup = 256

type appendReq struct {
	ctx        context.Context
	a          store.Append
	interrupts []byte
	// write, if set, is the request's change instead of the append a (of
	// which only ThreadID, for messages, and NoSync are read): a document's
	// write, or an outbox claim or settle.
	write func(ctx context.Context, tx *sql.Tx) error
	err   error
	tried bool // applied in the group's transaction, whatever the outcome
	done  chan struct{}
}

type committer struct {
	s     *Store
	queue chan *appendReq
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

var errClosed = errors.New("sqlite store: the store is closed")

func newCommitter(s *Store) *committer {
	c := &committer{s: s, queue: make(chan *appendReq, maxGroup), stop: make(chan struct{})}
	c.wg.Add(1)
	go c.run()
	return c
}

// submit queues req and waits until its group is committed or refused. Once
// queued, an append is not abandoned when ctx ends: the caller learns its outcome.
func (c *committer) submit(ctx context.Context, req *appendReq) error {
	req.done = make(chan struct{})
	select {
	case c.queue <- req:
	case <-c.stop:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	<-req.done
	return req.err
}

func (c *committer) run() {
	defer c.wg.Done()
	group := make([]*appendReq, 0, maxGroup)
	for {
		select {
		case <-c.stop:
			c.drain()
			return
		case req := <-c.queue:
			group = append(group[:0], req)
		}
	more:
		for len(group) < maxGroup {
			select {
			case req := <-c.queue:
				group = append(group, req)
			default:
				break more
			}
		}
		c.commit(group)
	}
}

// commit applies a group in one transaction and reports each append's outcome.
func (c *committer) commit(group []*appendReq) {
	s := c.s
	finish := func(err error) {
		for _, r := range group {
			if r.err == nil {
				r.err = err
			}
			close(r.done)
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
		return
	}
	ctx := context.Background() // the group outlives any one caller's context
	// The group waits for the disk if any of its appends must.
	durable := slices.ContainsFunc(group, func(r *appendReq) bool { return r.err == nil && !r.a.NoSync })
	conn, err := s.writer(ctx, durable)
	if err != nil {
		finish(s.wrap("append to", group[0].a.ThreadID, err))
		return
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		finish(s.wrap("append to", group[0].a.ThreadID, err))
		return
	}
	applied, undo := c.applyAll(ctx, tx, group, false)
	if undo {
		// An append failed after writing: start the group over with a
		// savepoint around each append.
		if err := tx.Rollback(); err != nil {
			finish(s.wrap("append to", group[0].a.ThreadID, err))
			return
		}
		for _, r := range group {
			if r.err == nil || r.tried {
				r.err, r.tried = nil, false
			}
		}
		if tx, err = conn.BeginTx(ctx, nil); err != nil {
			finish(s.wrap("append to", group[0].a.ThreadID, err))
			return
		}
		applied, _ = c.applyAll(ctx, tx, group, true)
	}
	if applied == 0 {
		tx.Rollback()
		finish(nil)
		return
	}
	if err := tx.Commit(); err != nil {
		tx.Rollback()
		err = s.wrap("append to", group[0].a.ThreadID, err)
		for _, r := range group {
			if r.err == nil {
				r.err = err
			}
		}
		finish(nil)
		return
	}
	for range applied {
		s.ckpt.appended()
	}
	finish(nil)
}

// applyAll applies the group's live appends in tx, each inside a savepoint if
// saved is set, and returns how many were applied. Without savepoints it stops
// and reports undo at the first append that failed after writing, whose
// changes only a rollback of tx takes back.
func (c *committer) applyAll(ctx context.Context, tx *sql.Tx, group []*appendReq, saved bool) (applied int, undo bool) {
	s := c.s
	for _, r := range group {
		if r.err != nil {
			continue
		}
		r.tried = true
		var wrote bool
		if saved && len(group) > 1 {
			r.err = s.applySaved(ctx, tx, r)
		} else {
			wrote, r.err = s.do(ctx, tx, r)
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
func (s *Store) applySaved(ctx context.Context, tx *sql.Tx, r *appendReq) error {
	if _, err := tx.StmtContext(ctx, s.savepoint).ExecContext(ctx); err != nil {
		return s.wrap("append to", r.a.ThreadID, err)
	}
	_, err := s.do(ctx, tx, r)
	if err != nil {
		if _, rerr := tx.StmtContext(ctx, s.rollbackTo).ExecContext(ctx); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	if _, rerr := tx.StmtContext(ctx, s.release).ExecContext(ctx); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// do applies one request of a group, its write or else its append, and
// reports whether it wrote anything before it failed. A write that fails is
// taken to have written, so that only a rollback takes it back.
func (s *Store) do(ctx context.Context, tx *sql.Tx, r *appendReq) (wrote bool, err error) {
	if r.write != nil {
		err := r.write(ctx, tx)
		return err != nil, err
	}
	return s.apply(ctx, tx, r)
}

// drain refuses the appends still queued when the store closes.
func (c *committer) drain() {
	for {
		select {
		case r := <-c.queue:
			r.err = errClosed
			close(r.done)
		default:
			return
		}
	}
}

func (c *committer) close() {
	c.once.Do(func() {
		close(c.stop)
		c.wg.Wait()
	})
}
