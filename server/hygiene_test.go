package server_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestEveryAnswerTellsBrowsersNotToSniffItsType(t *testing.T) {
	e := tokenEnv(t)
	e.start("refund", "r", `{"amount":1}`)
	cases := []struct {
		name, method, path, body, token string
		header                          []string
	}{
		{"health", http.MethodGet, "/healthz", "", "", nil},
		{"graphs", http.MethodGet, "/v1/graphs", "", reader.Secret, nil},
		{"a thread", http.MethodGet, "/v1/threads/r", "", reader.Secret, nil},
		{"an error", http.MethodGet, "/v1/threads/nope", "", reader.Secret, nil},
		{"unauthenticated", http.MethodGet, "/v1/threads", "", "", nil},
		{"a run", http.MethodPost, "/v1/graph/invoke", `{"graph":"refund","input":{"amount":2}}`, runner.Secret, nil},
		{"NDJSON", http.MethodPost, "/v1/graph/stream", `{"graph":"refund","input":{"amount":3}}`, runner.Secret, nil},
		{"SSE", http.MethodPost, "/v1/graph/stream", `{"graph":"refund","input":{"amount":4}}`, runner.Secret, []string{"Accept", "text/event-stream"}},
		{"unknown route", http.MethodGet, "/v1/nothing", "", reader.Secret, nil},
	}
	for _, c := range cases {
		a := e.do(c.method, c.path, c.body, c.token, c.header...)
		if got := a.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s (%d %s): X-Content-Type-Options %q, want nosniff", c.name, a.status, strings.TrimSpace(a.header.Get("Content-Type")), got)
		}
	}
}
