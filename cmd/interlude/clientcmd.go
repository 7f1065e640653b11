package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/interludehq/interlude/client"
	"github.com/interludehq/interlude/internal/options"
)

const defaultServer = "http://127.0.0.1:8000"

// remote holds the flags every client command shares.
type remote struct {
	e      *env
	fs     *flag.FlagSet
	server *string
	json   *bool
}

func remoteFlags(fs *flag.FlagSet, e *env) *remote {
	def := e.getenv("INTERLUDE_SERVER")
	if def == "" {
		def = defaultServer
	}
	return &remote{
		e:      e,
		fs:     fs,
		server: fs.String("server", def, "the server's base `URL` ($INTERLUDE_SERVER sets the default)"),
		json:   fs.Bool("json", false, "print the server's answer as JSON"),
	}
}

// serverArg is what the commands printed as hints end with so that they talk to
// the same server: " --server URL" when --server was given as a flag, else ""
// (the environment that chose the server still does when the hint is run).
func (r *remote) serverArg() string {
	if !flagGiven(r.fs, "server") {
		return ""
	}
	return " --server " + line(quote(*r.server))
}

// client returns a client for --server, refusing a value that is not an http or
// https URL as a usage error rather than letting it fail as unreachable.
func (r *remote) client() (*client.Client, error) {
	if _, ok := options.HTTPURL(*r.server); !ok {
		return nil, usagef("--server %q is not a server URL; give one such as %s", *r.server, defaultServer)
	}
	var opts []client.Option
	if tok := r.e.getenv("INTERLUDE_TOKEN"); tok != "" {
		opts = append(opts, client.WithToken(tok))
	}
	return client.New(strings.TrimRight(*r.server, "/"), opts...)
}

// fail reports a request error; with --json a refusal is also printed on stdout
// as the server's error object, for scripts.
func (r *remote) fail(err error) error {
	var ce *client.Error
	if *r.json && errors.As(err, &ce) {
		body := map[string]any{"error": map[string]any{"code": ce.Code, "message": ce.Message, "details": rawOrNull(ce.Details), "status": ce.Status}}
		_ = writeJSON(r.e.stdout, body)
	}
	if errors.Is(err, client.ErrUnreachable) {
		return fmt.Errorf("%w (is \"%s serve\" running at %s?)", err, self, *r.server)
	}
	return err
}

// restated is a server refusal said again in the CLI's own terms, with a hint
// for its own line when there is one.
type restated struct {
	err  *client.Error
	say  string
	hint string
}

func (r *restated) Error() string {
	if r.hint == "" {
		return r.say
	}
	return r.say + "\n  " + r.hint
}
func (r *restated) Unwrap() error { return r.err }

// describeAPIError renders a server refusal with what helps to act on it.
func describeAPIError(err error, ce *client.Error) string {
	var b strings.Builder
	var rs *restated
	if errors.As(err, &rs) {
		fmt.Fprintf(&b, "refused by the server (%d %s): %s", ce.Status, ce.Code, line(rs.say))
		if rs.hint != "" {
			fmt.Fprintf(&b, "\n  %s", line(rs.hint))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "refused by the server (%d %s): %s", ce.Status, line(ce.Code), line(ce.Message))
	for _, v := range ce.Violations() {
		p := v.Path
		if p == "" {
			p = "(answer)"
		}
		fmt.Fprintf(&b, "\n  %s: %s", line(p), line(v.Message))
	}
	if more := ce.TotalViolations() - len(ce.Violations()); more > 0 {
		fmt.Fprintf(&b, "\n  and %d more", more)
	}
	// The ids an unknown_interrupt names are the ones not pending; its message
	// lists the pending ones.
	if ids := ce.Interrupts(); len(ids) > 0 && len(ce.Violations()) == 0 && ce.Code != "unknown_interrupt" {
		fmt.Fprintf(&b, "\n  interrupts: %s", line(strings.Join(ids, ", ")))
	}
	if p := ce.Path(); p != "" {
		fmt.Fprintf(&b, "\n  field: %s", line(p))
	}
	switch ce.Code {
	case "unauthenticated":
		b.WriteString("\n  set INTERLUDE_TOKEN to a token the server knows")
	case "ambiguous_resume":
		b.WriteString("\n  several questions are pending: choose one with --id (see interlude show THREAD)")
	}
	return b.String()
}

func rawOrNull(r json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(r)) == 0 {
		return json.RawMessage("null")
	}
	return r
}

func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// jsonArg checks that a command-line argument is one JSON value.
// example shows what a valid value looks like, quoted for the shell.
func jsonArg(name, s, example string) (json.RawMessage, error) {
	s = strings.TrimSpace(s)
	if !json.Valid([]byte(s)) {
		return nil, usagef("%s is not valid JSON: %q (quote it for the shell, e.g. %s; text needs JSON quotes: '\"yes\"')", name, s, example)
	}
	return json.RawMessage(s), nil
}
