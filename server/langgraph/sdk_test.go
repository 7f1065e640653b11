package langgraph_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/interludehq/interlude/internal/proctest"
)

// TestTheLangGraphJSSDKDrivesALiveServer runs testdata/sdk/test.mjs, which
// drives a live `interlude serve` through the pinned @langchain/langgraph-sdk:
// create, wait, stream, getState, resume by value and by id, search, history,
// join, decisions, the state update that resolves and one that writes values,
// command.update and goto, per-step values, copies, delete, and the refusals.
// It needs `npm ci` in testdata/sdk (which .ci/run does); elsewhere it is
// skipped unless CI is set.
func TestTheLangGraphJSSDKDrivesALiveServer(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "sdk"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@langchain", "langgraph-sdk")); err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatalf("the SDK is not installed in %s: run npm ci there (.ci/run does)", dir)
		}
		t.Skipf("the SDK is not installed in %s; run npm ci there to run this test", dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed, but the SDK is")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "interlude")
	build := exec.Command("go", "build", "-o", bin, "github.com/interludehq/interlude/cmd/interlude")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build interlude: %v\n%s", err, out)
	}
	tokens := filepath.Join(tmp, "tokens")
	if err := os.WriteFile(tokens, []byte("sdk:sdk-secret:admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := proctest.FreeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var serverLog proctest.Buffer
	srv := exec.CommandContext(ctx, bin, "serve", "--addr", addr, "--db", filepath.Join(tmp, "threads.db"), "--tokens", tokens)
	srv.Stdout, srv.Stderr = &serverLog, &serverLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not listen on %s: %s", addr, serverLog.String())
		}
		time.Sleep(50 * time.Millisecond) // waiting for an external process to listen
	}
	run := exec.CommandContext(ctx, node, "test.mjs")
	run.Dir = dir
	run.Env = append(os.Environ(), "INTERLUDE_URL=http://"+addr, "INTERLUDE_KEY=sdk-secret")
	out, err := run.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the SDK test failed: %v\nserver log:\n%s", err, serverLog.String())
	}
}
