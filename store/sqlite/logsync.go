package sqlite

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// logSync makes commits durable after the fact: every commit runs under
// synchronous=NORMAL, and a durable one is followed by one fdatasync of the
// write-ahead log, through a file descriptor of the store's own (a sync is of
// the file, whichever descriptor asks for it). SQLite reuses the log's file
// after a checkpoint restarts it, and deletes it only when the last connection
// to the database closes, so one descriptor serves the store's whole life; it
// is reopened all the same if the file it names was unlinked.
type logSync struct {
	path string // the database file; the log is path+"-wal"

	mu   sync.Mutex
	f    *os.File     // the log, opened at the first sync
	err  error        // the first failed sync: every later one fails with it
	n    int64        // syncs so far, for tests
	hook func() error // a test hook, run before each sync; its error fails it
}

// syncLog makes every commit so far durable, unless the store was opened
// WithSynchronous("NORMAL"). After a failed sync the operating system may have
// dropped the log's unwritten pages, so every later sync fails too: the store
// has to be closed and the disk looked at.
func (s *Store) syncLog() error {
	if !s.durable {
		return nil
	}
	l := &s.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	l.n++
	err := error(nil)
	if l.hook != nil {
		err = l.hook()
	}
	if err == nil {
		err = l.sync()
	}
	if err != nil {
		l.err = fmt.Errorf("sqlite store: sync the write-ahead log of %s: %w; the commit is in the log but may not survive a power loss, and later durable writes will fail: close the store and check the disk", l.path, err)
		return l.err
	}
	return nil
}

func (l *logSync) sync() error {
	if l.f != nil && unlinked(l.f) {
		l.f.Close()
		l.f = nil
	}
	if l.f == nil {
		f, err := os.Open(l.path + "-wal")
		if errors.Is(err, os.ErrNotExist) {
			// No log: SQLite is not in WAL mode (it refused it for this file
			// system), and a commit under NORMAL in rollback mode syncs the
			// database itself; sync it anyway, which costs nothing more.
			f, err = os.Open(l.path)
			if err != nil {
				return err
			}
			defer f.Close()
			return fdatasync(f)
		}
		if err != nil {
			return err
		}
		l.f = f
	}
	return fdatasync(l.f)
}

// close closes the log's descriptor.
func (l *logSync) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
