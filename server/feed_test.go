package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/server/auth"
)

// feedEvent is one event of GET /v1/events.
type feedEvent struct {
	name     string
	threadID string
	data     json.RawMessage
}

// openFeed subscribes to GET /v1/events; the first line (a comment) is read, so
// the subscription is in place when it returns.
func openFeed(t *testing.T, e *env, token string) (*bufio.Reader, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/v1/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		cancel()
		t.Fatalf("GET /v1/events: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || line != ": subscribed to every thread\n" {
		cancel()
		t.Fatalf("first line %q, %v", line, err)
	}
	return r, func() {
		cancel()
		resp.Body.Close()
	}
}

// nextEvent reads the next event of a feed, skipping comments.
func nextEvent(t *testing.T, r *bufio.Reader) (feedEvent, bool) {
	t.Helper()
	var ev feedEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return ev, false
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && ev.name != "":
			return ev, true
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d struct {
				ThreadID string          `json:"thread_id"`
				Data     json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("data %q: %v", line, err)
			}
			ev.threadID, ev.data = d.ThreadID, d.Data
		}
	}
}

func TestTheFeedOfEveryThreadStreamsEachThreadsEventsWithItsID(t *testing.T) {
	e := newEnv(t, setup{tokens: []auth.Token{runner, reader}})
	expect(t, e.do(http.MethodGet, "/v1/events", "", ""), http.StatusUnauthorized, "unauthenticated")
	expect(t, e.do(http.MethodGet, "/v1/events?after=1", "", reader.Secret), http.StatusBadRequest, "invalid_request")

	feed, stop := openFeed(t, e, reader.Secret) // any valid token may listen
	defer stop()
	e.post("/v1/graph/invoke", `{"graph":"refund","config":{"thread_id":"a"},"input":{"amount":5}}`, runner.Secret)
	e.post("/v1/graph/invoke", `{"graph":"parallel","config":{"thread_id":"b"},"input":{}}`, runner.Secret)

	seen := map[string][]string{}
	pauses := map[string]int{}
	for ends := 0; ends < 2; {
		ev, ok := nextEvent(t, feed)
		if !ok {
			t.Fatalf("the feed ended early: %v", seen)
		}
		seen[ev.threadID] = append(seen[ev.threadID], ev.name)
		switch ev.name {
		case "end":
			ends++
			var end struct {
				ThreadID string `json:"thread_id"`
				Status   string `json:"status"`
			}
			json.Unmarshal(ev.data, &end)
			if end.ThreadID != ev.threadID || end.Status != "interrupted" {
				t.Errorf("end of %s: %s", ev.threadID, ev.data)
			}
		case "updates":
			var p struct {
				Status    string `json:"status"`
				Interrupt *struct {
					ID string `json:"id"`
				} `json:"interrupt"`
			}
			json.Unmarshal(ev.data, &p)
			if p.Status == "interrupted" && p.Interrupt != nil && p.Interrupt.ID != "" {
				pauses[ev.threadID]++
			}
		}
	}
	if got := strings.Join(seen["a"], ","); got != "metadata,updates,end" {
		t.Errorf("thread a's events: %s", got)
	}
	if seen["b"][0] != "metadata" || seen["b"][len(seen["b"])-1] != "end" {
		t.Errorf("thread b's events: %v", seen["b"])
	}
	if pauses["a"] != 1 || pauses["b"] != 2 {
		t.Errorf("pauses %v, want a:1 b:2", pauses)
	}

	// Drain ends the feed, and refuses new listeners.
	e.srv.Drain()
	for {
		if _, ok := nextEvent(t, feed); !ok {
			break
		}
	}
	expect(t, e.do(http.MethodGet, "/v1/events", "", reader.Secret), http.StatusServiceUnavailable, "unavailable")
}

func TestTheFeedOfEveryThreadNeedsAHub(t *testing.T) {
	g, _ := graphs.Refund()
	srv, err := server.New(server.WithGraph(g.Erase()), server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/v1/events", nil))
	if rec.Code != http.StatusNotImplemented {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
}

func TestMeTellsTheTokensNameAndRoles(t *testing.T) {
	both := auth.Token{Name: "bob", Secret: "bob-runs-and-approves", Roles: []auth.Role{auth.RoleApprove, auth.RoleRun}}
	e := newEnv(t, setup{tokens: []auth.Token{approver, admin, reader, both, financier}})
	for _, c := range []struct {
		tok  auth.Token
		want string
	}{
		{approver, `{"name":"alice","roles":["approve"],"groups":[]}`},
		{admin, `{"name":"root","roles":["admin"],"groups":[]}`},
		{reader, `{"name":"viewer","roles":[],"groups":[]}`},
		{both, `{"name":"bob","roles":["run","approve"],"groups":[]}`},
		{financier, `{"name":"fiona","roles":["approve"],"groups":["finance"]}`},
	} {
		a := e.do(http.MethodGet, "/v1/me", "", c.tok.Secret)
		expect(t, a, http.StatusOK, "")
		sameJSON(t, c.tok.Name, a.body, c.want)
	}
	expect(t, e.do(http.MethodGet, "/v1/me", "", ""), http.StatusUnauthorized, "unauthenticated")
	expect(t, e.do(http.MethodGet, "/v1/me", "", "not-a-token"), http.StatusUnauthorized, "unauthenticated")
	expect(t, e.do(http.MethodPost, "/v1/me", "", approver.Secret), http.StatusMethodNotAllowed, "method_not_allowed")

	open := newEnv(t, setup{})
	a := open.do(http.MethodGet, "/v1/me", "", "")
	expect(t, a, http.StatusOK, "")
	sameJSON(t, "anonymous", a.body, `{"name":"","roles":["admin"],"groups":[]}`)
}

func TestTheWebInboxIsServedByDefaultAndWithInboxNilTurnsItOff(t *testing.T) {
	e := newEnv(t, setup{tokens: []auth.Token{admin}})
	a := e.do(http.MethodGet, "/inbox/", "", "") // no token: the page signs in itself
	if a.status != 200 || !strings.Contains(string(a.body), `<script type="module" src="app.js">`) ||
		!strings.HasPrefix(a.header.Get("Content-Type"), "text/html") || a.header.Get("Content-Security-Policy") == "" {
		t.Fatalf("%d %v\n%s", a.status, a.header, a.body)
	}
	js := e.do(http.MethodGet, "/inbox/app.js", "", "")
	if js.status != 200 || !strings.HasPrefix(js.header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("app.js: %d %s", js.status, js.header.Get("Content-Type"))
	}
	off := newEnv(t, setup{opts: []server.Option{server.WithInbox(nil)}})
	a = off.do(http.MethodGet, "/inbox/", "", "")
	if a.status != 200 || !strings.Contains(string(a.body), "turned off") {
		t.Fatalf("%d %s", a.status, a.body)
	}
}
