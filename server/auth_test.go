package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
)

func tokenEnv(t *testing.T) *env {
	return newEnv(t, setup{tokens: []auth.Token{runner, approver, admin, reader}})
}

func TestRequestsWithoutAValidTokenAre401(t *testing.T) {
	e := tokenEnv(t)
	e.start("refund", "r", `{"amount":1}`)
	e.unchanged("r", func() {
		expect(t, e.post("/v1/threads/r/resume", `{"response":{"approved":true}}`), http.StatusUnauthorized, "unauthenticated")
		expect(t, e.post("/v1/threads/r/resume", `{"response":{"approved":true}}`, "nope"), http.StatusUnauthorized, "unauthenticated")
		expect(t, e.do(http.MethodDelete, "/v1/threads/r", "", ""), http.StatusUnauthorized, "unauthenticated")
	})
	for _, tok := range []string{"", "wrong", runner.Secret + "x", runner.Secret[:5]} {
		a := e.do(http.MethodGet, "/v1/threads", "", tok)
		expect(t, a, http.StatusUnauthorized, "unauthenticated")
		if a.header.Get("WWW-Authenticate") == "" {
			t.Fatal("no WWW-Authenticate")
		}
	}
	expect(t, e.do(http.MethodGet, "/v1/threads", "", "", "Authorization", "Basic "+runner.Secret), http.StatusUnauthorized, "unauthenticated")
	expect(t, e.do(http.MethodGet, "/v1/threads", "", "", "Authorization", "bearer "+reader.Secret), 200, "")
	expect(t, e.do(http.MethodGet, "/healthz", "", ""), 200, "")
	_, err := e.client().Threads(context.Background(), client.ListOptions{})
	if !errors.Is(err, client.ErrUnauthenticated) {
		t.Fatalf("err %v", err)
	}
}

