// Package auth says who calls Interlude's HTTP surfaces and what they may do:
// API tokens with their roles and groups, read from a tokens file, checked
// against a request's bearer token or x-api-key, and the Caller a request
// carries to the handlers (server, server/langgraph, server/mcpserver).
package auth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
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

// The roles, in the order they are listed.
const (
	// RoleRun starts threads and continues them (input, or a continue past a
	// breakpoint).
	RoleRun Role = "run"
	// RoleApprove answers interrupts: resume, reject and cancel.
	RoleApprove Role = "approve"
	// RoleAdmin may do everything, including deleting threads.
	RoleAdmin Role = "admin"
)

var roles = []Role{RoleRun, RoleApprove, RoleAdmin}

// Token is an API bearer token.
type Token struct {
	// Name identifies the holder: it is logged with each request and recorded
	// as the By of every answer given with the token.
	Name string `json:"name"`
	// Secret is the bearer token itself.
	Secret string `json:"token"`
	// Roles are what the token may do besides reading.
	Roles []Role `json:"roles"`
	// Groups are the holder's groups, which questions may name among their
	// assignees (interlude.Request.Assignees).
	Groups []string `json:"groups,omitempty"`
}

// Caller is who sends a request, as its token says.
type Caller struct {
	// Name is the token's name ("" without tokens configured).
	Name string
	// Roles are what the token may do besides reading, in the order run,
	// approve, admin.
	Roles []Role
	// Groups are the token's groups.
	Groups []string
}

// Anonymous is every caller of a server without tokens: an admin without a name.
var Anonymous = Caller{Roles: []Role{RoleAdmin}}

// Has reports whether the caller holds role r; an admin holds every role.
func (c Caller) Has(r Role) bool {
	return slices.Contains(c.Roles, RoleAdmin) || slices.Contains(c.Roles, r)
}

// Need refuses the caller, with an error of code interlude.CodeForbidden,
// unless it holds role r; doing says what r allows, for the message.
func (c Caller) Need(r Role, doing string) error {
	if r == "" || c.Has(r) {
		return nil
	}
	return &interlude.Error{Code: interlude.CodeForbidden, Message: fmt.Sprintf("token %q may not %s: that needs the %s role", c.Name, doing, r)}
}

// Answerer is who the caller answers as, for the check of a question's
// assignees (interlude.WithAnswerer).
func (c Caller) Answerer() interlude.Answerer {
	return interlude.Answerer{Name: c.Name, Groups: c.Groups, Admin: c.Has(RoleAdmin)}
}

type callerKey struct{}

// NewContext returns ctx carrying the caller of a request.
func NewContext(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// FromContext returns the caller that NewContext put in ctx.
func FromContext(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// The errors of Authenticate, which a server answers with 401.
var (
	ErrNoToken  = errors.New("this server requires a bearer token: send Authorization: Bearer <token> (or x-api-key: <token>)")
	ErrBadToken = errors.New("the bearer token is not valid")
)

// Keys are the tokens a server accepts. The zero Keys accept every request as
// Anonymous.
type Keys struct{ keys []key }

// key is a token with its secret hashed, so that comparisons take the same
// time whatever the secrets' lengths.
type key struct {
	sum    [sha256.Size]byte
	caller Caller
}

// NewKeys checks tokens (names and secrets unique, roles known) and prepares
// them for Authenticate.
func NewKeys(ts []Token) (*Keys, error) {
	k := &Keys{keys: make([]key, 0, len(ts))}
	names, secrets := map[string]bool{}, map[string]bool{}
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
		for _, g := range t.Groups {
			if g == "" || strings.ContainsAny(g, ",:@ \t\n\r") {
				return nil, fmt.Errorf("token %q has group %q; a group is a non-empty name without ',', ':', '@' or spaces", t.Name, g)
			}
		}
		for _, r := range t.Roles {
			if !slices.Contains(roles, r) {
				return nil, fmt.Errorf("token %q has unknown role %q; roles are run, approve and admin", t.Name, r)
			}
		}
		c := Caller{Name: t.Name, Roles: []Role{}, Groups: append([]string{}, t.Groups...)}
		for _, r := range roles {
			if slices.Contains(t.Roles, r) {
				c.Roles = append(c.Roles, r)
			}
		}
		k.keys = append(k.keys, key{sum: sha256.Sum256([]byte(t.Secret)), caller: c})
	}
	return k, nil
}

// Open reports whether there are no tokens, so that anyone may call.
func (k *Keys) Open() bool { return k == nil || len(k.keys) == 0 }

// Named returns the caller of the token called name, if there is one.
func (k *Keys) Named(name string) (Caller, bool) {
	if k == nil {
		return Caller{}, false
	}
	for _, key := range k.keys {
		if key.caller.Name == name {
			return key.caller, true
		}
	}
	return Caller{}, false
}

// Approver returns the caller a person's name stands for when they answer
// from outside the API (a Slack click): the token of that name, which must
// hold the approve role, or, without tokens, the name alone. Anything else is
// an error of code interlude.CodeForbidden.
func (k *Keys) Approver(name string) (Caller, error) {
	if k.Open() {
		return Caller{Name: name, Roles: []Role{RoleApprove}}, nil
	}
	c, ok := k.Named(name)
	if !ok {
		return Caller{}, &interlude.Error{Code: interlude.CodeForbidden,
			Message: fmt.Sprintf("no API token is named %s, the name your Slack user maps to; ask an admin to fix the Slack users of the notification config", name)}
	}
	if !c.Has(RoleApprove) {
		return Caller{}, &interlude.Error{Code: interlude.CodeForbidden,
			Message: fmt.Sprintf("%s may read questions but not answer them; that needs the approve role", name)}
	}
	return c, nil
}

// Authenticate returns who sends r, from its Authorization: Bearer or
// x-api-key header (as LangGraph's clients send it), or ErrNoToken or
// ErrBadToken. The secret is compared with every token in constant time.
func (k *Keys) Authenticate(r *http.Request) (Caller, error) {
	if k.Open() {
		return Anonymous, nil
	}
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	var secret string
	switch {
	case len(h) >= len(prefix) && strings.EqualFold(h[:len(prefix)], prefix):
		secret = strings.TrimSpace(h[len(prefix):])
	case h == "" && r.Header.Get("X-Api-Key") != "":
		secret = strings.TrimSpace(r.Header.Get("X-Api-Key"))
	default:
		return Caller{}, ErrNoToken
	}
	sum := sha256.Sum256([]byte(secret))
	match := -1
	for i := range k.keys {
		match = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(sum[:], k.keys[i].sum[:]), i, match)
	}
	if match < 0 {
		return Caller{}, ErrBadToken
	}
	return k.keys[match].caller, nil
}

// LoadTokens reads tokens from a file, either JSON,
//
//	[{"name": "alice", "token": "s3cret", "roles": ["approve"], "groups": ["finance"]}]
//
// or lines of name:token:roles, roles separated by commas (none for a
// read-only token) and @name putting the holder in group name; blank lines and
// lines starting with # are ignored:
//
//	ci:4f9c...:run
//	alice:9b1e...:approve,run,@finance
//
// A token may contain ':' (the name ends at the first, the roles start after
// the last). A file that other users may read or write is refused (except on
// Windows, which has no such mode bits).
func LoadTokens(path string) ([]Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("tokens file %s can be read by other users (mode %04o); make it readable by its owner only: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	ts, err := parseTokens(data)
	if err == nil {
		_, err = NewKeys(ts)
	}
	if err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	return ts, nil
}

func parseTokens(data []byte) ([]Token, error) {
	var ts []Token
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ts); err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return ts, nil
	}
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
