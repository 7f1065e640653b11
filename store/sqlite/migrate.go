package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/migrations"
	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// SchemaVersion is the newest schema version this build knows: the number of
// the last embedded migration.
const SchemaVersion = 8

// migrate brings the schema of db up to date in one write transaction, so two
// processes opening the same new file both come up; applying is idempotent.
// Waiting for another process's migration lasts up to busyTimeout.
func migrate(ctx context.Context, db *sql.DB, file string, busyTimeout time.Duration) (err error) {
	ms, err := migrations.Load(migrationFiles, "sqlite", SchemaVersion)
	if err != nil {
		return err
	}
	tx, err := beginWhenFree(ctx, db, busyTimeout)
	if err != nil {
		return openError(file, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if _, err = tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("sqlite store: open %s: %w", file, err)
	}
	var current int
	if err = tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("sqlite store: read the schema version of %s: %w", file, err)
	}
	if latest := ms[len(ms)-1].Version; current > latest {
		return &interlude.Error{Code: interlude.CodeUnknownFormat, Message: fmt.Sprintf(
			"sqlite store: %s has schema version %d, but this build of Interlude knows versions up to %d; open it with the newer Interlude that wrote it",
			file, current, latest)}
	}
	for _, m := range ms[current:] {
		if _, err = tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("sqlite store: migrate %s to schema version %d (%s): %w", file, m.Version, m.Name, err)
		}
		if _, err = tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, time.Now().UnixNano()); err != nil {
			return fmt.Errorf("sqlite store: migrate %s to schema version %d: %w", file, m.Version, err)
		}
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("sqlite store: migrate %s: %w", file, err)
	}
	return nil
}

// openError words a failure to open file for what it is: a file that is not a
// SQLite database (ErrUnknownFormat), one the process cannot open or create
// there, or another fault.
func openError(file string, err error) error {
	var se *msqlite.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("sqlite store: open %s: %w", file, err)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_NOTADB:
		return &interlude.Error{Code: interlude.CodeUnknownFormat, Err: err, Message: fmt.Sprintf(
			"sqlite store: %s is not an Interlude SQLite database (it is a file of another kind); choose another path", file)}
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_READONLY:
		return fmt.Errorf("sqlite store: open %s (does its directory exist, and may this process write there?): %w", file, err)
	}
	return fmt.Errorf("sqlite store: open %s: %w", file, err)
}

// beginWhenFree begins the migration's write transaction (BEGIN IMMEDIATE:
// one migrator at a time). Processes opening a new file together race to turn
// on its write-ahead log, and SQLite answers the losers SQLITE_BUSY at once,
// without waiting as the busy timeout would: those try again, with growing
// pauses, for up to wait.
func beginWhenFree(ctx context.Context, db *sql.DB, wait time.Duration) (*sql.Tx, error) {
	pause := time.Millisecond
	deadline := time.Now().Add(wait)
	for {
		tx, err := db.BeginTx(ctx, nil)
		var se *msqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY {
			return tx, err
		}
		if time.Now().Add(pause).After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}
