package vocab

import "strconv"

// ThreadStatus is where a thread stands: what the API, the CLI and the inbox
// show for it, and what listings filter on.
type ThreadStatus string

// Thread statuses.
const (
	// ThreadIdle: nothing runs or waits; new input may be sent. A thread whose
	// run completed is idle.
	ThreadIdle ThreadStatus = "idle"
	// ThreadRunning: a run holds the thread, or one that stopped before its end
	// left it with more to do, which recovery finishes.
	ThreadRunning ThreadStatus = "running"
	// ThreadInterrupted: the thread waits for answers or sits at a breakpoint.
	ThreadInterrupted ThreadStatus = "interrupted"
	// ThreadFailed: the last step failed; continuing retries it.
	ThreadFailed ThreadStatus = "failed"
)

// RunStatus is how a run ended: what invoke, the answer routes and a stream's
// end report.
type RunStatus string

// Run statuses.
const (
	// RunCompleted: the run reached the end of the graph; the thread is idle.
	RunCompleted RunStatus = "completed"
	// RunInterrupted: the thread waits for answers or sits at a breakpoint.
	RunInterrupted RunStatus = "interrupted"
	// RunFailed: a step failed; the thread is failed.
	RunFailed RunStatus = "failed"
)

// Outcome is the run status a thread in status s reports: interrupted and
// failed keep their names, and any other thread reports its last run completed.
func (s ThreadStatus) Outcome() RunStatus {
	switch s {
	case ThreadInterrupted:
		return RunInterrupted
	case ThreadFailed:
		return RunFailed
	}
	return RunCompleted
}

// ParseThreadStatus reads a status to filter threads by: a thread status, or
// "completed", the status a run ends with, which names the idle threads. Any
// other text is refused with an error matching ErrInvalidRequest that names the
// statuses accepted.
func ParseThreadStatus(text string) (ThreadStatus, error) {
	switch s := ThreadStatus(text); s {
	case ThreadIdle, ThreadRunning, ThreadInterrupted, ThreadFailed:
		return s, nil
	case ThreadStatus(RunCompleted):
		return ThreadIdle, nil
	}
	return "", &Error{Code: CodeInvalidRequest, Message: "status " + strconv.Quote(text) + " is not one of idle (or completed), running, interrupted, failed"}
}
