package server

import (
	"net/http/httptest"
	"testing"
)

func TestARequestsSpanNameIsItsMethodAndRouteWhateverItsPatternsForm(t *testing.T) {
	for _, c := range []struct{ method, pattern, want string }{
		{"POST", "POST /v1/graph/invoke", "POST /v1/graph/invoke"},
		{"GET", "/v1/graphs", "GET /v1/graphs"},
		{"HEAD", "GET /v1/graphs", "HEAD /v1/graphs"},
		{"POST", "POST example.com/v1/threads/{id}", "POST /v1/threads/{id}"},
		{"GE", "GET /v1/graphs", "HTTP /v1/graphs"},
		{"BREW", "", "HTTP"},
		{"GET", "", "GET"},
	} {
		r := httptest.NewRequest(c.method, "/", nil)
		r.Pattern = c.pattern
		if got := spanName(r); got != c.want {
			t.Errorf("%s with pattern %q: span named %q, want %q", c.method, c.pattern, got, c.want)
		}
	}
}
