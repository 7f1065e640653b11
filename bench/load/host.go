package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// echoEnv, set in this program's environment, makes it the echo peer of
// hostRoundTrip instead of the benchmark.
const echoEnv = "INTERLUDE_LOAD_ECHO"

// hostRoundTrip measures a one-byte loopback TCP round trip between this
// process and a copy of it: the median of 5 rounds of 1,000. Each request of a
// cycle and each database round trip goes through this path (a write, a
// process woken by it, a write back), so it tells how fast the host is at the
// moment, apart from Interlude's code: on a shared host whose speed drifts, it
// drifts with the cycles per second.
func hostRoundTrip() (time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	peer := exec.Command(exe)
	peer.Env = append(os.Environ(), echoEnv+"=1")
	out, err := peer.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := peer.Start(); err != nil {
		return 0, err
	}
	defer peer.Wait()
	defer peer.Process.Kill()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("the echo peer gave no address: %w", err)
	}
	conn, err := net.Dial("tcp", strings.TrimSpace(addr))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	const rounds, trips = 5, 1000
	var per []time.Duration
	b := []byte{0}
	for range rounds {
		start := time.Now()
		for range trips {
			if _, err := conn.Write(b); err != nil {
				return 0, err
			}
			if _, err := io.ReadFull(conn, b); err != nil {
				return 0, err
			}
		}
		per = append(per, time.Since(start)/trips)
	}
	slices.Sort(per)
	return per[rounds/2], nil
}

// serveEcho is the echo peer: it prints the loopback address it listens on,
// then sends back every byte its one connection sends until it closes.
func serveEcho() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("%v", err)
	}
	fmt.Println(l.Addr())
	conn, err := l.Accept()
	if err != nil {
		fatalf("%v", err)
	}
	b := make([]byte, 512)
	for {
		n, err := conn.Read(b)
		if err != nil {
			return
		}
		if _, err := conn.Write(b[:n]); err != nil {
			return
		}
	}
}

// hostLine describes the host's round trip for the report, or why it could
// not be measured.
func hostLine() string {
	d, err := hostRoundTrip()
	if err != nil {
		return "not measured: " + err.Error()
	}
	return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1000)
}
