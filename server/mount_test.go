package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
)

// whoami answers with the caller the server names, and how much body it read.
func whoami(w http.ResponseWriter, r *http.Request) {
	c, ok := auth.FromContext(r.Context())
	if !ok {
		http.Error(w, "no caller", http.StatusInternalServerError)
		return
	}
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	roles := []string{}
	for _, r := range c.Roles {
		roles = append(roles, string(r))
	}
	io.WriteString(w, c.Name+":"+strings.Join(roles, ",")+":"+strings.Repeat("x", int(min(n, 3))))
}

func TestAMountedHandlerIsBehindTheServersTokens(t *testing.T) {
	e := newEnv(t, setup{tokens: []auth.Token{runner, approver, admin, reader}, opts: []server.Option{server.WithBodyLimit(64)}})
	e.srv.Mount("/extra", http.HandlerFunc(whoami))
	cases := []struct {
		token  string
		body   string
		status int
		answer string
	}{
		{"", "", http.StatusUnauthorized, ""},
		{"wrong", "", http.StatusUnauthorized, ""},
		{reader.Secret, "", http.StatusOK, "viewer::"},
		{runner.Secret, "abcd", http.StatusOK, "ci:run:xxx"},
		{approver.Secret, "", http.StatusOK, "alice:approve:"},
		{admin.Secret, "", http.StatusOK, "root:admin:"},
		{admin.Secret, strings.Repeat("y", 65), http.StatusRequestEntityTooLarge, ""},
	}
	for _, c := range cases {
		a := e.do(http.MethodPost, "/extra", c.body, c.token)
		if a.status != c.status || (c.answer != "" && string(a.body) != c.answer) {
			t.Errorf("token %q: %d %s, want %d %s", c.token, a.status, a.body, c.status, c.answer)
		}
	}
}
