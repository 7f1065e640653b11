package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/interludehq/interlude/agent"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/store"
	"github.com/interludehq/interlude/store/sqlite"
)

// term is the interlude binary running under a pseudo-terminal, driven like a
// person at a keyboard.
type term struct {
	t      *testing.T
	cmd    *exec.Cmd
	pty    *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	seen   int           // how far expect has consumed the output
	update chan struct{} // signalled (without blocking) when output arrives
	closed chan struct{} // closed when the terminal has no more output
}

const termTimeout = 20 * time.Second

func startTerm(t *testing.T, args ...string) *term {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = baseEnv("TERM=dumb")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, cmd: cmd, pty: f, update: make(chan struct{}, 1), closed: make(chan struct{})}
	go tm.read()
	t.Cleanup(func() {
		if tm.cmd.ProcessState == nil {
			_ = tm.cmd.Process.Kill()
			_ = tm.cmd.Wait()
		}
		f.Close()
	})
	return tm
}

func (tm *term) read() {
	defer close(tm.closed)
	buf := make([]byte, 4096)
	for {
		n, err := tm.pty.Read(buf)
		if n > 0 {
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			select {
			case tm.update <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return // EIO once the process and its output are gone
		}
	}
}

// expect waits until s appears in the output after what earlier expects matched.
func (tm *term) expect(s string) {
	tm.t.Helper()
	deadline := time.After(termTimeout)
	for {
		tm.mu.Lock()
		out := tm.out.String()
		i := strings.Index(out[tm.seen:], s)
		if i >= 0 {
			tm.seen += i + len(s)
		}
		tm.mu.Unlock()
		if i >= 0 {
			return
		}
		select {
		case <-tm.update:
		case <-tm.closed:
			tm.mu.Lock()
			found := strings.Contains(tm.out.String()[tm.seen:], s)
			tm.mu.Unlock()
			if !found {
				tm.t.Fatalf("the program ended without printing %q; output:\n%s", s, tm.output())
			}
		case <-deadline:
			tm.t.Fatalf("no %q within %s; output:\n%s", s, termTimeout, tm.output())
		}
	}
}

func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.pty.Write([]byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

func (tm *term) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return strings.ReplaceAll(tm.out.String(), "\r\n", "\n")
}

// exit waits for the program to end and returns its exit code.
func (tm *term) exit() int {
	tm.t.Helper()
	select {
	case <-tm.closed:
	case <-time.After(termTimeout):
		tm.t.Fatalf("the program did not end; output:\n%s", tm.output())
	}
	err := tm.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		tm.t.Fatal(err)
	}
	return 0
}

func TestDemoApprovedRefundCompletes(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	tm := startTerm(t, "demo", "--db", db, "--thread", "approve-1")
	tm.expect("you: Please refund order A-1001 ($150), it arrived broken.")
	tm.expect("agent: Let me look up the order and issue the refund.")
	tm.expect(`-> issue_refund {"order_id":"A-1001","amount":150,"reason":"customer request"}`)
	tm.expect("? Approve a refund of $150 for order A-1001?")
	tm.expect("choice (1-5): ")
	tm.send("yes\r")
	tm.expect("-> approve")
	tm.expect("<- issue_refund: Refunded $150 on order A-1001.")
	tm.expect("agent: Done: Refunded $150 on order A-1001.")
	tm.expect("interlude demo --db " + db + " --thread approve-1 --message TEXT")
	if code := tm.exit(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.output())
	}
}

func TestDemoShowsTheLookupBeforeTheApprovalQuestionAndOnlyOnce(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	tm := startTerm(t, "demo", "--db", db, "--thread", "early-1")
	tm.expect(`<- lookup_order: {"order_id":"A-1001","customer":"Sam Lee","total":150,"status":"delivered"}`)
	tm.expect("? Approve a refund of $150 for order A-1001?")
	tm.expect("choice (1-5): ")
	tm.send("yes\r")
	tm.expect("<- issue_refund: Refunded $150 on order A-1001.")
	tm.expect("agent: Done: Refunded $150 on order A-1001.")
	if code := tm.exit(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.output())
	}
	out := tm.output()
	if n := strings.Count(out, "<- lookup_order"); n != 1 {
		t.Fatalf("the lookup's result is printed %d times, want once:\n%s", n, out)
	}
	if strings.Index(out, "<- lookup_order") > strings.Index(out, "? Approve a refund") {
		t.Fatalf("the lookup's result comes after the approval question:\n%s", out)
	}
}

