package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/interludehq/interlude/internal/mcpnode"
)

// TestTheTypeScriptSDKsClientAnswersPausesThroughMCP runs the official
// TypeScript MCP client against serve's /mcp: a pause elicited and answered,
// declined and cancelled within the call; a client without elicitation
// answering through the tools; the roles and the bearer token.
func TestTheTypeScriptSDKsClientAnswersPausesThroughMCP(t *testing.T) {
	dir := mcpnode.Dir(t)
	s := startServer(t)
	cmd := exec.Command("node", filepath.Join(dir, "client.mjs"), s.url+"/mcp", aliceToken, readerToken)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s\nserver:\n%s", err, out, s.stderr.String())
	}
	t.Logf("%s", out)
}
