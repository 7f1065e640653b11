package langgraph_test

import (
	"strings"
	"testing"

	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
)

func TestTokensAreAcceptedFromXAPIKeyWithTheirRoles(t *testing.T) {
	s := newLGServer(t, server.WithTokens([]auth.Token{
		{Name: "runner", Secret: "run-secret", Roles: []auth.Role{auth.RoleRun}},
		{Name: "approver", Secret: "approve-secret", Roles: []auth.Role{auth.RoleApprove}},
	}))
	if r := s.call("POST", "/threads", map[string]any{}); r.status != 401 {
		t.Fatalf("a request without a token answered %d", r.status)
	}
	if r := s.call("POST", "/threads", map[string]any{}, "X-Api-Key", "wrong"); r.status != 401 {
		t.Fatalf("a wrong x-api-key answered %d", r.status)
	}
	if r := s.call("GET", "/ok", nil); r.status != 200 {
		t.Fatalf("/ok without a token answered %d", r.status)
	}
	r := s.call("POST", "/threads/t-1/runs/wait", map[string]any{"input": map[string]any{"amount": 2}, "assistant_id": "refund", "if_not_exists": "create"},
		"X-Api-Key", "run-secret")
	if r.status != 200 {
		t.Fatalf("a run with the run role's x-api-key answered %d %s", r.status, r.body)
	}
	resume := map[string]any{"command": map[string]any{"resume": map[string]any{"approved": true}}, "assistant_id": "refund"}
	if r := s.call("POST", "/threads/t-1/runs/wait", resume, "X-Api-Key", "run-secret"); r.status != 403 {
		t.Fatalf("a resume with the run role answered %d %s, want 403", r.status, r.body)
	}
	if r := s.call("DELETE", "/threads/t-1", nil, "X-Api-Key", "approve-secret"); r.status != 403 {
		t.Fatalf("a delete with the approve role answered %d, want 403", r.status)
	}
	if r := s.call("POST", "/threads/t-1/runs/wait", resume, "Authorization", "Bearer approve-secret"); r.status != 200 {
		t.Fatalf("a resume with the approve role answered %d %s", r.status, r.body)
	}
}

func TestBrowsersReachTheAPIOnlyFromListedOrigins(t *testing.T) {
	s := newLGServer(t, server.WithCORSOrigins("http://localhost:3000"))
	r := s.call("OPTIONS", "/threads/search", nil, "Origin", "http://localhost:3000", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "content-type,x-api-key,x-auth-scheme")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
		r.header.Get("Access-Control-Allow-Headers") != "content-type, x-api-key, x-auth-scheme" {
		t.Fatalf("the preflight from a listed origin answered %d %v", r.status, r.header)
	}
	r = s.call("POST", "/threads", map[string]any{}, "Origin", "http://localhost:3000", "Sec-Fetch-Site", "cross-site")
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
		t.Fatalf("a cross-site request from a listed origin answered %d %v", r.status, r.header)
	}
	for _, h := range []string{"Content-Location", "Location", "X-Pagination-Total"} {
		if !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), h) {
			t.Fatalf("the exposed headers %q lack %s", r.header.Get("Access-Control-Expose-Headers"), h)
		}
	}
	r = s.call("POST", "/threads", map[string]any{}, "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site")
	if r.status != 403 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a cross-site request from another origin answered %d %v, want 403 without CORS headers", r.status, r.header)
	}
	plain := newLGServer(t)
	r = plain.call("OPTIONS", "/threads/search", nil, "Origin", "http://localhost:3000", "Access-Control-Request-Method", "POST")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a server without origins answered a preflight with %v", r.header)
	}
}

// TestAuthRefusalsTakeLangGraphsErrorShape checks that a missing token and
// a cross-site request are refused on the LangGraph routes as their other
// errors are, {"detail", "code"}, while /v1 keeps its own shape.
func TestAuthRefusalsTakeLangGraphsErrorShape(t *testing.T) {
	withTokens := newLGServer(t, server.WithTokens([]auth.Token{{Name: "runner", Secret: "run-secret", Roles: []auth.Role{auth.RoleRun}}}))
	open := newLGServer(t)
	for _, c := range []struct {
		name   string
		s      *lgServer
		path   string
		header []string
		status int
		code   string
	}{
		{"a wrong token", withTokens, "/threads/search", []string{"Authorization", "Bearer wrong"}, 401, "unauthenticated"},
		{"a cross-site request", open, "/threads", []string{"Sec-Fetch-Site", "cross-site"}, 403, "forbidden"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.s.call("POST", c.path, map[string]any{}, c.header...)
			var e map[string]any
			r.json(t, &e)
			if r.status != c.status || e["code"] != c.code || e["detail"] == "" || e["detail"] == nil || e["error"] != nil {
				t.Fatalf("POST %s answered %d %s, want %d {\"detail\", \"code\": %q}", c.path, r.status, r.body, c.status, c.code)
			}
			r = c.s.call("POST", "/v1/graph/invoke", map[string]any{}, c.header...)
			r.json(t, &e)
			if r.status != c.status || e["error"] == nil {
				t.Fatalf("/v1 answered %d %s, want its own error shape", r.status, r.body)
			}
		})
	}
}
