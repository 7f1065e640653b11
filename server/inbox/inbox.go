// Package inbox is Interlude's web inbox: the page where people see the questions
// that paused threads are waiting on, and answer them. server.New serves it at
// /inbox/; it is plain HTML, CSS and JavaScript modules embedded in the binary,
// with no build step and nothing fetched from elsewhere, so it works offline.
//
// # What it does
//
// The inbox lists the pending questions of every interrupted thread
// (GET /v1/threads?status=interrupted), newest first, filterable by graph and
// reason, with their age and a count. It keeps the list live from the server's
// feed of every thread's events (GET /v1/events): it subscribes first, then reads
// the listing, and reads it again whenever a thread pauses or a run ends, so new
// questions appear and answered ones leave without a reload. Without an event hub
// on the server it reads the listing every 15 seconds instead. Threads paused at a
// breakpoint (graph.InterruptBefore, InterruptAfter) ask no question, so they are
// not listed; they are continued over the API.
//
// A question's page shows its message, reason, graph, node and thread, the value
// it carries (scalars as text, nested JSON folded, amounts of money with their
// cents: 89.50), the conversation for agent threads (each tool result a turn of
// its own, named after its tool; the model's thinking folded under "Thinking",
// redacted thinking left out), and the thread's history: the earlier questions,
// with who answered them, when and how (GET /v1/threads/{id}/history). Once a
// tool approval is answered, its arguments are shown as they ran; after an
// edit, field by field beside the model's proposal, the changed ones marked.
// The history is read a page at a time: the newest page, older ones on "Show
// earlier history", and as far back as an answered question opened by its
// address. The page stays open after the question is answered, then showing
// the answer in one confirmation.
//
// On a wide screen the list and the question sit side by side, each scrolling
// on its own, so the list stays at the top beside a long question; on a narrow
// one they take turns.
//
// The answer form is built from the question's response schema: a boolean (or an
// object whose only field is a boolean) becomes Approve and Decline buttons;
// enums become radio buttons (or a select beyond four choices); strings, numbers
// and integers become typed inputs carrying their limits (minLength, maxLength,
// minimum, maximum, exclusive bounds, multipleOf, pattern); booleans among other
// fields become checkboxes; nested objects become fieldsets and arrays lists that
// grow and shrink; titles become labels, descriptions help text, defaults the
// initial values, and required fields are marked. A schema the form cannot
// express (oneOf, $ref and the like), or no schema at all, gets a JSON text area.
// The page checks what it can before sending (HTML constraint validation, shown
// only as the page's own message at the field, marked aria-invalid); what the
// server refuses (422 invalid_response, whose violations carry JSON Pointers such as
// /arguments/amount) is shown next to the field concerned, and the form keeps
// everything typed.
//
// A tool approval (reason tool_approval, as the agent's approval policies ask)
// offers the four decisions: approve (optionally for the rest of the run), edit
// the arguments (a form from the tool's input schema, filled with the model's
// arguments), reject with a reason (POST /v1/threads/{id}/reject, which the model
// sees as the call's error), or respond in the tool's place. Every other question
// can also be rejected with a reason. Cancelling (POST /v1/threads/{id}/cancel)
// is always offered. Each choice says in a line what it does, and a rejection
// is sent only with its reason.
//
// # Signing in
//
// On a server with tokens the inbox asks for one and keeps it in the tab's
// sessionStorage only (closing the tab signs out). GET /v1/me tells it the
// token's roles: a token without the approve (or admin) role sees the questions
// but no answer buttons, and the API would refuse its answers anyway. On a server
// without tokens (loopback only) no sign-in is needed.
//
// # Serving
//
// Handler serves the files under /inbox/, the path server.New mounts it at, with
// a strict Content-Security-Policy (scripts, styles and connections to the same
// origin only), ETags and revalidation on every load, so a new binary's inbox is
// picked up at once.
package inbox

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// Prefix is the path the inbox is served under.
const Prefix = "/inbox/"

// csp allows only the inbox's own files and API calls to the same origin.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

type file struct {
	name  string
	ctype string
	etag  string
	data  []byte
}

type handler map[string]*file // by path below Prefix; "" is index.html

// Handler returns the web inbox: an http.Handler serving the inbox's files at
// the paths under /inbox/ (GET and HEAD). The page calls the API at /v1/ on the
// same origin, relative to its own location, so a server mounted below a prefix
// (/prefix/inbox/ with the API at /prefix/v1/) works too as long as the request
// path this handler sees starts with /inbox/.
func Handler() http.Handler {
	h := handler{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		ctype := mime.TypeByExtension(path.Ext(name))
		switch path.Ext(name) {
		case ".js":
			ctype = "text/javascript; charset=utf-8"
		case ".svg":
			ctype = "image/svg+xml"
		}
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		sum := sha256.Sum256(data)
		f := &file{name: name, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, data: data}
		h[name] = f
		if name == "index.html" {
			h[""] = f
		}
		return nil
	})
	if err != nil {
		panic("inbox: the embedded files cannot be read: " + err.Error())
	}
	return h
}

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the inbox takes GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, Prefix)
	f := h[name]
	if !ok || f == nil {
		http.Error(w, "no such file in the inbox; open "+Prefix, http.StatusNotFound)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", f.ctype)
	hd.Set("ETag", f.etag)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	if strings.HasPrefix(f.ctype, "text/html") {
		hd.Set("Content-Security-Policy", csp)
	}
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.data))
}

// Off returns the page served at /inbox/ when the web inbox is turned off: it
// points at the API routes that list and answer the waiting threads.
func Off() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Interlude inbox</title></head>
<body><h1>Interlude inbox</h1>
<p>The web inbox is turned off on this server. The threads waiting for answers are listed by
<code>GET /v1/threads?status=interrupted</code>, and answered with
<code>POST /v1/threads/{id}/resume</code>, <code>/reject</code> or <code>/cancel</code>.</p>
</body></html>
`)
	})
}