func TestRolesGateRunningAnsweringAndDeleting(t *testing.T) {
	e := tokenEnv(t)
	ctx := context.Background()
	res, err := e.client(runner).Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "r", Input: map[string]any{"amount": 150}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Interrupts[0].ID
	e.unchanged("r", func() {
		_, err := e.client(runner).Resume(ctx, "r", id, map[string]any{"approved": true})
		if !errors.Is(err, client.ErrForbidden) {
			t.Fatalf("run token answering: %v", err)
		}
		_, err = e.client(runner).Invoke(ctx, client.InvokeRequest{ThreadID: "r", Resume: map[string]any{"approved": true}})
		if !errors.Is(err, client.ErrForbidden) {
			t.Fatalf("run token answering through invoke: %v", err)
		}
		_, err = e.client(approver).Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "r2", Input: map[string]any{"amount": 1}})
		if !errors.Is(err, client.ErrForbidden) {
			t.Fatalf("approve token starting a thread: %v", err)
		}
		if err := e.client(approver).Delete(ctx, "r"); !errors.Is(err, client.ErrForbidden) {
			t.Fatalf("approve token deleting: %v", err)
		}
		_, err = e.client(reader).Cancel(ctx, "r", id)
		if !errors.Is(err, client.ErrForbidden) {
			t.Fatalf("read-only token cancelling: %v", err)
		}
		if _, err := e.client(reader).Fork(ctx, "r", res.Checkpoint); !errors.Is(err, client.ErrForbidden) {
			t.Fatalf("read-only token forking: %v", err)
		}
		if _, err := e.client(approver).Fork(ctx, "r", res.Checkpoint); !errors.Is(err, client.ErrForbidden) {
			t.Fatalf("approve token forking: %v", err)
		}
		if _, err := e.client(reader).Thread(ctx, "r"); err != nil {
			t.Fatalf("read-only token reading: %v", err)
		}
	})
	a := e.post("/v1/threads/r/resume", `{"response":{"approved":true}}`, runner.Secret)
	expect(t, a, http.StatusForbidden, "forbidden")
	if !strings.Contains(a.json(t)["error"].(map[string]any)["message"].(string), `"ci"`) {
		t.Fatalf("403 does not name the token: %s", a.body)
	}

	res, err = e.client(approver).Resume(ctx, "r", id, map[string]any{"approved": true})
	if err != nil || res.Status != "completed" {
		t.Fatalf("approve token answering: %v %+v", err, res)
	}
	h, err := e.client(reader).History(ctx, "r", client.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, cp := range h.Checkpoints {
		for _, r := range cp.Resolved {
			by = append(by, r.By)
		}
	}
	if !slices.Equal(by, []string{"alice"}) {
		t.Fatalf("resolutions by %v, want [alice]", by)
	}
	if err := e.client(admin).Delete(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client(admin).Thread(ctx, "r"); !errors.Is(err, interlude.ErrNotFound) {
		t.Fatalf("reading a deleted thread: %v", err)
	}
}

func TestAdminMayDoEverythingAndRunMayContinue(t *testing.T) {
	e := tokenEnv(t)
	ctx := context.Background()
	if _, err := e.client(runner).Invoke(ctx, client.InvokeRequest{Graph: "gated", ThreadID: "g", Input: map[string]any{"topic": "t"}}); err != nil {
		t.Fatal(err)
	}
	if res, err := e.client(runner).Invoke(ctx, client.InvokeRequest{ThreadID: "g"}); err != nil || res.Breakpoint == nil || res.Breakpoint.Node != "publish" {
		t.Fatalf("run token continuing: %v %+v", err, res)
	}
	res, err := e.client(admin).Invoke(ctx, client.InvokeRequest{Graph: "refund", ThreadID: "r", Input: map[string]any{"amount": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client(admin).Reject(ctx, "r", res.Interrupts[0].ID, nil); err != nil {
		t.Fatalf("admin rejecting: %v", err)
	}
}

func TestNewRefusesAnUnknownRole(t *testing.T) {
	if _, err := server.New(server.WithTokens([]auth.Token{{Name: "a", Secret: "x", Roles: []auth.Role{"root"}}})); err == nil {
		t.Error("New accepted an unknown role")
	}
}

func TestWithoutTokensOnlyLocalNonCrossOriginRequestsAreServed(t *testing.T) {
	e := newEnv(t, setup{})
	e.start("refund", "r", `{"amount":1}`)
	e.unchanged("r", func() {
		for _, h := range [][]string{
			{"Host", "evil.example:8080"},
			{"Host", "10.0.0.1"},
			{"Sec-Fetch-Site", "cross-site"},
			{"Origin", "http://evil.example"},
		} {
			a := e.do(http.MethodPost, "/v1/threads/r/resume", `{"response":{"approved":true}}`, "", h...)
			expect(t, a, http.StatusForbidden, "forbidden")
		}
		expect(t, e.do(http.MethodGet, "/v1/threads/r", "", "", "Host", "rebound.example"), http.StatusForbidden, "forbidden")
	})
	expect(t, e.do(http.MethodGet, "/v1/threads/r", "", "", "Host", "localhost:1234"), 200, "")
	expect(t, e.do(http.MethodGet, "/v1/threads/r", "", "", "Host", "[::1]:1234"), 200, "")
	// With tokens, the token is the protection: any host and origin may call.
	te := tokenEnv(t)
	expect(t, te.do(http.MethodGet, "/v1/threads", "", admin.Secret, "Host", "api.example.com", "Sec-Fetch-Site", "cross-site"), 200, "")
}

func TestRequestsAreLoggedWithMethodPathStatusDurationAndToken(t *testing.T) {
	var buf syncBuffer
	debug := &slog.HandlerOptions{Level: slog.LevelDebug}
	e := newEnv(t, setup{tokens: []auth.Token{approver}, opts: []server.Option{server.WithLogger(slog.New(slog.NewJSONHandler(&buf, debug)))}})
	expect(t, e.do(http.MethodGet, "/v1/threads?limit=2", "", approver.Secret), 200, "")
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(buf.String())), &rec); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if rec["msg"] != "request" || rec["method"] != "GET" || rec["path"] != "/v1/threads" || rec["status"] != float64(200) || rec["token"] != "alice" {
		t.Fatalf("log %v", rec)
	}
	if _, ok := rec["duration"]; !ok {
		t.Fatalf("log %v", rec)
	}
}

func TestRequestsThatSucceedAreLoggedAtDebugAndRefusalsAtWarn(t *testing.T) {
	var buf syncBuffer
	e := newEnv(t, setup{tokens: []auth.Token{approver}, opts: []server.Option{server.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil)))}})
	expect(t, e.do(http.MethodGet, "/v1/threads", "", approver.Secret), 200, "")
	if strings.TrimSpace(buf.String()) != "" {
		t.Fatalf("a successful request was logged at the default level: %s", buf.String())
	}
	expect(t, e.do(http.MethodGet, "/v1/threads", "", ""), 401, "unauthenticated")
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(buf.String())), &rec); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if rec["level"] != "WARN" || rec["status"] != float64(401) {
		t.Fatalf("a refused request was logged as %v; want level WARN", rec)
	}
	if _, ok := rec["token"]; ok {
		t.Fatalf("a request without a token logs an empty token: %v", rec)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
