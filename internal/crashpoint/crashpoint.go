// Package crashpoint lets tests end a process right after a chosen commit, as a
// crash there would, to check what a fresh process makes of the thread. Only
// `interlude serve` arms it, from INTERLUDE_TEST_CRASH_AFTER; nothing else does.
package crashpoint

import (
	"os"
	"strconv"
	"sync/atomic"
)

// Env names the environment variable `interlude serve` arms the crash point
// from: the kind of record ("resolve", "pause", ...) after whose commit the
// process dies, or "#n" for the n-th commit of any kind (counting from 1).
const Env = "INTERLUDE_TEST_CRASH_AFTER"

// ExitCode is the code the process dies with, that of a process killed by
// SIGKILL.
const ExitCode = 137

var (
	armed   atomic.Pointer[string]
	commits atomic.Int64 // commits since the crash point was armed
)

// Arm makes the process die once a record of the given kind is committed; ""
// disarms it.
func Arm(kind string) {
	if kind == "" {
		armed.Store(nil)
		return
	}
	commits.Store(0)
	armed.Store(&kind)
}

// Committed is called after each commit of a record of the given kind; it ends
// the process at once, without running deferred functions, if armed for it.
func Committed(kind string) {
	k := armed.Load()
	if k == nil {
		return
	}
	n := commits.Add(1)
	if *k == kind || *k == "#"+strconv.FormatInt(n, 10) {
		os.Exit(ExitCode)
	}
}
