package main

import (
	"bufio"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestServeStopsWithinItsShutdownTimeoutDespiteAStalledClient(t *testing.T) {
	s := startServer(t, "--shutdown-timeout", "500ms", "--read-timeout", "1h")
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers that promise 100000 bytes; the body never comes. The server asks
	// for it once its handler reads, so the request is surely being served.
	io.WriteString(conn, "POST /v1/graph/invoke HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+aliceToken+
		"\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(line, "100 Continue") {
		t.Fatalf("the server did not ask for the body: %q %v", line, err)
	}
	io.WriteString(conn, "{")
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(5 * time.Second): // the stalled client would hold it forever
		t.Fatalf("interlude serve did not stop within seconds of its 500ms shutdown timeout\n%s", s.stderr.String())
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(s.stderr.String(), "shutdown deadline passed") || !strings.Contains(s.stderr.String(), "msg=stopped") {
		t.Fatalf("exit %d\n%s", code, s.stderr.String())
	}
}

func TestTheStateCacheBudgetIsSharedByEveryBuiltinGraph(t *testing.T) {
	gs, err := builtins(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != builtinCount {
		t.Fatalf("builtins compiles %d graphs; --cache-bytes is split %d ways", len(gs), builtinCount)
	}
}
