package server

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Caller is who sends a request, as the server's authentication found it: the
// token's name ("" without tokens configured) and its roles.
type Caller struct {
	// Name is the token's name, recorded as the By of the answers it gives.
	Name string
	// Roles are what the token may do besides reading.
	Roles []Role
}

// Has reports whether the caller holds role r; an admin holds every role.
func (c Caller) Has(r Role) bool {
	return slices.Contains(c.Roles, RoleAdmin) || slices.Contains(c.Roles, r)
}

type callerKey struct{}

// CallerFrom returns the caller of a request served by a handler mounted with
// Mount.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// deadlineBody lifts the request's read deadline once its body is read, so that
// a call that runs long (one waiting for its client's user) is not cut off.
type deadlineBody struct {
	io.ReadCloser
	done func()
	once sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.done)
	}
	return n, err
}

// Mount serves h at pattern (a net/http pattern such as "/mcp") behind the
// server's authentication: without a valid bearer token the request is refused
// as on any route, and without tokens configured only loopback requests get
// through. Any valid token reaches h, which checks the roles an action needs
// with CallerFrom. Requests are logged and counted like the API's. Mount must
// be called before the server serves. Request bodies have the server's size
// limit and read timeout; h, as a protocol endpoint with long-lived streams and
// calls, gets no write timeout.
func (s *Server) Mount(pattern string, h http.Handler) {
	fn := func(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
		http.NewResponseController(w).SetWriteDeadline(time.Time{})
		c := Caller{Name: rc.who.name, Roles: rc.who.roles.roles()}
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &deadlineBody{ReadCloser: http.MaxBytesReader(w, r.Body, s.bodyLimit), done: func() { s.bodyRead(w) }}
		}
		h.ServeHTTP(w, r)
	}
	eps := map[string]endpoint{}
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		eps[m] = endpoint{fn: fn}
	}
	s.mux.Handle(pattern, s.wrap(pattern, false, eps))
}
