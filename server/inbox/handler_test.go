package inbox_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/interludehq/interlude/server/inbox"
)

func get(t *testing.T, h http.Handler, method, path string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, "http://localhost"+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestHandlerServesTheFilesWithTheirTypesAPolicyAndETags(t *testing.T) {
	h := inbox.Handler()
	for path, ctype := range map[string]string{
		"/inbox/":           "text/html; charset=utf-8",
		"/inbox/index.html": "text/html; charset=utf-8",
		"/inbox/app.js":     "text/javascript; charset=utf-8",
		"/inbox/form.js":    "text/javascript; charset=utf-8",
		"/inbox/style.css":  "text/css; charset=utf-8",
		"/inbox/icon.svg":   "image/svg+xml",
	} {
		resp := get(t, h, http.MethodGet, path)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != ctype || len(body) == 0 {
			t.Errorf("%s: %d %q (%d bytes), want 200 %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body), ctype)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: headers %v", path, resp.Header)
		}
		etag := resp.Header.Get("ETag")
		if again := get(t, h, http.MethodGet, path, "If-None-Match", etag); etag == "" || again.StatusCode != http.StatusNotModified {
			t.Errorf("%s: revalidating with ETag %q answered %d", path, etag, again.StatusCode)
		}
	}
	page := get(t, h, http.MethodGet, "/inbox/")
	csp := page.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the page's policy %q lacks %q", csp, want)
		}
	}
	if head := get(t, h, http.MethodHead, "/inbox/app.js"); head.StatusCode != http.StatusOK {
		t.Errorf("HEAD: %d", head.StatusCode)
	}
	for _, path := range []string{"/inbox/nope.js", "/inbox/static/app.js", "/other/app.js", "/inbox/../inbox/app.js"} {
		if resp := get(t, h, http.MethodGet, path); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, resp.StatusCode)
		}
	}
	if resp := get(t, h, http.MethodPost, "/inbox/"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
}

// The inbox works offline: nothing in it refers to another origin, and it has no
// inline script or style, which the policy would block.
func TestTheFilesReferToNothingElsewhereAndHaveNothingInline(t *testing.T) {
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|@import|url\(\s*['"]?(https?:|//)`)
	err := fs.WalkDir(os.DirFS("static"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile("static/" + p)
		if err != nil {
			return err
		}
		s := string(data)
		if p == "icon.svg" {
			s = strings.Replace(s, `xmlns="http://www.w3.org/2000/svg"`, "", 1)
		}
		if m := external.FindString(s); m != "" {
			t.Errorf("%s refers to another origin: %q", p, m)
		}
		if strings.HasSuffix(p, ".html") {
			for _, bad := range []string{"<script>", "<style", " style=", " onclick=", " onload="} {
				if strings.Contains(s, bad) {
					t.Errorf("%s has inline %q, which the policy blocks", p, bad)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
