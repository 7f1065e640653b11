package server

import (
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/interludehq/interlude/server/auth"
)

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

// Mount serves h at pattern (such as "/mcp") behind the server's tokens, body
// limit and read timeout, logged and counted like the API; h learns the caller
// with auth.FromContext and gets no write timeout. Call it before serving.
func (s *Server) Mount(pattern string, h http.Handler) {
	fn := func(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
		http.NewResponseController(w).SetWriteDeadline(time.Time{})
		r = r.WithContext(auth.NewContext(r.Context(), rc.who))
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &deadlineBody{ReadCloser: http.MaxBytesReader(w, r.Body, s.bodyLimit), done: func() { s.bodyRead(w) }}
		}
		h.ServeHTTP(w, r)
		return nil
	}
	eps := map[string]endpoint{}
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		eps[m] = endpoint{fn: fn}
	}
	s.mux.Handle(pattern, s.wrap(pattern, false, eps, s.writeError))
}
