package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/migrations"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// SchemaVersion is the newest schema version this build knows: the number of
// the last embedded migration.
const SchemaVersion = 9

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
	ms, err := migrations.Load(migrationFiles, "postgres", SchemaVersion)
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
		if latest := ms[len(ms)-1].Version; current > latest {
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
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migrate to schema version %d (%s): %w", m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+ident+`.schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
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
