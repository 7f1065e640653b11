// Package mcpnode holds the Node programs, on the official TypeScript MCP SDK
// pinned by package-lock.json, that the Go tests use as real MCP peers:
// client.mjs calls `interlude serve`'s /mcp, server.mjs is a stdio server whose
// tool elicits mid-call. Dir finds them; `npm ci` in this directory installs
// the SDK (.ci/run does so).
package mcpnode

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns this directory, once node and the installed SDK are found. It
// skips the test when they are missing, unless INTERLUDE_TEST_NODE is set (as
// in CI), where it fails instead.
func Dir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Dir(file)
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		missing = "the MCP SDK is not installed: run npm ci in " + dir
	}
	if missing != "" {
		if os.Getenv("INTERLUDE_TEST_NODE") != "" {
			t.Fatal(missing)
		}
		t.Skip(missing)
	}
	return dir
}
