// Command interlude is Interlude's command-line tool: it serves the HTTP API over
// the built-in graphs, runs the support-agent demo in the terminal, and talks to a
// server to list threads, show them, start runs and answer their questions.
//
//	interlude serve    [--addr 127.0.0.1:8000] [--db interlude.db] [--tokens FILE] [--body-limit N]
//	interlude demo     [--db interlude-demo.db] [--thread ID] [--message TEXT]
//	interlude graphs   [GRAPH]
//	interlude threads  [--status interrupted] [--graph G]
//	interlude show     THREAD
//	interlude run      GRAPH [INPUT_JSON] [--thread ID] [--message TEXT]
//	interlude resume   THREAD [--id ID] VALUE_JSON
//	interlude reject   THREAD [--id ID] [--message TEXT]
//	interlude cancel   THREAD [--id ID]
//	interlude version
//	interlude help     [COMMAND]
//
// The client commands (graphs, threads, show, run, resume, reject, cancel) talk to the
// server at --server (default $INTERLUDE_SERVER, else http://127.0.0.1:8000) with
// the bearer token in $INTERLUDE_TOKEN. They print plain text for people, or with
// --json the server's answer as JSON for scripts.
//
// Exit codes: 0 when the command did what was asked (a run that pauses for a
// question counts), 1 for other failures (including a run that ended failed), 2
// for a usage error, 3 when the server refused the request (any API error), 4 when
// the server could not be reached.
//
// Flags may come before or after the positional arguments; "--" ends the flags
// (so that a JSON value such as -1 is not read as one).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/internal/termtext"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitRefused     = 3
	exitUnreachable = 4
)

// env is what a command runs with: its streams and environment.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// self is how the person runs this tool, for the commands that hints print. main
// sets it once, before any command runs.
var self = "interlude"

// invocation returns how the person ran this tool: "interlude", or the go run
// command when the binary is a temporary one that go run built (hints naming
// "interlude" would not work then, since it is not installed).
func invocation(exe, dir string) string {
	if !strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return "interlude"
	}
	if fi, err := os.Stat(filepath.Join(dir, "cmd", "interlude")); err == nil && fi.IsDir() {
		return "go run ./cmd/interlude"
	}
	return "go run github.com/interludehq/interlude/cmd/interlude@latest"
}

// command is one subcommand.
type command struct {
	name    string
	args    string // the synopsis after the name
	summary string
	about   string // more explanation for the command's help
	// minArgs and maxArgs bound the positional arguments (maxArgs < 0: no bound).
	minArgs, maxArgs int
	// setup defines the command's flags on fs and returns the function that runs
	// the command with the positional arguments, once the flags are parsed.
	setup func(fs *flag.FlagSet, e *env) func(args []string) error
}

// exec parses args and runs the command.
func (c *command) exec(e *env, args []string) error {
	if c.setup == nil {
		return runHelp(e, args)
	}
	fs := c.newFlags(e)
	do := c.setup(fs, e)
	pos, err := parseArgs(fs, args, c.minArgs, c.maxArgs)
	if err != nil {
		return err
	}
	return do(pos)
}

var commands []*command

