// Package proctest helps tests that run Interlude as real processes: it builds the
// interlude binary once, finds free loopback addresses, and collects a process's
// output safely while the test reads it.
package proctest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Main builds cmd/interlude into a new temporary directory, sets *bin to the
// binary's path, runs the tests and exits with their result, removing the
// directory first. Call it from TestMain.
func Main(m *testing.M, bin *string) {
	dir, err := os.MkdirTemp("", "interlude-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = filepath.Join(dir, "interlude")
	build := exec.Command("go", "build", "-o", *bin, "github.com/interludehq/interlude/cmd/interlude")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		fmt.Fprintf(os.Stderr, "build the interlude binary: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// FreeAddr returns a loopback address with a port nothing listens on right now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Buffer collects a process's output while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
