package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// Checkpoints. SQLite copies the write-ahead log back into the database file
// ("checkpoints") by default inside the commit that makes the log pass 1000
// pages, so one append in a few hundred pays for copying and syncing hundreds of
// pages: tens of milliseconds, and about half the average cost of an append once
// appends spread over many threads. The store turns that off on the writer and
// checkpoints from a goroutine of its own, on a connection of its own, so appends
// go on while it runs (PASSIVE mode never blocks them).
//
// A passive checkpoint can only let the log start over once it has caught up with
// the writer; under a steady stream of appends it may never quite catch up, and
// the log would grow without end. So once the log is longer than
// ckptRestartFrames, the checkpointer follows the passive pass with a RESTART
// checkpoint on the writer's connection, which makes new appends wait while it
// copies the little the passive pass left, after which the log starts over. Under a
// steady stream of appends that is one short wait every few hundred appends;
// with pauses between appends the log starts over by itself.

const (
	// ckptEvery is how many appends separate two passive checkpoints: with about
	// six pages each, close to SQLite's own 1000-page trigger.
	ckptEvery = 160
	// ckptRestartFrames is the log length (in pages) past which a checkpoint
	// blocks new appends until the log can start over: 16 MiB of 4 KiB pages.
	ckptRestartFrames = 4096
)

// checkpointer runs checkpoints in the background.
type checkpointer struct {
	db            *sql.DB                                     // one connection, used only here, for passive checkpoints
	restart       func() (busy, logged, moved int, err error) // the rare RESTART, on the writer
	poke          chan struct{}
	stop          chan struct{}
	done          sync.WaitGroup
	every         uint64        // appends between passive checkpoints
	restartAt     int           // log frames past which a passive checkpoint is followed by RESTART
	appends       atomic.Uint64 // appends so far
	lastErr       atomic.Value  // errBox: the last checkpoint's outcome, for tests
	passives      atomic.Int64  // passive checkpoints run, for tests
	restarts      atomic.Int64  // restart checkpoints run, for tests
	beforeRestart func()        // a test hook, called before a RESTART checkpoint
}

type errBox struct{ err error }

func newCheckpointer(db *sql.DB, restart func() (busy, logged, moved int, err error)) *checkpointer {
	c := &checkpointer{db: db, restart: restart, poke: make(chan struct{}, 1), stop: make(chan struct{}), every: ckptEvery, restartAt: ckptRestartFrames}
	c.done.Add(1)
	go c.run()
	return c
}

// appended is called after each committed append.
func (c *checkpointer) appended() {
	if c.appends.Add(1)%c.every != 0 {
		return
	}
	select {
	case c.poke <- struct{}{}:
	default: // a checkpoint is already due
	}
}

func (c *checkpointer) run() {
	defer c.done.Done()
	for {
		select {
		case <-c.stop:
			return
		case <-c.poke:
		}
		c.checkpoint()
	}
}

func (c *checkpointer) checkpoint() {
	ctx := context.Background()
	var busy, logged, moved int
	err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &moved)
	c.passives.Add(1)
	// moved == logged says only that the pass copied what the log held when it
	// began; appends made during the pass may be left, and the log starts over
	// only if none are. So past the limit, RESTART regardless.
	if err == nil && logged > c.restartAt {
		if c.beforeRestart != nil {
			c.beforeRestart()
		}
		// On the writer's own connection, so appends queue behind it in the
		// process instead of polling for SQLite's lock in busy-handler sleeps.
		_, _, _, err = c.restart()
		c.restarts.Add(1)
	}
	// A failed checkpoint loses nothing: the log still holds every commit, and the
	// next checkpoint (or closing the store) copies it.
	c.lastErr.Store(errBox{err})
}

func (c *checkpointer) close() error {
	close(c.stop)
	c.done.Wait()
	return c.db.Close()
}
