package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/interludehq/interlude"
)

// Role is what a token may do besides reading, which every valid token may.
type Role string

// The roles of DESIGN §7.
const (
	// RoleRun starts threads and continues them (input, messages, or a plain
	// continue past a breakpoint).
	RoleRun Role = "run"
	// RoleApprove answers interrupts: resume, reject and cancel, and invoke or
	// stream carrying resume or responses.
	RoleApprove Role = "approve"
	// RoleAdmin may do everything, including deleting threads.
	RoleAdmin Role = "admin"
)

// Token is an API bearer token.
type Token struct {
	// Name identifies the token's holder. It is logged with each request and
	// recorded as the By of every answer given with the token.
	Name string `json:"name"`
	// Secret is the bearer token itself.
	Secret string `json:"token"`
	// Roles are what the token may do besides reading.
	Roles []Role `json:"roles"`
	// Groups are the groups the holder belongs to, which questions may name
	// among their assignees (interlude.Request.Assignees).
	Groups []string `json:"groups,omitempty"`
}

type roleSet uint8

const (
	canRun roleSet = 1 << iota
	canApprove
	canAdmin
)

func (rs roleSet) allows(need roleSet) bool { return need == 0 || rs&canAdmin != 0 || rs&need == need }

func roleBit(r Role) (roleSet, bool) {
	switch r {
	case RoleRun:
		return canRun, true
	case RoleApprove:
		return canApprove, true
	case RoleAdmin:
		return canAdmin, true
	}
	return 0, false
}

func roleName(need roleSet) Role {
	switch need {
	case canRun:
		return RoleRun
	case canApprove:
		return RoleApprove
	}
	return RoleAdmin
}

// principal is who makes a request.
type principal struct {
	name   string
	roles  roleSet
	groups []string
}

// answerer is who p answers as, for the check of a question's assignees.
func (p principal) answerer() interlude.Answerer {
	return interlude.Answerer{Name: p.name, Groups: p.groups, Admin: p.roles&canAdmin != 0}
}

// token is a configured token with its secret hashed, so that comparisons take the
// same time whatever the secrets' lengths.
type token struct {
	name   string
	sum    [sha256.Size]byte
	roles  roleSet
	groups []string
}

// checkTokens validates tokens and prepares them for comparison.
func checkTokens(ts []Token) ([]token, error) {
	out := make([]token, 0, len(ts))
	names := map[string]bool{}
	secrets := map[string]bool{}
	for i, t := range ts {
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("token %d has no name", i+1)
		case strings.ContainsAny(t.Name, ":\n\r"):
			return nil, fmt.Errorf("token name %q contains ':' or a line break", t.Name)
		case names[t.Name]:
			return nil, fmt.Errorf("token name %q is used twice", t.Name)
		case t.Secret == "":
			return nil, fmt.Errorf("token %q has an empty secret", t.Name)
		case strings.ContainsAny(t.Secret, " \t\n\r"):
			return nil, fmt.Errorf("token %q has whitespace in its secret", t.Name)
		case secrets[t.Secret]:
			return nil, fmt.Errorf("token %q has the same secret as another token", t.Name)
		}
		names[t.Name], secrets[t.Secret] = true, true
		tk := token{name: t.Name, sum: sha256.Sum256([]byte(t.Secret)), groups: t.Groups}
		for _, g := range t.Groups {
			if g == "" || strings.ContainsAny(g, ",:@ \t\n\r") {
				return nil, fmt.Errorf("token %q has group %q; a group is a non-empty name without ',', ':', '@' or spaces", t.Name, g)
			}
		}
		for _, r := range t.Roles {
			b, ok := roleBit(r)
			if !ok {
				return nil, fmt.Errorf("token %q has unknown role %q; roles are run, approve and admin", t.Name, r)
			}
			tk.roles |= b
		}
		out = append(out, tk)
	}
	return out, nil
}

