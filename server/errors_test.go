package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/server"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/storekit"
)

// pathOf returns the details.path of an invalid_request answer.
func pathOf(t *testing.T, a answer) string {
	t.Helper()
	d, _ := a.json(t)["error"].(map[string]any)["details"].(map[string]any)
	p, _ := d["path"].(string)
	return p
}

func TestMalformedRequestsAre400WithTheFieldsPathAndChangeNothing(t *testing.T) {
	e := newEnv(t, setup{})
	e.start("refund", "r", `{"amount":5}`)
	cases := []struct {
		name, path, body, wantPath string
	}{
		{"unknown top-level field", "/v1/graph/invoke", `{"resume":true,"config":{"thread_id":"r"},"resumee":1}`, "resumee"},
		{"unknown config field", "/v1/graph/invoke", `{"resume":true,"config":{"thread_id":"r","threadid":"x"}}`, "config.threadid"},
		{"field names are case-sensitive", "/v1/graph/invoke", `{"Resume":true,"config":{"thread_id":"r"}}`, "Resume"},
		{"unknown response field", "/v1/graph/invoke", `{"responses":[{"interrupt_id":"int_1","status":"resolved","response":1,"eror":{}}],"config":{"thread_id":"r"}}`, "responses[0].eror"},
		{"unknown rejection field", "/v1/graph/invoke", `{"responses":[{"interrupt_id":"int_1","status":"rejected","error":{"name":"x","reason":"y"}}],"config":{"thread_id":"r"}}`, "responses[0].error.reason"},
		{"thread id of the wrong type", "/v1/graph/invoke", `{"resume":true,"config":{"thread_id":42}}`, "config.thread_id"},
		{"bad thread id", "/v1/graph/invoke", `{"resume":true,"config":{"thread_id":"a b"}}`, "config.thread_id"},
		{"thread id a URL path cannot carry", "/v1/graph/invoke", `{"graph":"refund","input":{"amount":1},"config":{"thread_id":".."}}`, "config.thread_id"},
		{"thread id of a dot", "/v1/graph/invoke", `{"graph":"refund","input":{"amount":1},"config":{"thread_id":"."}}`, "config.thread_id"},
		{"bad interrupt id", "/v1/graph/invoke", `{"responses":[{"interrupt_id":"x/y","status":"cancelled"}],"config":{"thread_id":"r"}}`, "responses[0].interrupt_id"},
		{"unknown status", "/v1/graph/invoke", `{"responses":[{"interrupt_id":"int_1","status":"approved"}],"config":{"thread_id":"r"}}`, "responses[0].status"},
		{"resolved without response", "/v1/graph/invoke", `{"responses":[{"interrupt_id":"int_1","status":"resolved"}],"config":{"thread_id":"r"}}`, "responses[0].response"},
		{"same interrupt twice", "/v1/graph/invoke", `{"responses":[{"interrupt_id":"int_1","status":"cancelled"},{"interrupt_id":"int_1","status":"cancelled"}],"config":{"thread_id":"r"}}`, "responses[1].interrupt_id"},
		{"empty responses", "/v1/graph/invoke", `{"responses":[],"config":{"thread_id":"r"}}`, "responses"},
		{"responses not an array", "/v1/graph/invoke", `{"responses":{},"config":{"thread_id":"r"}}`, "responses"},
		{"input and resume", "/v1/graph/invoke", `{"input":{"amount":1},"resume":true,"config":{"thread_id":"r"}}`, "resume"},
		{"input not an object", "/v1/graph/invoke", `{"input":[1],"config":{"thread_id":"r"}}`, "input"},
		{"a new thread without a required input field", "/v1/graph/invoke", `{"graph":"refund","input":{},"config":{"thread_id":"new"}}`, "input.amount"},
		{"a new thread, its graph named by nothing but the input", "/v1/graph/invoke", `{"graph":"gated","input":{"draft":"x"}}`, "input.topic"},
		{"unknown input field", "/v1/graph/invoke", `{"graph":"refund","input":{"amount":1,"amout":2},"config":{"thread_id":"new"}}`, "input.amout"},
		{"input field of the wrong type", "/v1/graph/invoke", `{"graph":"refund","input":{"amount":"lots"},"config":{"thread_id":"new"}}`, "input.amount"},
		{"messages to a graph without messages", "/v1/graph/invoke", `{"graph":"refund","messages":[],"config":{"thread_id":"new"}}`, "messages"},
		{"bad granularity", "/v1/graph/invoke", `{"resume":true,"config":{"thread_id":"r"},"response_granularity":"most"}`, "response_granularity"},
		{"graph other than the thread's", "/v1/graph/invoke", `{"graph":"two-step","resume":true,"config":{"thread_id":"r"}}`, "graph"},
		{"graph not hosted", "/v1/graph/invoke", `{"graph":"nope","input":{},"config":{"thread_id":"r"}}`, "graph"},
		{"graph needed for a new thread", "/v1/graph/invoke", `{"input":{}}`, "graph"},
		{"answer without thread", "/v1/graph/invoke", `{"resume":true}`, "config.thread_id"},
		{"not JSON", "/v1/graph/invoke", `{"resume":`, ""},
		{"not an object", "/v1/graph/invoke", `[1]`, ""},
		{"data after the object", "/v1/graph/invoke", `{"resume":true,"config":{"thread_id":"r"}} {}`, ""},
		{"resume route: unknown field", "/v1/threads/r/resume", `{"response":{"approved":true},"note":1}`, "note"},
		{"resume route: no response", "/v1/threads/r/resume", `{}`, "response"},
		{"resume route: id and responses", "/v1/threads/r/resume", `{"interrupt_id":"int_1","responses":[{"interrupt_id":"int_1","status":"cancelled"}]}`, "responses"},
		{"reject route: error not an object", "/v1/threads/r/reject", `{"error":"no"}`, "error"},
		{"reject route: name not a string", "/v1/threads/r/reject", `{"error":{"name":1}}`, "error.name"},
		{"cancel route: response given", "/v1/threads/r/cancel", `{"response":1}`, "response"},
		{"bad thread id in the path", "/v1/threads/bad%20id/cancel", `{}`, "id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func(old *testing.T) { e.t = old }(e.t)
			e.t = t
			e.unchanged("r", func() {
				a := e.post(c.path, c.body)
				expect(t, a, http.StatusBadRequest, "invalid_request")
				if got := pathOf(t, a); got != c.wantPath {
					t.Fatalf("details.path = %q, want %q: %s", got, c.wantPath, a.body)
				}
			})
		})
	}
	if a := e.do(http.MethodGet, "/v1/threads/new", "", ""); a.status != http.StatusNotFound {
		t.Fatalf("a refused input created thread new: %d %s", a.status, a.body)
	}
}

