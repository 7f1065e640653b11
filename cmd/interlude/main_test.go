package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude/internal/proctest"
)

// bin is the interlude binary, built once for the tests that run it as a process.
var bin string

func TestMain(m *testing.M) { proctest.Main(m, &bin) }

// baseEnv is the environment of the processes the tests start: the test's own,
// without what would change the tool's behaviour.
func baseEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "INTERLUDE_SERVER", "INTERLUDE_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY":
			continue
		}
		out = append(out, kv)
	}
	return append(out, extra...)
}

// inProcess runs the command line in this process and returns its exit code and
// output.
func inProcess(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code = run(e, args)
	return code, out.String(), errb.String()
}

func TestHelpAndUsageErrors(t *testing.T) {
	cases := []struct {
		args        []string
		code        int
		out, errOut string
	}{
		{[]string{"help"}, exitOK, "interlude serve", ""},
		{[]string{"--help"}, exitOK, "Exit codes: 0 done", ""},
		{[]string{"help", "resume"}, exitOK, "Usage: interlude resume THREAD [--id ID] VALUE_JSON", ""},
		{[]string{"resume", "-h"}, exitOK, "", "-id ID"},
		{[]string{"serve", "--help"}, exitOK, "", "-body-limit N"},
		{[]string{}, exitUsage, "", "Usage:"},
		{[]string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{[]string{"resume", "t1"}, exitUsage, "", "interlude resume: missing arguments"},
		{[]string{"show", "a", "b"}, exitUsage, "", `too many arguments: ["b"]`},
		{[]string{"threads", "--nope"}, exitUsage, "", "flag provided but not defined: -nope"},
		{[]string{"resume", "t1", "{not json"}, exitUsage, "", "VALUE_JSON is not valid JSON"},
		{[]string{"run", "refund"}, exitUsage, "", "give INPUT_JSON or --message"},
		{[]string{"run", "refund", "{}", "--message", "hi"}, exitUsage, "", "not both"},
		{[]string{"run", "support-agent", "--message", ""}, exitUsage, "", "--message is empty: give the TEXT to send"},
		{[]string{"run", "support-agent", "--message", " ", "--thread", "t1"}, exitUsage, "", "--message is empty: give the TEXT to send"},
		{[]string{"demo", "--message", "", "--thread", "m0"}, exitUsage, "", "--message is empty: give the TEXT to send"},
		{[]string{"run", "refund", "null"}, exitUsage, "", "INPUT_JSON must be a JSON object of the graph's state fields, not null"},
		{[]string{"run", "refund", "[1]"}, exitUsage, "", "INPUT_JSON must be a JSON object of the graph's state fields, not [1]"},
		{[]string{"run", "refund", " 5"}, exitUsage, "", "INPUT_JSON must be a JSON object of the graph's state fields, not 5"},
		{[]string{"demo", "--model", "gpt"}, exitUsage, "", `unknown model "gpt"`},
		{[]string{"demo", "--model", "openai"}, exitUsage, "", "needs OPENAI_API_KEY"},
		{[]string{"serve", "--addr", "0.0.0.0:0"}, exitUsage, "", "refusing to listen on 0.0.0.0:0 without API tokens: give --tokens FILE"},
		{[]string{"serve", "--log-format", "xml"}, exitUsage, "", `unknown log format "xml"`},
		{[]string{"serve", "--log-level", "loud"}, exitUsage, "", `unknown log level "loud"`},
		{[]string{"serve", "--memory-limit", "-1"}, exitUsage, "", "--memory-limit must not be negative"},
		{[]string{"threads", "--server", "notaurl"}, exitUsage, "", `--server "notaurl" is not a server URL`},
		{[]string{"show", "t1", "--server", "ftp://example.com"}, exitUsage, "", "is not a server URL"},
		{[]string{"version"}, exitOK, "interlude ", ""},
		{[]string{"--version"}, exitOK, "interlude ", ""},
		{[]string{"serve", "--read-timeout", "-1s"}, exitUsage, "", "--read-timeout must not be negative"},
		{[]string{"serve", "--event-buffer-bytes", "0"}, exitUsage, "", "--event-buffer-bytes must be positive"},
		{[]string{"serve", "--langgraph-agent-inbox", "nosuch"}, exitUsage, "", `--langgraph-agent-inbox: the server hosts no graph "nosuch"; it hosts refund, two-step, `},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := inProcess(c.args...)
			if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errOut, c.errOut) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
		})
	}
}

