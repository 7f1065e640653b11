package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/clienttest"
	"github.com/interludehq/interlude/internal/proctest"
	"github.com/interludehq/interlude/wire"
)

// liveServer is an "interlude serve" process.
type liveServer struct {
	url    string
	cmd    *exec.Cmd
	stderr *proctest.Buffer
	done   chan struct{}
}

const (
	aliceToken  = "alice-secret-token"
	readerToken = "reader-secret-token"
)

// startServer starts "interlude serve" with tokens on a free loopback port, and
// the extra flags, and waits until /healthz answers.
func startServer(t *testing.T, extra ...string) *liveServer {
	return startServerIn(t, t.TempDir(), nil, extra...)
}

// startServerIn starts "interlude serve" like startServer, keeping its threads
// in dir/serve.db, with extra environment variables and flags.
func startServerIn(t *testing.T, dir string, extraEnv []string, extra ...string) *liveServer {
	t.Helper()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("# name:token:roles\nalice:"+aliceToken+":run,approve\nreader:"+readerToken+":\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := proctest.FreeAddr(t)
	s := &liveServer{url: "http://" + addr, stderr: &proctest.Buffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr, "--db", filepath.Join(dir, "serve.db"), "--tokens", tokens, "--body-limit", "4096"}, extra...)...)
	s.cmd.Env = baseEnv(extraEnv...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	c := clienttest.New(t, s.url)
	up := waitFor(15*time.Second, func() bool {
		select {
		case <-s.done:
			return true // exited: reported below
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return c.Health(ctx) == nil
	})
	select {
	case <-s.done:
		t.Fatalf("interlude serve exited: %v\n%s", s.cmd.ProcessState, s.stderr.String())
	default:
	}
	if !up {
		t.Fatalf("interlude serve did not answer /healthz in time\n%s", s.stderr.String())
	}
	return s
}

// cli runs the interlude binary against the server with alice's token (unless
// env overrides it) and returns its exit code and output.
func (s *liveServer) cli(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = baseEnv(append([]string{"INTERLUDE_SERVER=" + s.url, "INTERLUDE_TOKEN=" + aliceToken}, env...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// expectCLI runs a command and checks its exit code and that stdout (or, for a
// failure, stderr) contains each of wants.
func (s *liveServer) expectCLI(t *testing.T, env []string, wantCode int, args []string, wants ...string) string {
	t.Helper()
	code, out, errOut := s.cli(t, env, args...)
	text := out
	if wantCode != exitOK && wantCode != exitFailed {
		text = errOut
	}
	if code != wantCode {
		t.Fatalf("interlude %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out, errOut)
	}
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("interlude %s: output lacks %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), w, out, errOut)
		}
	}
	return out
}

func TestClientCommandsAgainstALiveServer(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	as := func(token string) []string { return []string{"INTERLUDE_TOKEN=" + token} }

	t.Run("run pauses and says how to answer", func(t *testing.T) {
		s.expectCLI(t, nil, exitOK, []string{"run", "refund", `{"amount": 150}`, "--thread", "order-1"},
			"Thread order-1: interrupted", "Approve a refund of $150?", `value: {"amount":150}`,
			`resume: interlude resume order-1 --id int_`, `'{"approved": true}'`, `Values: {"amount":150,"attempts":1}`,
			"\n    reject: interlude reject order-1 --id int_", "--message REASON\n    cancel: interlude cancel order-1 --id int_")
		if _, out, _ := s.cli(t, nil, "show", "order-1"); strings.Contains(out, " | interlude") {
			t.Errorf("two answer commands share a line, which reads as a pipe:\n%s", out)
		}
	})
	t.Run("threads lists the inbox", func(t *testing.T) {
		s.expectCLI(t, nil, exitOK, []string{"threads", "--status", "interrupted"},
			"THREAD", "order-1", "refund", "interrupted", "Approve a refund of $150?")
		out := s.expectCLI(t, nil, exitOK, []string{"threads", "--graph", "refund", "--json"})
		var page wire.ThreadPage
		if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Threads) != 1 || page.Threads[0].ThreadID != "order-1" {
			t.Fatalf("%v %+v\n%s", err, page, out)
		}
		s.expectCLI(t, nil, exitOK, []string{"threads", "--graph", "two-step"}, "No threads.")
		s.expectCLI(t, nil, exitOK, []string{"threads", "--status", "completed", "--graph", "refund"}, "No threads.")
		s.expectCLI(t, nil, exitUsage, []string{"threads", "--status", "done"}, "idle (or completed)")
	})
	t.Run("show a pending thread", func(t *testing.T) {
		s.expectCLI(t, nil, exitOK, []string{"show", "order-1"},
			"Thread   order-1", "Graph    refund", "Status   interrupted", "Waiting for 1 answer:", "Approve a refund of $150?",
			"History (oldest first):", `asked int_`)
	})
	t.Run("refusals exit 3", func(t *testing.T) {
		s.expectCLI(t, nil, exitRefused, []string{"resume", "order-1", `{"approved": "maybe"}`},
			"refused by the server (422 invalid_response)", "/approved: got string, want boolean")
		s.expectCLI(t, as(readerToken), exitRefused, []string{"resume", "order-1", `{"approved": true}`}, "403 forbidden")
		s.expectCLI(t, as(""), exitRefused, []string{"threads"}, "401 unauthenticated", "set INTERLUDE_TOKEN")
		s.expectCLI(t, nil, exitRefused, []string{"show", "no-such-thread"}, "404 not_found")
		s.expectCLI(t, nil, exitRefused, []string{"run", "refund", `{"amount": 5}`, "--thread", "order-1"}, "409 thread_interrupted")
		errOut := s.expectCLI(t, nil, exitRefused, []string{"resume", "order-1", "--id", "int_nope", "true"}, "no pending interrupt has id int_nope; pending: int_")
		if strings.Contains(errOut, "interrupts: int_nope") {
			t.Errorf("the unknown id is listed as if it were pending:\n%s", errOut)
		}
		code, out, _ := s.cli(t, nil, "resume", "order-1", "--id", "int_nope", "true", "--json")
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		if code != exitRefused || json.Unmarshal([]byte(out), &body) != nil || body.Error.Code != "unknown_interrupt" {
			t.Fatalf("--json refusal: exit %d\n%s", code, out)
		}
	})
	t.Run("resume answers and show records who answered", func(t *testing.T) {
		s.expectCLI(t, as(readerToken), exitOK, []string{"show", "order-1"}, "Status   interrupted") // reading needs no role
		s.expectCLI(t, nil, exitOK, []string{"resume", "order-1", `{"approved": true}`},
			"Thread order-1: completed", `"outcome":"refunded"`)
		s.expectCLI(t, nil, exitOK, []string{"show", "order-1"},
			"Status   idle", `"outcome":"refunded"`, `answered {"approved":true} (by alice,`, "step 1 done; the run ended")
		s.expectCLI(t, nil, exitRefused, []string{"resume", "order-1", "true"}, "409 not_interrupted")
	})
	t.Run("show --history keeps to the newest entries and says what it left out", func(t *testing.T) {
		out := s.expectCLI(t, nil, exitOK, []string{"show", "order-1", "--history", "1"}, "History (oldest first):", "earlier entries not shown; --history 0 shows them all")
		if strings.Contains(out, "asked int_") {
			t.Errorf("--history 1 shows the question asked before the newest entry:\n%s", out)
		}
		s.expectCLI(t, nil, exitOK, []string{"show", "order-1", "--history", "2"}, "(1 earlier entry not shown; --history 0 shows them all)")
		out = s.expectCLI(t, nil, exitOK, []string{"show", "order-1", "--history", "0"}, "asked int_", `answered {"approved":true} (by alice,`)
		if strings.Contains(out, "not shown") {
			t.Errorf("--history 0 leaves entries out:\n%s", out)
		}
		s.expectCLI(t, nil, exitUsage, []string{"show", "order-1", "--history", "-1"}, "--history takes 0 (all) or more entries")
	})
	t.Run("reject a tool call: the agent reports it", func(t *testing.T) {
		s.expectCLI(t, nil, exitOK, []string{"run", "support-agent", "--message", "Please refund order A-1001", "--thread", "chat-1"},
			"Thread chat-1: interrupted", "Approve a refund of $150 for order A-1001?", `tool: issue_refund {"order_id":"A-1001"`)
		out := s.expectCLI(t, nil, exitOK, []string{"reject", "chat-1", "--message", "Needs a manager.", "--json"})
		var res graph.Result[json.RawMessage]
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.Status != interlude.RunCompleted {
			t.Fatalf("%v %+v\n%s", err, res, out)
		}
		s.expectCLI(t, nil, exitOK, []string{"show", "chat-1"},
			"Conversation:", "you: Please refund order A-1001", "<- issue_refund (error): Needs a manager.",
			"rejected: Needs a manager. (by alice,", "agent: I could not issue the refund: Needs a manager.")
	})
	t.Run("a question inside a subgraph or an inner agent shows where it was asked", func(t *testing.T) {
		s.expectCLI(t, nil, exitOK, []string{"run", "nested", `{"amount": 150}`, "--thread", "nest-1"},
			"Thread nest-1: interrupted", "Manager: approve $150?", "at: nested › approval › manager")
		s.expectCLI(t, nil, exitOK, []string{"resume", "nest-1", "true"}, "Finance: approve $150?", "at: nested › approval › finance")
		s.expectCLI(t, nil, exitOK, []string{"resume", "nest-1", "true"}, "Thread nest-1: completed", `"outcome":"approved"`)
		s.expectCLI(t, nil, exitOK, []string{"run", "team-agent", "--message", "Please refund order A-1001", "--thread", "team-1"},
			"Thread team-1: interrupted", "Approve a refund of $150 for order A-1001?", "at: team-agent › billing › issue_refund")
		s.expectCLI(t, nil, exitOK, []string{"show", "team-1"}, "at: team-agent › billing › issue_refund")
		s.expectCLI(t, nil, exitOK, []string{"resume", "team-1", `{"action": "approve"}`}, "Thread team-1: completed", "Billing says: Done: Refunded $150 on order A-1001.")
	})
	t.Run("show prints the finished lookup of a turn whose refund waits", func(t *testing.T) {
		s.expectCLI(t, nil, exitOK, []string{"run", "support-agent", "--message", "Please refund order A-1001", "--thread", "chat-2"},
			"Thread chat-2: interrupted", "Approve a refund of $150 for order A-1001?")
		out := s.expectCLI(t, nil, exitOK, []string{"show", "chat-2"},
			"Conversation:", "you: Please refund order A-1001", `-> lookup_order {"order_id":"A-1001"}`, `-> issue_refund {"order_id":"A-1001"`,
			`<- lookup_order: {"order_id":"A-1001","customer":"Sam Lee","total":150,"status":"delivered"}`,
			".. issue_refund waits for an answer", "History (oldest first):")
		conv, _, _ := strings.Cut(out, "History (oldest first):")
		if strings.Contains(out, "<- issue_refund") || !strings.HasSuffix(strings.TrimSpace(conv), ".. issue_refund waits for an answer") ||
			strings.Index(conv, "<- lookup_order") < strings.Index(conv, "-> issue_refund") {
			t.Fatalf("show does not end the conversation with the lookup's result, then the waiting refund:\n%s", out)
		}
		s.expectCLI(t, nil, exitOK, []string{"resume", "chat-2", `{"action": "approve"}`}, "Thread chat-2: completed")
		out = s.expectCLI(t, nil, exitOK, []string{"show", "chat-2"}, `<- lookup_order: {"order_id":"A-1001"`, "<- issue_refund: Refunded $150 on order A-1001.")
		if n := strings.Count(out, "<- lookup_order"); n != 1 || strings.Contains(out, "waits for an answer") {
			t.Fatalf("after the answer, show prints the lookup %d times or still says a call waits:\n%s", n, out)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		s.expectCLI(t, nil, exitOK, []string{"run", "two-step", "{}", "--thread", "ts-1"}, "Approve step 1?", "resume: interlude resume ts-1 --id int_")
		s.expectCLI(t, nil, exitOK, []string{"cancel", "ts-1"}, "Thread ts-1: completed", `"outcome":"stopped"`)
	})
	t.Run("graphs shows what each graph starts with", func(t *testing.T) {
		s.expectCLI(t, nil, exitOK, []string{"graphs"}, "refund  input: amount", "support-agent  input: messages")
		s.expectCLI(t, nil, exitOK, []string{"graphs", "support-agent"}, "messages", "start one: interlude run support-agent --message TEXT")
		s.expectCLI(t, nil, exitOK, []string{"graphs", "refund"}, "Graph refund", "input (* required):", "amount", "(number)",
			"start one: interlude run refund '{", "input schema: {")
		s.expectCLI(t, nil, exitUsage, []string{"graphs", "nope"}, `the server hosts no graph "nope"; it hosts `)
	})
	t.Run("refusals of a run speak the CLI's terms", func(t *testing.T) {
		errOut := s.expectCLI(t, nil, exitRefused, []string{"run", "two-step", "{}", "--thread", "order-1"},
			"thread order-1 runs graph refund, not two-step: continue it with interlude run refund --thread order-1")
		if strings.Contains(errOut, "leave graph out") {
			t.Errorf("the refusal speaks of the HTTP body:\n%s", errOut)
		}
		s.expectCLI(t, nil, exitRefused, []string{"run", "refund", "--thread", "no-such-thread"},
			"thread no-such-thread does not exist; start it with INPUT_JSON or --message (interlude graphs refund shows the input it takes)")
		_, _, errOut = s.cli(t, nil, "run", "refund", "nope")
		if !strings.Contains(errOut, `'{"amount": 150}'; interlude graphs refund shows the input it takes`) || strings.Contains(errOut, "approved") {
			t.Errorf("bad input JSON is not explained as input:\n%s", errOut)
		}
		_, _, errOut = s.cli(t, nil, "run", "refund", "{}")
		if !strings.Contains(errOut, "\n  interlude graphs refund shows the input it takes") || strings.Contains(errOut, `\x0a`) {
			t.Errorf("a refused input's hint is not on a line of its own:\n%s", errOut)
		}
	})
	t.Run("several questions need --id", func(t *testing.T) {
		out := s.expectCLI(t, nil, exitOK, []string{"run", "parallel", "{}", "--thread", "par-1", "--json"})
		var res graph.Result[json.RawMessage]
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Interrupts) != 2 {
			t.Fatalf("%v\n%s", err, out)
		}
		s.expectCLI(t, nil, exitRefused, []string{"resume", "par-1", "true"}, "ambiguous_resume", "choose one with --id")
		s.expectCLI(t, nil, exitOK, []string{"resume", "par-1", "--id", res.Interrupts[0].ID, "true"}, "Thread par-1: interrupted", "Waiting for 1 answer:")
		s.expectCLI(t, nil, exitOK, []string{"resume", "par-1", "--id", res.Interrupts[1].ID, "false"}, "Thread par-1: completed")
	})
	t.Run("breakpoints are passed with run --thread", func(t *testing.T) {
		s.expectCLI(t, nil, exitOK, []string{"run", "gated", `{"topic": "tea"}`, "--thread", "gate-1"},
			"Paused after node draft. Continue with: interlude run gated --thread gate-1")
		for _, args := range [][]string{{"cancel", "gate-1"}, {"reject", "gate-1"}, {"resume", "gate-1", "true"}} {
			s.expectCLI(t, nil, exitRefused, args, "thread gate-1 is paused at a breakpoint after node draft, which takes no answer",
				"\n  continue it with interlude run gated --thread gate-1\n")
		}
		s.expectCLI(t, nil, exitOK, []string{"threads", "--status", "interrupted", "--graph", "gated"},
			"paused at a breakpoint (continue: interlude run gated --thread gate-1)")
		s.expectCLI(t, nil, exitOK, []string{"run", "gated", "--thread", "gate-1"}, "Paused before node publish")
		s.expectCLI(t, nil, exitOK, []string{"run", "gated", "--thread", "gate-1"}, "Thread gate-1: completed", `"published":true`)
	})
	t.Run("the printed resume command may be run again", func(t *testing.T) {
		out := s.expectCLI(t, nil, exitOK, []string{"run", "two-step", "{}", "--thread", "again-1"}, "Approve step 1?")
		_, hint, ok := strings.Cut(out, "resume: interlude ")
		if !ok {
			t.Fatalf("no resume command printed:\n%s", out)
		}
		args := strings.Fields(strings.SplitN(hint, "\n", 2)[0])
		first := s.expectCLI(t, nil, exitOK, args, "Thread again-1: interrupted", "Approve step 2?")
		if strings.Contains(first, "already answered") {
			t.Errorf("the first answer reads as a replay:\n%s", first)
		}
		// Again, it says the answer was given before, by whom, and was not
		// applied again; the rest is the same.
		again := s.expectCLI(t, nil, exitOK, args, "Thread again-1: interrupted", "was already answered by alice at ", "; your answer was not applied again.")
		if _, rest, _ := strings.Cut(again, "\n"); rest != first {
			t.Errorf("the repeated command answered differently:\n%s\nthen:\n%s", first, again)
		}
	})
	t.Run("a listing's next page keeps its filters", func(t *testing.T) {
		for _, id := range []string{"page-1", "page-2"} {
			s.expectCLI(t, nil, exitOK, []string{"run", "refund", `{"amount": 3}`, "--thread", id}, "interrupted")
		}
		// Newest first: page-2, then page-1 alone (order-1 is answered, so not in the inbox).
		out := s.expectCLI(t, nil, exitOK, []string{"threads", "--status", "interrupted", "--graph", "refund", "--limit", "1"},
			"page-2", "More: interlude threads --status interrupted --graph refund --limit 1 --cursor ")
		_, more, _ := strings.Cut(out, "More: interlude ")
		next := s.expectCLI(t, nil, exitOK, strings.Fields(more), "page-1")
		if strings.Contains(next, "page-2") || strings.Contains(next, "order-1") || strings.Contains(next, "More:") {
			t.Errorf("the next page is not the last interrupted refund:\nfirst:\n%s\nnext:\n%s", out, next)
		}
		last := s.expectCLI(t, nil, exitOK, []string{"threads", "--graph", "no-such-graph", "--json"})
		var raw map[string]any
		if err := json.Unmarshal([]byte(last), &raw); err != nil || raw["next_cursor"] != nil {
			t.Errorf("--json at the end of a listing: want next_cursor null, as the server sends it\n%s", last)
		}
	})
	t.Run("hints repeat --server when it was given as a flag", func(t *testing.T) {
		// $INTERLUDE_SERVER names no server: a hint that left --server out
		// would talk to it.
		elsewhere := []string{"INTERLUDE_SERVER=http://" + proctest.FreeAddr(t)}
		srv := " --server " + s.url
		out := s.expectCLI(t, elsewhere, exitOK, []string{"run", "two-step", "{}", "--thread", "srv-1", "--server", s.url},
			"resume: interlude resume srv-1 --id int_", "--message REASON"+srv+"\n", "cancel: interlude cancel srv-1 --id int_")
		_, hint, _ := strings.Cut(out, "resume: interlude ")
		resume := strings.Fields(strings.SplitN(hint, "\n", 2)[0])
		if !strings.HasSuffix(strings.Join(resume, " "), srv) {
			t.Fatalf("the resume hint does not repeat --server:\n%s", out)
		}
		s.expectCLI(t, elsewhere, exitOK, resume, "Thread srv-1: interrupted", "Approve step 2?")
		s.expectCLI(t, elsewhere, exitOK, []string{"show", "srv-1", "--server", s.url}, "true"+srv+"\n", "cancel: interlude cancel srv-1 --id int_")
		s.expectCLI(t, elsewhere, exitOK, []string{"run", "gated", `{"topic": "tea"}`, "--thread", "srv-gate", "--server", s.url},
			"Continue with: interlude run gated --thread srv-gate"+srv+"\n")
		out = s.expectCLI(t, elsewhere, exitOK, []string{"threads", "--graph", "gated", "--limit", "1", "--server", s.url}, "srv-gate", srv+"\n")
		_, more, _ := strings.Cut(out, "More: interlude ")
		s.expectCLI(t, elsewhere, exitOK, strings.Fields(more), "gate-1")
		// From the environment, the server is not repeated.
		if out := s.expectCLI(t, nil, exitOK, []string{"show", "srv-1"}, "resume: interlude resume srv-1"); strings.Contains(out, "--server") {
			t.Errorf("a hint repeats the server $INTERLUDE_SERVER chose:\n%s", out)
		}
	})
	t.Run("a thread id no path can carry is a usage error", func(t *testing.T) {
		for _, args := range [][]string{{"resume", "", "true"}, {"show", ".."}, {"show", ""}, {"cancel", "."}, {"reject", ".."}} {
			s.expectCLI(t, nil, exitUsage, args, "the thread id cannot name a thread", "give a thread's id (interlude threads lists them)")
		}
	})
	t.Run("notifications says they are off on a server without a notifier", func(t *testing.T) {
		out := s.expectCLI(t, nil, exitOK, []string{"notifications"}, "Notifications are off on this server: it was started without --webhook, --notify or --slack-channel")
		if strings.Contains(out, "No notifications.") {
			t.Errorf("the listing reads as if notifications were on:\n%s", out)
		}
	})
	t.Run("a body over --body-limit is refused", func(t *testing.T) {
		big := `{"topic": "` + strings.Repeat("x", 5000) + `"}`
		s.expectCLI(t, nil, exitRefused, []string{"run", "gated", big}, "413 too_large")
	})
	t.Run("an unreachable server exits 4", func(t *testing.T) {
		s.expectCLI(t, []string{"INTERLUDE_SERVER=http://" + proctest.FreeAddr(t)}, exitUnreachable, []string{"threads"}, "unreachable", "is \"interlude serve\" running")
		s.expectCLI(t, nil, exitUnreachable, []string{"show", "order-1", "--server", "http://" + proctest.FreeAddr(t)}, "unreachable")
	})

	// SIGTERM stops the server gracefully.
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("interlude serve did not stop on SIGTERM\n%s", s.stderr.String())
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(s.stderr.String(), "msg=stopped") {
		t.Fatalf("exit %d\n%s", code, s.stderr.String())
	}
	for _, want := range []string{"msg=listening", "inbox=" + s.url + "/inbox/", `graphs="[refund two-step parallel gated support-agent nested team-agent]"`, "tokens=2", "level=WARN msg=request", "status=403", "token=reader"} {
		if !strings.Contains(s.stderr.String(), want) {
			t.Errorf("server log lacks %q", want)
		}
	}
	if strings.Contains(s.stderr.String(), "status=200") {
		t.Errorf("successful requests are logged at the default level:\n%s", s.stderr.String())
	}
}

func TestServeRefusesANonLoopbackAddressWithoutTokens(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(bin, "serve", "--addr", "0.0.0.0:0", "--db", filepath.Join(t.TempDir(), "x.db"))
	cmd.Env = baseEnv()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(out), "refusing to listen on 0.0.0.0:0 without API tokens: give --tokens FILE") {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestServeOnAnAddressInUseSaysSoAndCreatesNoDatabase(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	db := filepath.Join(t.TempDir(), "x.db")
	cmd := exec.Command(bin, "serve", "--addr", ln.Addr().String(), "--db", db)
	cmd.Env = baseEnv()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), ln.Addr().String()+" is in use by another program") || !strings.Contains(string(out), "choose another address with --addr") {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the server that could not listen left %s behind (%v)", db, err)
	}
}

func TestAFailedRunExitsOne(t *testing.T) {
	t.Parallel()
	// The built-in graphs do not fail on request, so a server answers as one
	// whose run failed does.
	failed, err := json.Marshal(graph.Result[json.RawMessage]{ThreadID: "f-1", Status: interlude.RunFailed, Error: `node "work": the disk is full`})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/graph/invoke" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(failed)
	}))
	defer hs.Close()
	s := &liveServer{url: hs.URL}
	s.expectCLI(t, nil, exitFailed, []string{"run", "flaky", "{}", "--thread", "f-1"},
		"Thread f-1: failed", `Error: node "work": the disk is full`)
}
