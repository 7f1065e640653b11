package workloads

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/memory"
	"github.com/interludehq/interlude/store/sqlite"
)

// Store kinds a workload runs on.
const (
	// Memory is store/memory: threads in process memory.
	Memory = "memory"
	// SQLite is store/sqlite on a fresh file in a temporary directory, with
	// synchronous=FULL: every append (one per step) is fsynced before the next step.
	SQLite = "sqlite"
)

// Stores lists the store kinds, in the order the comparison runs them.
var Stores = []string{Memory, SQLite}

// SQLiteSynchronous is the synchronous mode the benchmark opens SQLite stores with.
// It matches LangGraph's SqliteSaver run with --synchronous full.
const SQLiteSynchronous = "FULL"

// Store is a fresh, empty store for one workload run, with what the growth
// workload needs to measure it. Close it when done: for SQLite that also removes
// the temporary directory holding the file.
type Store struct {
	store.Store
	// Kind is Memory or SQLite.
	Kind string
	// Path is the SQLite file, "" for Memory.
	Path string

	sq  *sqlite.Store
	dir string // removed by Close when the store created it
}

// OpenStore opens a fresh store of the given kind. An SQLite store is a new file
// in a new temporary directory under dir (os.TempDir() when dir is "").
func OpenStore(kind, dir string) (*Store, error) {
	switch kind {
	case Memory:
		return &Store{Store: memory.New(), Kind: Memory}, nil
	case SQLite:
		tmp, err := os.MkdirTemp(dir, "interlude-bench-")
		if err != nil {
			return nil, err
		}
		path := filepath.Join(tmp, "interlude.sqlite")
		sq, err := sqlite.Open(path, sqlite.WithSynchronous(SQLiteSynchronous))
		if err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		return &Store{Store: sq, Kind: SQLite, Path: path, sq: sq, dir: tmp}, nil
	}
	return nil, fmt.Errorf("unknown store %q (want %s or %s)", kind, Memory, SQLite)
}

// Unwrap returns the store the workload runs on, so that the runtime finds its
// capabilities (store.As) as it does when given that store itself.
func (s *Store) Unwrap() store.Store { return s.Store }

// Close closes the store and removes its temporary directory.
func (s *Store) Close() error {
	err := s.Store.Close()
	if s.dir != "" {
		err = errors.Join(err, os.RemoveAll(s.dir))
	}
	return err
}

// Files is the size of an SQLite database's files.
type Files struct {
	// DB, WAL and SHM are the sizes of the database file, its -wal and its -shm.
	DB, WAL, SHM int64
}

// Total is the sum of the three files: what LangGraph's peer reports as
// bytes_on_disk.
func (f Files) Total() int64 { return f.DB + f.WAL + f.SHM }

// Disk is what an SQLite store occupies, before and after a checkpoint.
type Disk struct {
	// Raw is the files as the run left them.
	Raw Files
	// After is the files after PRAGMA wal_checkpoint(TRUNCATE) (Store.Checkpoint).
	After Files
	// Size is sqlite.Store.Size after the checkpoint (database file plus -wal).
	Size int64
}

// Disk checkpoints an SQLite store (TRUNCATE) and reports its files before and
// after. It fails for a memory store.
func (s *Store) Disk() (Disk, error) {
	if s.sq == nil {
		return Disk{}, fmt.Errorf("a %s store has no files", s.Kind)
	}
	var d Disk
	d.Raw = files(s.Path)
	if err := s.sq.Checkpoint(); err != nil {
		return d, err
	}
	d.After = files(s.Path)
	var err error
	d.Size, err = s.sq.Size()
	return d, err
}

func files(path string) Files {
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	return Files{DB: size(path), WAL: size(path + "-wal"), SHM: size(path + "-shm")}
}

// Payload is the logical bytes a store holds for one thread: the data of its
// records and of its snapshot, as the store returns them.
type Payload struct {
	// Records is the summed length of the thread's record data.
	Records int64
	// Snapshot is the length of its snapshot data (0 if none).
	Snapshot int64
	// NRecords is the number of records.
	NRecords int
}

// Total is Records plus Snapshot.
func (p Payload) Total() int64 { return p.Records + p.Snapshot }

// ThreadPayload reads the thread's records and snapshot from st and sums their
// lengths.
func ThreadPayload(ctx context.Context, st store.Store, threadID string) (Payload, error) {
	var p Payload
	recs, err := st.Records(ctx, threadID, 0, 0, 0)
	if err != nil {
		return p, err
	}
	for _, r := range recs {
		p.Records += int64(len(r.Data))
	}
	p.NRecords = len(recs)
	l, err := st.Load(ctx, threadID)
	if err != nil {
		return p, err
	}
	if l.Snapshot != nil {
		p.Snapshot = int64(len(l.Snapshot.Data))
	}
	return p, nil
}