func TestServeFlagMistakesAreOneLineWithAPointerToHelp(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--durability", "bogus"}, exitUsage, `--durability "bogus" is not known`},
		{[]string{"--webhook", "http://127.0.0.1:9/hook"}, exitUsage, "--webhook needs --webhook-secret"},
		{[]string{"--slack-user", "foo"}, exitUsage, `"foo" is not U...=NAME`},
		{[]string{"--log-format", "xml"}, exitUsage, `unknown log format "xml": use text or json`},
		{[]string{"--nope"}, exitUsage, "flag provided but not defined: -nope"},
		// A file that cannot be read is not a mistake in the command line.
		{[]string{"--notify", filepath.Join(dir, "nofile.json")}, exitFailed, "notify: read the notification config"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, _, errOut := inProcess(append([]string{"serve", "--db", db}, c.args...)...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code != c.code || len(lines) != 1 || !strings.Contains(errOut, c.want) || c.code == exitUsage && !strings.HasSuffix(lines[0], "(see interlude help)") {
				t.Fatalf("exit %d (want %d), want one line with %q\n%s", code, c.code, c.want, errOut)
			}
		})
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused command line created the database: %v", err)
	}
}

func TestTheServerFlagsHelpShowsItsOwnDefault(t *testing.T) {
	_, _, errOut := inProcess("resume", "-h")
	// The default printed after the --server text must read as the server's,
	// not as the token's.
	for _, line := range strings.Split(errOut, "\n") {
		if strings.Contains(line, "INTERLUDE_TOKEN") && strings.Contains(line, "(default") {
			t.Fatalf("the token's mention and a default share a line: %q", line)
		}
	}
	if !strings.Contains(errOut, "-server URL") || !strings.Contains(errOut, "The bearer token is read from $INTERLUDE_TOKEN.") {
		t.Fatalf("no --server flag in the help:\n%s", errOut)
	}
}

func TestVersionNamesTheModuleAndTheRevision(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "github.com/interludehq/interlude", Version: "v0.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	got := versionLine(info, true)
	want := "interlude v0.4.0 (revision 0123456789ab of 2026-11-30T10:00:00Z, with uncommitted changes), go1.26.1"
	if got != want {
		t.Fatalf("version line\n got %q\nwant %q", got, want)
	}
	if got := versionLine(&debug.BuildInfo{GoVersion: "go1.26.1"}, true); got != "interlude (devel), go1.26.1" {
		t.Fatalf("a build without VCS facts reads %q", got)
	}
}

func TestFlagsMayFollowPositionalArguments(t *testing.T) {
	fs := resumeCommand.newFlags(&env{stderr: &bytes.Buffer{}})
	id := fs.String("id", "", "")
	j := fs.Bool("json", false, "")
	pos, err := parseArgs(fs, []string{"t1", "--id", "int_1", "--json", "--", "-1"}, 2, 2)
	if err != nil || *id != "int_1" || !*j || len(pos) != 2 || pos[0] != "t1" || pos[1] != "-1" {
		t.Fatalf("%v %q %q %v", err, pos, *id, *j)
	}
}

func TestQuoteForTheShell(t *testing.T) {
	for in, want := range map[string]string{"demo-1a": "demo-1a", "/tmp/x y.db": `"/tmp/x y.db"`, "": `""`} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// waitFor polls cond every few milliseconds until it holds or the deadline
// passes; it reports whether it held.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHintsNameTheCommandThatWorksFromHere(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "cmd", "interlude"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, exe, dir, want string }{
		{"installed", "/home/sam/go/bin/interlude", repo, "interlude"},
		{"go run in the repository", "/tmp/go-build123/b001/exe/interlude", repo, "go run ./cmd/interlude"},
		{"go run elsewhere", "/tmp/go-build123/b001/exe/interlude", t.TempDir(), "go run github.com/interludehq/interlude/cmd/interlude@latest"},
	}
	for _, c := range cases {
		if got := invocation(c.exe, c.dir); got != c.want {
			t.Errorf("%s: invocation = %q, want %q", c.name, got, c.want)
		}
	}
}