func TestUnknownThreadsAre404(t *testing.T) {
	e := newEnv(t, setup{})
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/threads/ghost", ""},
		{http.MethodGet, "/v1/threads/ghost/history", ""},
		{http.MethodPost, "/v1/threads/ghost/resume", `{"response":1}`},
		{http.MethodPost, "/v1/threads/ghost/reject", `{}`},
		{http.MethodPost, "/v1/threads/ghost/cancel", `{}`},
		{http.MethodDelete, "/v1/threads/ghost", ""},
		{http.MethodPost, "/v1/graph/invoke", `{"resume":1,"config":{"thread_id":"ghost"}}`},
		{http.MethodPost, "/v1/graph/invoke", `{"config":{"thread_id":"ghost"}}`},
		{http.MethodGet, "/v1/nothing", ""},
	} {
		expect(t, e.do(c.method, c.path, c.body, ""), http.StatusNotFound, "not_found")
	}
	expect(t, e.do(http.MethodGet, "/v1/threads/ghost", "", ""), http.StatusNotFound, "not_found")
	if a := e.do(http.MethodGet, "/v1/threads/ghost", "", ""); a.status != 404 {
		t.Fatal("a refused request created the thread")
	}
}

func TestWrongMethodIs405WithAllow(t *testing.T) {
	e := newEnv(t, setup{})
	a := e.do(http.MethodGet, "/v1/graph/invoke", "", "")
	expect(t, a, http.StatusMethodNotAllowed, "method_not_allowed")
	if a.header.Get("Allow") != "POST" {
		t.Fatalf("Allow %q", a.header.Get("Allow"))
	}
}

