package auth_test

import (
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/server/auth"
)

func TestLoadTokensReadsLinesAndJSON(t *testing.T) {
	dir := t.TempDir()
	lines := filepath.Join(dir, "tokens")
	os.WriteFile(lines, []byte("# name:token:roles\n\nci:tok:en:with:colons:run\nalice: s3cret :approve, run,@finance,@ops\nviewer:read-only:\n"), 0o600)
	ts, err := auth.LoadTokens(lines)
	if err != nil {
		t.Fatal(err)
	}
	want := []auth.Token{
		{Name: "ci", Secret: "tok:en:with:colons", Roles: []auth.Role{"run"}},
		{Name: "alice", Secret: "s3cret", Roles: []auth.Role{"approve", "run"}, Groups: []string{"finance", "ops"}},
		{Name: "viewer", Secret: "read-only"},
	}
	if !reflect.DeepEqual(ts, want) {
		t.Fatalf("tokens %+v, want %+v", ts, want)
	}

	js := filepath.Join(dir, "tokens.json")
	os.WriteFile(js, []byte(`[{"name":"root","token":"abc","roles":["admin"]}]`), 0o600)
	ts, err = auth.LoadTokens(js)
	if err != nil {
		t.Fatal(err)
	}
	if want := []auth.Token{{Name: "root", Secret: "abc", Roles: []auth.Role{"admin"}}}; !reflect.DeepEqual(ts, want) {
		t.Fatalf("tokens %+v, want %+v", ts, want)
	}

	for name, content := range map[string]string{
		"unknown role":   "a:b:owner\n",
		"no roles field": "a-b\n",
		"duplicate name": "a:x:run\na:y:run\n",
		"same secret":    "a:x:run\nb:x:run\n",
		"empty secret":   "a::run\n",
		"bad group":      "a:x:@fin ops\n",
		"json unknown":   `[{"name":"a","token":"b","role":["run"]}]`,
	} {
		p := filepath.Join(dir, "bad")
		os.WriteFile(p, []byte(content), 0o600)
		if _, err := auth.LoadTokens(p); err == nil {
			t.Errorf("%s: LoadTokens accepted %q", name, content)
		}
	}
}

func TestATokensFileOtherUsersCanReadIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows files have no group and other mode bits")
	}
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte("ci:secret:run\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660, 0o644, 0o602} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		_, err := auth.LoadTokens(p)
		if err == nil || !strings.Contains(err.Error(), "chmod 600 "+p) {
			t.Errorf("mode %04o: err = %v, want a refusal saying chmod 600 %s", mode, err, p)
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o400} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := auth.LoadTokens(p); err != nil {
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
}

func TestARequestIsTheCallerOfItsBearerTokenOrAPIKey(t *testing.T) {
	keys, err := auth.NewKeys([]auth.Token{
		{Name: "alice", Secret: "s3cret", Roles: []auth.Role{auth.RoleAdmin, auth.RoleRun}, Groups: []string{"finance"}},
		{Name: "viewer", Secret: "read-only"},
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		header, value string
		name          string
		err           error
	}{
		{"Authorization", "Bearer s3cret", "alice", nil},
		{"Authorization", "bearer  read-only ", "viewer", nil},
		{"X-Api-Key", "s3cret", "alice", nil},
		{"Authorization", "Basic s3cret", "", auth.ErrNoToken},
		{"", "", "", auth.ErrNoToken},
		{"Authorization", "Bearer s3cre", "", auth.ErrBadToken},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		if c.header != "" {
			r.Header.Set(c.header, c.value)
		}
		got, err := keys.Authenticate(r)
		if got.Name != c.name || !errors.Is(err, c.err) {
			t.Errorf("%s %q: %q %v, want %q %v", c.header, c.value, got.Name, err, c.name, c.err)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer s3cret")
	alice, _ := keys.Authenticate(r)
	if !reflect.DeepEqual(alice.Roles, []auth.Role{auth.RoleRun, auth.RoleAdmin}) || !alice.Answerer().Admin || alice.Answerer().Groups[0] != "finance" {
		t.Fatalf("alice is %+v", alice)
	}
	if c, err := (&auth.Keys{}).Authenticate(r); err != nil || !reflect.DeepEqual(c, auth.Anonymous) {
		t.Fatalf("without tokens: %+v %v", c, err)
	}
}

func TestAnAdminHoldsEveryRoleAndOthersAreRefusedNamingTheRole(t *testing.T) {
	admin := auth.Caller{Name: "root", Roles: []auth.Role{auth.RoleAdmin}}
	runner := auth.Caller{Name: "ci", Roles: []auth.Role{auth.RoleRun}}
	if !admin.Has(auth.RoleApprove) || !admin.Has(auth.RoleRun) || runner.Has(auth.RoleApprove) || !runner.Has(auth.RoleRun) {
		t.Fatal("roles")
	}
	err := runner.Need(auth.RoleApprove, "answer interrupts")
	if !errors.Is(err, interlude.ErrForbidden) || !strings.Contains(err.Error(), `token "ci" may not answer interrupts: that needs the approve role`) {
		t.Fatalf("refusal: %v", err)
	}
	if runner.Need("", "read") != nil || admin.Need(auth.RoleAdmin, "delete") != nil {
		t.Fatal("a caller was refused what it may do")
	}
}