func TestDemoPickingUpAQuestionShowsTheFinishedLookupOnceAndWhatWaits(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	first := startTerm(t, "demo", "--db", db, "--thread", "early-2")
	first.expect("choice (1-5): ")
	first.send("\x04") // Ctrl-D
	if code := first.exit(); code != 0 {
		t.Fatalf("first run: exit %d; output:\n%s", code, first.output())
	}

	second := startTerm(t, "demo", "--db", db, "--thread", "early-2")
	second.expect("Thread early-2 (in " + db + "), interrupted")
	second.expect(`-> issue_refund {"order_id":"A-1001"`)
	second.expect(`<- lookup_order: {"order_id":"A-1001"`)
	second.expect(".. issue_refund waits for an answer")
	second.expect("? Approve a refund of $150 for order A-1001?")
	second.expect("choice (1-5): ")
	second.send("yes\r")
	second.expect("<- issue_refund: Refunded $150 on order A-1001.")
	second.expect("agent: Done: Refunded $150 on order A-1001.")
	if code := second.exit(); code != 0 {
		t.Fatalf("second run: exit %d; output:\n%s", code, second.output())
	}
	if n := strings.Count(second.output(), "<- lookup_order"); n != 1 {
		t.Fatalf("the picked-up run prints the lookup's result %d times, want once:\n%s", n, second.output())
	}
}

func TestDemoRejectedRefundIsReportedByTheAgent(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	tm := startTerm(t, "demo", "--db", db, "--thread", "reject-1", "--message", "Refund order A-2002 for $80 please")
	tm.expect("? Approve a refund of $80 for order A-2002?")
	tm.expect("choice (1-5): ")
	tm.send("no\r")
	tm.expect("reason (optional, the model sees it): ")
	tm.send("Refunds over $50 need a manager.\r")
	tm.expect("-> reject: Refunds over $50 need a manager.")
	tm.expect("<- issue_refund (error): Refunds over $50 need a manager.")
	tm.expect("agent: I could not issue the refund: Refunds over $50 need a manager.")
	if code := tm.exit(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.output())
	}
	if strings.Contains(tm.output(), "Refunded $80") {
		t.Fatalf("the refund ran although it was rejected:\n%s", tm.output())
	}
}

func TestDemoQuestionLeftAtEOFIsAnsweredByASecondProcess(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	first := startTerm(t, "demo", "--db", db, "--thread", "later-1")
	first.expect("? Approve a refund of $150 for order A-1001?")
	first.expect("choice (1-5): ")
	first.send("\x04") // Ctrl-D
	first.expect("The question stays open: thread later-1 is paused in " + db)
	first.expect("interlude demo --db " + db + " --thread later-1")
	if code := first.exit(); code != 0 {
		t.Fatalf("first run: exit %d; output:\n%s", code, first.output())
	}
	if strings.Contains(first.output(), "Refunded") {
		t.Fatalf("the first run refunded without an answer:\n%s", first.output())
	}

	second := startTerm(t, "demo", "--db", db, "--thread", "later-1")
	second.expect("Thread later-1 (in " + db + "), interrupted")
	second.expect("you: Please refund order A-1001 ($150), it arrived broken.") // the conversation so far
	second.expect("? Approve a refund of $150 for order A-1001?")
	second.expect("choice (1-5): ")
	second.send("2\r") // edit
	second.expect("order_id* (text) [A-1001]: ")
	second.send("\r")
	second.expect("amount* (number, > 0, <= 10000) [150]: ")
	second.send("120\r")
	second.expect("reason (text) [customer request]: ")
	second.send("\r")
	second.expect("<- issue_refund: Refunded $120 on order A-1001.")
	second.expect("agent: Done: Refunded $120 on order A-1001.")
	if code := second.exit(); code != 0 {
		t.Fatalf("second run: exit %d; output:\n%s", code, second.output())
	}

	// A third run finds the conversation over.
	third := startTerm(t, "demo", "--db", db, "--thread", "later-1")
	third.expect("The conversation is over.")
	if code := third.exit(); code != 0 {
		t.Fatalf("third run: exit %d", code)
	}
}