func TestHEADAnswersAReadWithoutItsBodyButNotALiveStream(t *testing.T) {
	e := newEnv(t, setup{})
	e.start("refund", "r", `{"amount":5}`)
	for _, path := range []string{"/healthz", "/v1/threads", "/v1/threads/r", "/v1/threads/r/history", "/v1/graphs"} {
		a := e.do(http.MethodHead, path, "", "")
		if a.status != http.StatusOK || len(a.body) != 0 {
			t.Errorf("HEAD %s: %d with %d body bytes, want 200 and none", path, a.status, len(a.body))
		}
	}
	for _, path := range []string{"/v1/threads/r/events", "/v1/events"} {
		a := e.do(http.MethodHead, path, "", "")
		if a.status != http.StatusMethodNotAllowed || a.header.Get("Allow") != "GET" {
			t.Errorf("HEAD %s: %d, Allow %q; want 405 and GET", path, a.status, a.header.Get("Allow"))
		}
	}
}

func TestRefusedAnswersAre409Or422AndChangeNothing(t *testing.T) {
	e := newEnv(t, setup{})
	res := e.start("refund", "r", `{"amount":150}`)
	id := res["interrupts"].([]any)[0].(map[string]any)["id"].(string)
	e.start("refund", "done", `{"amount":1}`)
	expect(t, e.post("/v1/threads/done/resume", `{"response":{"approved":true}}`), 200, "")

	e.unchanged("r", func() {
		a := e.post("/v1/graph/invoke", `{"input":{"amount":1},"config":{"thread_id":"r"}}`)
		expect(t, a, http.StatusConflict, "thread_interrupted")
		sameJSON(t, "details", a.json(t)["error"].(map[string]any)["details"], map[string]any{"interrupts": []string{id}})
	})
	e.unchanged("r", func() {
		expect(t, e.post("/v1/threads/r/resume", `{"interrupt_id":"int_000000000000000000000000","response":{"approved":true}}`), http.StatusConflict, "unknown_interrupt")
	})
	e.unchanged("r", func() {
		a := e.post("/v1/threads/r/resume", `{"interrupt_id":"`+id+`","response":{"approved":"yes"}}`)
		expect(t, a, http.StatusUnprocessableEntity, "invalid_response")
		sameJSON(t, "violations", a.json(t)["error"].(map[string]any)["details"], `{"violations":[{"path":"/approved","message":"got string, want boolean"}],"total":1,"interrupts":["`+id+`"]}`)
	})
	e.unchanged("r", func() {
		a := e.post("/v1/graph/invoke", `{"resume":{},"config":{"thread_id":"r"}}`)
		expect(t, a, http.StatusUnprocessableEntity, "invalid_response")
	})
	e.unchanged("done", func() {
		expect(t, e.post("/v1/threads/done/cancel", `{}`), http.StatusConflict, "not_interrupted")
		expect(t, e.post("/v1/graph/invoke", `{"resume":null,"config":{"thread_id":"done"}}`), http.StatusConflict, "not_interrupted")
	})
	e.unchanged("done", func() {
		// A different answer to an interrupt already resolved.
		h := e.do(http.MethodGet, "/v1/threads/done/history", "", "").json(t)
		var answered string
		for _, c := range h["checkpoints"].([]any) {
			for _, r := range c.(map[string]any)["resolved"].([]any) {
				answered = r.(map[string]any)["interrupt_id"].(string)
			}
		}
		expect(t, e.post("/v1/threads/done/resume", `{"interrupt_id":"`+answered+`","response":{"approved":false}}`), http.StatusConflict, "unknown_interrupt")
	})
}

func TestStoreConflictsAndBusyThreadsAre409AndFailuresAre500(t *testing.T) {
	var f *faulty
	e := newEnv(t, setup{wrap: func(s store.Store) store.Store { f = newFaulty(s); return f }})
	res := e.start("refund", "r", `{"amount":150}`)
	_ = res
	e.unchanged("r", func() {
		f.appendErr <- storekit.Conflict("r", 2, 3)
		expect(t, e.post("/v1/threads/r/resume", `{"response":{"approved":true}}`), http.StatusConflict, "conflict")
	})
	e.unchanged("r", func() {
		f.readErr <- &interlude.Error{Code: interlude.CodeThreadBusy, Message: `thread "r" is being run by db-7.internal:4242`}
		a := e.post("/v1/threads/r/resume", `{"response":{"approved":true}}`)
		expect(t, a, http.StatusConflict, "thread_busy")
		if got := a.header.Get("Retry-After"); got != "1" {
			t.Fatalf("thread_busy with Retry-After %q, want 1", got)
		}
		// Who holds the thread is for the server's log, not the client.
		if strings.Contains(string(a.body), "db-7") || strings.Contains(string(a.body), "4242") || !strings.Contains(string(a.body), "try again") {
			t.Fatalf("thread_busy answered %s; want it to say try again without naming the holder", a.body)
		}
	})
	e.unchanged("r", func() {
		f.readErr <- errors.New("disk on fire")
		a := e.post("/v1/threads/r/resume", `{"response":{"approved":true}}`)
		expect(t, a, http.StatusInternalServerError, "internal")
		if strings.Contains(string(a.body), "disk on fire") {
			t.Fatalf("an internal error leaked its text: %s", a.body)
		}
	})
	expect(t, e.post("/v1/threads/r/resume", `{"response":{"approved":true}}`), 200, "")
}

