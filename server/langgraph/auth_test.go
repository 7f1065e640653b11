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
