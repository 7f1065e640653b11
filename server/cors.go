package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/interludehq/interlude/internal/options"
)

// setCORS records the origins browsers may call the API from, which the
// cross-origin protection of a server without tokens then trusts too.
func (s *Server) setCORS(origins []string) error {
	if len(origins) == 0 {
		return nil
	}
	s.cors = map[string]bool{}
	for _, o := range origins {
		u, _ := url.Parse(o) // an origin: WithCORSOrigins checked
		o = u.Scheme + "://" + u.Host
		s.cors[o] = true
		if err := s.csrf.AddTrustedOrigin(o); err != nil {
			return fmt.Errorf("server: CORS origin %q: %w", o, err)
		}
	}
	return nil
}

// isOrigin reports whether o is scheme://host[:port] with scheme http or https.
func isOrigin(o string) bool {
	u, ok := options.HTTPURL(o)
	return ok && (u.Path == "" || u.Path == "/")
}

// corsHeaders adds CORS headers for a request from a listed origin, and answers
// its preflight (it then reports true: the request is answered).
func (s *Server) corsHeaders(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || !s.cors[origin] {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Content-Location, Location, X-Pagination-Total, X-Pagination-Next")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE")
	allow := "Authorization, Content-Type, X-Api-Key, X-Auth-Scheme, Last-Event-ID, Prefer, Accept, Cache-Control"
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		allow = strings.Join(strings.Fields(strings.ReplaceAll(req, ",", " ")), ", ")
	}
	h.Set("Access-Control-Allow-Headers", allow)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