func init() {
	commands = []*command{
		serveCommand, demoCommand,
		graphsCommand, threadsCommand, showCommand, runCommand, resumeCommand, rejectCommand, cancelCommand, notificationsCommand,
		versionCommand,
		{name: "help", args: "[COMMAND]", summary: "show help for the tool or a command"},
	}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func main() {
	// Signals keep their default effect (ending the process) except in serve, which
	// shuts down gracefully. A demo stopped at a question loses nothing: the pause
	// is committed before the question is asked.
	exe, _ := os.Executable()
	dir, _ := os.Getwd()
	self = invocation(exe, dir)
	os.Exit(run(&env{ctx: context.Background(), stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:]))
}

// run runs the command line args and returns the exit code.
func run(e *env, args []string) int {
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		usage(e.stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(e.stderr, "interlude: unknown command %q\n\n", name)
		usage(e.stderr)
		return exitUsage
	}
	return exitCode(e, c.exec(e, args[1:]))
}

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// runFailed reports a run that ended with status failed: the request was
// accepted, the work was not done.
type runFailed struct{ msg string }

func (r *runFailed) Error() string { return r.msg }

// printed marks an error already shown to the person.
type printed struct{ err error }

func (p *printed) Error() string { return p.err.Error() }
func (p *printed) Unwrap() error { return p.err }

// exitCode prints err and maps it to an exit code.
func exitCode(e *env, err error) int {
	var (
		ue  *usageError
		ce  *client.Error
		rf  *runFailed
		pre *printed
	)
	quiet := errors.As(err, &pre)
	say := func(format string, args ...any) {
		if !quiet {
			// Errors can carry text from a thread or the server.
			fmt.Fprintf(e.stderr, "interlude: %s\n", termtext.Block(fmt.Sprintf(format, args...)))
		}
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		say("%s (see interlude help)", ue.msg)
		return exitUsage
	case errors.Is(err, client.ErrThreadID):
		say("%s (%s threads lists them)", strings.TrimPrefix(err.Error(), "client: "), self)
		return exitUsage
	case errors.Is(err, client.ErrUnreachable):
		say("%v", err)
		return exitUnreachable
	case errors.As(err, &ce):
		say("%s", describeAPIError(err, ce))
		return exitRefused
	case errors.As(err, &rf):
		say("%s", rf.msg)
		return exitFailed
	}
	// Interlude's own errors begin with "interlude: ", as this line does.
	say("%s", strings.TrimPrefix(err.Error(), "interlude: "))
	return exitFailed
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Interlude: durable human-in-the-loop runs for AI agents.\n\nUsage:\n")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  interlude %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(w, `
Run "interlude help COMMAND" (or "interlude COMMAND -h") for a command's flags.

The client commands (graphs, threads, show, run, resume, reject, cancel) talk to the
server at --server (default $INTERLUDE_SERVER, else %s) with the
bearer token in $INTERLUDE_TOKEN, and print JSON with --json.

Exit codes: 0 done, 1 failed (including a run that failed), 2 usage error,
3 refused by the server, 4 server unreachable.
`, defaultServer)
}

func runHelp(e *env, args []string) error {
	if len(args) == 0 {
		usage(e.stdout)
		return nil
	}
	if len(args) > 1 {
		return usagef("help takes at most one command")
	}
	c := lookup(args[0])
	if c == nil {
		return usagef("unknown command %q", args[0])
	}
	if c.name == "help" {
		usage(e.stdout)
		return nil
	}
	fs := c.newFlags(e)
	c.setup(fs, e)
	fs.SetOutput(e.stdout)
	fs.Usage()
	return nil
}

// newFlags returns the command's flag set, with its usage text.
func (c *command) newFlags(e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: interlude %s %s\n\n%s.\n", c.name, c.args, upperFirst(c.summary))
		if c.about != "" {
			fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.about))
		}
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintf(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
		if fs.Lookup("server") != nil {
			fmt.Fprintf(w, "\nThe bearer token is read from $INTERLUDE_TOKEN.\n")
		}
	}
	return fs
}

// flagGiven reports whether the flag was given on the command line, even
// with its default value.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// parseArgs parses flags anywhere among the arguments and returns the positional
// ones, checking there are between min and max of them (max < 0: no limit).
func parseArgs(fs *flag.FlagSet, args []string, min, max int) ([]string, error) {
	var pos []string
	// A bad flag is said in one line, not followed by the command's help.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	for {
		if err := fs.Parse(args); err != nil {
			fs.SetOutput(out)
			if errors.Is(err, flag.ErrHelp) {
				fs.Usage()
				return nil, err
			}
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	fs.SetOutput(out)
	switch {
	case len(pos) < min:
		return nil, usageOf(fs, "missing arguments")
	case max >= 0 && len(pos) > max:
		return nil, usageOf(fs, fmt.Sprintf("too many arguments: %q", pos[max:]))
	}
	return pos, nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// usageOf prints msg and the command's usage, and returns the usage error.
func usageOf(fs *flag.FlagSet, msg string) error {
	fmt.Fprintf(fs.Output(), "interlude %s: %s\n", fs.Name(), msg)
	fs.Usage()
	return &printed{usagef("%s: %s", fs.Name(), msg)}
}
