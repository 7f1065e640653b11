// Package crashpoint lets tests end a process right after a chosen commit, as a
// crash there would, to check what a fresh process makes of the thread. Only
// `interlude serve` arms it, from INTERLUDE_TEST_CRASH_AFTER; nothing else does.
package crashpoint

import (
	"os"
	"sync/atomic"
)

// Env names the environment variable `interlude serve` arms the crash point
// from: the kind of record ("resolve", "pause", ...) after whose commit the
// process dies.
const Env = "INTERLUDE_TEST_CRASH_AFTER"

// ExitCode is the code the process dies with, that of a process killed by
// SIGKILL.
const ExitCode = 137

var armed atomic.Pointer[string]

// Arm makes the process die once a record of the given kind is committed; ""
// disarms it.
func Arm(kind string) {
	if kind == "" {
		armed.Store(nil)
		return
	}
	armed.Store(&kind)
}

// Committed is called after each commit of a record of the given kind; it ends
// the process at once, without running deferred functions, if armed for it.
func Committed(kind string) {
	if k := armed.Load(); k != nil && *k == kind {
		os.Exit(ExitCode)
	}
}
