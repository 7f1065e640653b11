package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/interludehq/interlude"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one embedded schema change, named NNNN_what.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order; their versions must run
// 1, 2, 3, ... without gaps.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, name := range names { // fs.Glob sorts
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("sqlite store: migration %s is not named NNNN_what.sql", base)
		}
		if v != len(out)+1 {
			return nil, fmt.Errorf("sqlite store: migration %s has version %d, want %d", base, v, len(out)+1)
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	if len(out) != SchemaVersion {
		return nil, fmt.Errorf("sqlite store: %d migrations are embedded but SchemaVersion is %d", len(out), SchemaVersion)
	}
	return out, nil
}

// SchemaVersion is the newest schema version this build knows: the number of
// the last embedded migration.
const SchemaVersion = 1

// migrate brings the schema of db up to date in one write transaction, so two
// processes opening the same new file both come up; applying is idempotent.
func migrate(ctx context.Context, db *sql.DB, file string) (err error) {
	ms, err := migrations()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: one migrator at a time
	if err != nil {
		return fmt.Errorf("sqlite store: open %s (does its directory exist, and may this process write there?): %w", file, err)
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
	if latest := ms[len(ms)-1].version; current > latest {
		return &interlude.Error{Code: interlude.CodeUnknownFormat, Message: fmt.Sprintf(
			"sqlite store: %s has schema version %d, but this build of Interlude knows versions up to %d; open it with the newer Interlude that wrote it",
			file, current, latest)}
	}
	for _, m := range ms[current:] {
		if _, err = tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("sqlite store: migrate %s to schema version %d (%s): %w", file, m.version, m.name, err)
		}
		if _, err = tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, time.Now().UnixNano()); err != nil {
			return fmt.Errorf("sqlite store: migrate %s to schema version %d: %w", file, m.version, err)
		}
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("sqlite store: migrate %s: %w", file, err)
	}
	return nil
}
