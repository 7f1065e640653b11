package migrations

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadReadsNumberedFilesInOrderAndRefusesGaps(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	good := fstest.MapFS{"migrations/0001_a.sql": file("one"), "migrations/0002_b.sql": file("two")}
	ms, err := Load(good, "test", 2)
	if err != nil || len(ms) != 2 || ms[0].SQL != "one" || ms[1].Version != 2 || ms[1].Name != "0002_b.sql" {
		t.Fatalf("Load = %+v, %v", ms, err)
	}
	for _, c := range []struct {
		name string
		fsys fstest.MapFS
		want int
		err  string
	}{
		{"gap", fstest.MapFS{"migrations/0001_a.sql": file(""), "migrations/0003_c.sql": file("")}, 2, "has version 3, want 2"},
		{"bad name", fstest.MapFS{"migrations/first.sql": file("")}, 1, "not named NNNN_what.sql"},
		{"version behind the files", good, 1, "2 migrations are embedded but SchemaVersion is 1"},
	} {
		if _, err := Load(c.fsys, "test", c.want); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err = %v, want it to say %q", c.name, err, c.err)
		}
	}
}