func TestBodiesOverTheLimitAre413(t *testing.T) {
	e := newEnv(t, setup{opts: []server.Option{server.WithBodyLimit(256)}})
	e.start("refund", "r", `{"amount":1}`)
	e.unchanged("r", func() {
		big := `{"response":{"approved":true,"note":"` + strings.Repeat("x", 300) + `"}}`
		expect(t, e.post("/v1/threads/r/resume", big), http.StatusRequestEntityTooLarge, "too_large")
		expect(t, e.post("/v1/graph/invoke", `{"config":{"thread_id":"r"},"resume":"`+strings.Repeat("x", 300)+`"}`), http.StatusRequestEntityTooLarge, "too_large")
	})
}

func TestFailedRunsAnswer200WithStatusFailedAndContinueRetries(t *testing.T) {
	e := newEnv(t, setup{})
	a := e.post("/v1/graph/invoke", `{"graph":"flaky","input":{"fail":true},"config":{"thread_id":"f"},"response_granularity":"full"}`)
	expect(t, a, 200, "")
	m := a.json(t)
	if m["status"] != "failed" || !strings.Contains(m["error"].(string), "boom") {
		t.Fatalf("%s", a.body)
	}
	if m["state"].(map[string]any)["execution_meta"].(map[string]any)["status"] != "failed" {
		t.Fatalf("%s", a.body)
	}
	th := e.do(http.MethodGet, "/v1/threads/f", "", "").json(t)
	if th["status"] != "failed" {
		t.Fatalf("thread %v", th)
	}
}

func TestANodesPanicIsLoggedWithItsStackAndAnsweredWithoutIt(t *testing.T) {
	for _, c := range []struct {
		name, path, accept string
	}{
		{"invoke", "/v1/graph/invoke", ""},
		{"stream", "/v1/graph/stream", "application/x-ndjson"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs syncBuffer
			e := newEnv(t, setup{opts: []server.Option{server.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil)))}})
			thread := "panics-" + c.name
			a := e.do(http.MethodPost, c.path, `{"graph":"flaky","input":{"panic":true},"config":{"thread_id":"`+thread+`"}}`, "", "Accept", c.accept)
			expect(t, a, http.StatusOK, "")
			detail := e.do(http.MethodGet, "/v1/threads/"+thread, "", "")
			for what, body := range map[string][]byte{"the run's answer": a.body, "the thread": detail.body} {
				if !bytes.Contains(body, []byte(`panic: the node broke badly`)) || bytes.Contains(body, []byte("goroutine")) {
					t.Errorf("%s should carry the one-line panic and no stack:\n%s", what, body)
				}
			}
			var logged bool
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var rec map[string]any
				if json.Unmarshal([]byte(line), &rec) == nil && rec["level"] == "ERROR" && rec["thread_id"] == thread {
					stack, _ := rec["stack"].(string)
					logged = strings.Contains(stack, "goroutine") && strings.Contains(stack, "flakyGraph")
				}
			}
			if !logged {
				t.Errorf("no error-level log line with the panic's stack:\n%s", logs.String())
			}
		})
	}
}

func TestInputToAThreadThatExistsNeedsNoRequiredField(t *testing.T) {
	e := newEnv(t, setup{})
	e.start("gated", "g", `{"topic":"tea"}`)
	for range 2 { // past both breakpoints
		expect(t, e.post("/v1/graph/invoke", `{"config":{"thread_id":"g"}}`, admin.Secret), 200, "")
	}
	res := e.start("gated", "g", `{"draft":"a second draft"}`)
	if res["status"] != "interrupted" {
		t.Fatalf("new input to an idle thread without its required topic: %v", res)
	}
}
