// Package wiretest helps test model providers against local HTTP servers that
// replay canned responses (JSON bodies, SSE streams) and record what the
// client sent, and compares recorded request bodies with golden files.
//
// Every provider's fixtures answer the same canned conversation, which starts
// with FirstRequest; a provider describes its side of it with a Conversation,
// whose checks (RoundTrip, RunAgent) are shared.
//
// Run the tests with -update to rewrite the golden files from what the
// client sends.
package wiretest

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden request files in testdata/")

// Reply is one canned HTTP response.
type Reply struct {
	Status int         // HTTP status code
	Header http.Header // response headers
	Body   []byte      // response body, sent as is
}

// File returns a reply with the given status whose body is the content of
// testdata/name. Files ending in .sse are sent as text/event-stream, others
// as application/json. Extra headers come in key, value pairs.
func File(t testing.TB, status int, name string, header ...string) Reply {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	h := http.Header{}
	if filepath.Ext(name) == ".sse" {
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
	} else {
		h.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return Reply{Status: status, Header: h, Body: body}
}

// Request is a request the server received.
type Request struct {
	Method string      // HTTP method
	Path   string      // URL path
	Header http.Header // request headers
	Body   []byte      // request body
}

// Server answers the n-th request with the n-th reply, and every request past
// the last reply with the last reply again. It records every request.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// NewServer starts a server replaying replies; it is closed when the test
// ends.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	if len(replies) == 0 {
		t.Fatal("wiretest.NewServer: no replies")
	}
	s := &Server{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	reply := s.replies[min(n, len(s.replies)-1)]
	s.mu.Unlock()

	for k, v := range reply.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(reply.Status)
	_, _ = w.Write(reply.Body)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Hits returns how many requests the server received.
func (s *Server) Hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Canonical returns the JSON document data indented with two spaces and with
// object keys sorted, so that equal documents compare equal as text.
func Canonical(t testing.TB, data []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// Golden compares the JSON document got with testdata/name, ignoring
// formatting and key order. With -update it writes got there instead.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	canon := Canonical(t, got)
	if *update {
		if err := os.WriteFile(path, canon, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(canon, Canonical(t, want)) {
		t.Errorf("request body differs from %s (run with -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, canon, want)
	}
}