// LoadTokens reads tokens from a file. The file is either JSON,
//
//	[{"name": "alice", "token": "s3cret", "roles": ["approve"]}]
//
// or lines of name:token:roles, roles separated by commas (possibly none, for a
// read-only token), blank lines and lines starting with # ignored. Among the
// roles, @name puts the holder in group name (JSON: "groups"), which questions
// may name among their assignees:
//
//	# name:token:roles
//	ci:4f9c...:run
//	alice:9b1e...:approve,run,@finance
//
// A token may itself contain ':' (the name ends at the first, the roles start after
// the last). Names and secrets must be unique and roles known.
//
// The file must be readable by its owner only: one that group or other users
// may read or write (mode & 0o077 != 0) is refused, saying to chmod 600 it.
// Windows has no such mode bits, so there it is not checked.
func LoadTokens(path string) ([]Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("server: read tokens: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("server: tokens file %s can be read by other users (mode %04o); make it readable by its owner only: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("server: read tokens: %w", err)
	}
	ts, err := parseTokens(data)
	if err != nil {
		return nil, fmt.Errorf("server: tokens file %s: %w", path, err)
	}
	if _, err := checkTokens(ts); err != nil {
		return nil, fmt.Errorf("server: tokens file %s: %w", path, err)
	}
	return ts, nil
}

func parseTokens(data []byte) ([]Token, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		var ts []Token
		if err := dec.Decode(&ts); err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return ts, nil
	}
	var ts []Token
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		first, last := strings.IndexByte(line, ':'), strings.LastIndexByte(line, ':')
		if first < 0 || first == last {
			return nil, fmt.Errorf("line %d: want name:token:roles", n)
		}
		t := Token{Name: strings.TrimSpace(line[:first]), Secret: strings.TrimSpace(line[first+1 : last])}
		for r := range strings.SplitSeq(line[last+1:], ",") {
			r = strings.TrimSpace(r)
			switch {
			case strings.HasPrefix(r, "@"):
				if g := r[1:]; !slices.Contains(t.Groups, g) {
					t.Groups = append(t.Groups, g)
				}
			case r != "" && !slices.Contains(t.Roles, Role(r)):
				t.Roles = append(t.Roles, Role(r))
			}
		}
		ts = append(ts, t)
	}
	return ts, sc.Err()
}

var errNoToken = &apiError{status: http.StatusUnauthorized, code: codeUnauthenticated,
	message: "this server requires a bearer token: send Authorization: Bearer <token> (or x-api-key: <token>)"}

var errBadToken = &apiError{status: http.StatusUnauthorized, code: codeUnauthenticated,
	message: "the bearer token is not valid"}

// authenticate returns who sends r. Without configured tokens everyone may do
// everything, anonymously. The secret is compared with every token, in constant
// time, without stopping at a match.
func (s *Server) authenticate(r *http.Request) (principal, error) {
	if len(s.tokens) == 0 {
		return principal{roles: canAdmin}, nil
	}
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	secret := ""
	switch {
	case len(h) >= len(prefix) && strings.EqualFold(h[:len(prefix)], prefix):
		secret = strings.TrimSpace(h[len(prefix):])
	case h == "" && r.Header.Get("X-Api-Key") != "":
		secret = strings.TrimSpace(r.Header.Get("X-Api-Key")) // as LangGraph's clients send it
	default:
		return principal{}, errNoToken
	}
	sum := sha256.Sum256([]byte(secret))
	match := -1
	for i := range s.tokens {
		eq := subtle.ConstantTimeCompare(sum[:], s.tokens[i].sum[:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return principal{}, errBadToken
	}
	t := &s.tokens[match]
	return principal{name: t.name, roles: t.roles, groups: t.groups}, nil
}

// authorize refuses p unless it holds need.
func authorize(p principal, need roleSet, doing string) error {
	if p.roles.allows(need) {
		return nil
	}
	return &apiError{status: http.StatusForbidden, code: codeForbidden,
		message: fmt.Sprintf("token %q may not %s: that needs the %s role", p.name, doing, roleName(need))}
}

// roles lists the roles of a role set, in the order run, approve, admin.
func (rs roleSet) roles() []Role {
	out := []Role{}
	for _, b := range []roleSet{canRun, canApprove, canAdmin} {
		if rs&b != 0 {
			out = append(out, roleName(b))
		}
	}
	return out
}

// meAnswer answers GET /v1/me.
type meAnswer struct {
	Name   string   `json:"name"`
	Roles  []Role   `json:"roles"`
	Groups []string `json:"groups"`
}

// handleMe serves GET /v1/me: the caller's token name and roles. Without tokens
// configured everyone is the anonymous admin: {"name": "", "roles": ["admin"]}.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	if _, err := query(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, meAnswer{Name: rc.who.name, Roles: rc.who.roles.roles(), Groups: append([]string{}, rc.who.groups...)})
}
