package interlude

import "github.com/interludehq/interlude/internal/vocab"

// ThreadStatus is where a thread stands (idle, running, interrupted or failed):
// what the API, the CLI and the inbox show for it, and what listings filter on.
// Its Outcome method names the run status a thread in it reports.
type ThreadStatus = vocab.ThreadStatus

// Thread statuses.
const (
	// ThreadIdle: nothing runs or waits; new input may be sent. A thread whose
	// run completed is idle.
	ThreadIdle = vocab.ThreadIdle
	// ThreadRunning: a run holds the thread, or one that stopped before its end
	// left it with more to do, which recovery finishes.
	ThreadRunning = vocab.ThreadRunning
	// ThreadInterrupted: the thread waits for answers or sits at a breakpoint.
	ThreadInterrupted = vocab.ThreadInterrupted
	// ThreadFailed: the last step failed; continuing retries it.
	ThreadFailed = vocab.ThreadFailed
)

// RunStatus is how a run ended (completed, interrupted or failed): what invoke,
// the answer routes and a stream's end report.
type RunStatus = vocab.RunStatus

// Run statuses.
const (
	// RunCompleted: the run reached the end of the graph; the thread is idle.
	RunCompleted = vocab.RunCompleted
	// RunInterrupted: the thread waits for answers or sits at a breakpoint.
	RunInterrupted = vocab.RunInterrupted
	// RunFailed: a step failed; the thread is failed.
	RunFailed = vocab.RunFailed
)

// ParseThreadStatus reads a status to filter threads by: a thread status, or
// "completed", the status a run ends with, which names the idle threads. Other
// text is refused with an error matching ErrInvalidRequest.
func ParseThreadStatus(text string) (ThreadStatus, error) { return vocab.ParseThreadStatus(text) }
