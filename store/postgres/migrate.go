package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/interludehq/interlude"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// SchemaVersion is the newest schema version this build knows: the number of
// the last embedded migration.
const SchemaVersion = 2

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
			return nil, fmt.Errorf("postgres store: migration %s is not named NNNN_what.sql", base)
		}
		if v != len(out)+1 {
			return nil, fmt.Errorf("postgres store: migration %s has version %d, want %d", base, v, len(out)+1)
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	if len(out) != SchemaVersion {
		return nil, fmt.Errorf("postgres store: %d migrations are embedded but SchemaVersion is %d", len(out), SchemaVersion)
	}
	return out, nil
}

// lockKey is the advisory lock that serialises migrations of one schema.
func lockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("interlude/store/postgres migrate " + schema))
	return int64(h.Sum64())
}

// migrate brings schema up to date. It runs in one transaction holding an
// advisory lock, so processes starting together take turns and all come up; the
// ones after the first find nothing to do.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	ident := pgx.Identifier{schema}.Sanitize()
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey(schema)); err != nil {
			return fmt.Errorf("take the migration lock: %w", err)
		}
		// CREATE SCHEMA IF NOT EXISTS would need the CREATE privilege even when
		// the schema exists; look first.
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA `+ident); err != nil {
				return fmt.Errorf("create schema %s: %w", ident, err)
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+ident+`.schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return err
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+ident+`.schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("read the schema version: %w", err)
		}
		if latest := ms[len(ms)-1].version; current > latest {
			return &interlude.Error{Code: interlude.CodeUnknownFormat, Message: fmt.Sprintf(
				"postgres store: schema %s has version %d, but this build of Interlude knows versions up to %d; run the newer Interlude that wrote it",
				ident, current, latest)}
		}
		if current == len(ms) {
			return nil
		}
		if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+ident); err != nil {
			return err
		}
		for _, m := range ms[current:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migrate to schema version %d (%s): %w", m.version, m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+ident+`.schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		var ie *interlude.Error
		if errors.As(err, &ie) {
			return err
		}
		return fmt.Errorf("postgres store: prepare schema %s: %w", ident, err)
	}
	return nil
}
