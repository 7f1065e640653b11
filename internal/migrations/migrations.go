// Package migrations reads the embedded, numbered schema changes of the SQL
// stores.
package migrations

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Migration is one schema change, from a file named NNNN_what.sql.
type Migration struct {
	Version int
	Name    string // the file's name
	SQL     string
}

// Load returns the migrations in fsys's migrations folder in order. Their
// versions must run 1, 2, 3, ... without gaps up to want, the newest version
// the store knows; store names the store in errors.
func Load(fsys fs.FS, store string, want int) ([]Migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, name := range names { // fs.Glob sorts
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s store: migration %s is not named NNNN_what.sql", store, base)
		}
		if v != len(out)+1 {
			return nil, fmt.Errorf("%s store: migration %s has version %d, want %d", store, base, v, len(out)+1)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: base, SQL: string(b)})
	}
	if len(out) != want {
		return nil, fmt.Errorf("%s store: %d migrations are embedded but SchemaVersion is %d", store, len(out), want)
	}
	return out, nil
}