func TestDemoInputEndingAtAPickedUpQuestionLeavesItOpen(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	for run := 1; run <= 2; run++ {
		tm := startTerm(t, "demo", "--db", db, "--thread", "twice-1")
		if run == 2 {
			tm.expect("Thread twice-1 (in " + db + "), interrupted")
		}
		tm.expect("choice (1-5): ")
		tm.send("\x04") // Ctrl-D
		tm.expect("The question stays open: thread twice-1 is paused in " + db)
		if code := tm.exit(); code != 0 {
			t.Fatalf("run %d: exit %d; output:\n%s", run, code, tm.output())
		}
		if strings.Contains(tm.output(), "interlude: ") {
			t.Fatalf("run %d reported an error:\n%s", run, tm.output())
		}
	}
}

func TestDemoRefusalIsPrefixedOnce(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	refund, err := graphs.Refund(graph.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := refund.Invoke(context.Background(), "order-42", graph.Input(graphs.RefundState{Amount: 5})); err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, _, errOut := inProcess("demo", "--db", db, "--thread", "order-42")
	if code != exitFailed || !strings.HasPrefix(errOut, `interlude: thread "order-42" belongs to graph "refund"`) {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

func TestDemoCtrlCAtTheQuestionSaysItStaysOpen(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	tm := startTerm(t, "demo", "--db", db, "--thread", "ctrlc-1")
	tm.expect("choice (1-5): ")
	tm.send("\x03") // Ctrl-C
	tm.expect("The question stays open: thread ctrlc-1 is paused in " + db)
	tm.expect("interlude demo --db " + db + " --thread ctrlc-1")
	if code := tm.exit(); code != 130 {
		t.Fatalf("exit %d, want 130; output:\n%s", code, tm.output())
	}
	again := startTerm(t, "demo", "--db", db, "--thread", "ctrlc-1")
	again.expect("Thread ctrlc-1 (in " + db + "), interrupted")
	again.expect("choice (1-5): ")
}

// firstAppendOnly commits one append, the first, and refuses the others, as a
// store does to a process that died after that commit.
type firstAppendOnly struct {
	store.Store
	done bool
}

func (f *firstAppendOnly) Append(ctx context.Context, a store.Append) error {
	if f.done {
		return errors.New("the process died")
	}
	f.done = true
	return f.Store.Append(ctx, a)
}

func TestDemoRunsOnARunStoppedBetweenTheModelsTurnAndItsTools(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	a, err := graphs.SupportAgent(nil, graph.WithStore(&firstAppendOnly{Store: st}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(context.Background(), "stopped-1", agent.Ask(demoMessage)); err == nil {
		t.Fatal("the tool step's commit should have failed")
	}
	st.Close()

	tm := startTerm(t, "demo", "--db", db, "--thread", "stopped-1")
	tm.expect("Thread stopped-1 (in " + db + "), running")
	tm.expect("The last run stopped before it ended; it goes on from its last committed step.")
	tm.expect("? Approve a refund of $150 for order A-1001?")
	tm.expect("choice (1-5): ")
	tm.send("1\r") // approve
	tm.expect("agent: Done: Refunded $150 on order A-1001.")
	if code := tm.exit(); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, tm.output())
	}
	if n := strings.Count(tm.output(), "Let me look up the order"); n != 1 {
		t.Fatalf("the model's turn shows %d times; want once (it is not taken again):\n%s", n, tm.output())
	}
}
