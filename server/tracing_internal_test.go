package server

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/propagation"
)

func TestARequestsSpanNameIsItsMethodAndRouteWhateverItsPatternsForm(t *testing.T) {
	for _, c := range []struct{ method, pattern, want string }{
		{"POST", "POST /v1/graph/invoke", "POST /v1/graph/invoke"},
		{"GET", "/v1/graphs", "GET /v1/graphs"},
		{"HEAD", "GET /v1/graphs", "HEAD /v1/graphs"},
		{"POST", "POST example.com/v1/threads/{id}", "POST /v1/threads/{id}"},
		{"GE", "GET /v1/graphs", "HTTP /v1/graphs"},
		{"BREW", "", "HTTP"},
		{"GET", "", "GET"},
	} {
		r := httptest.NewRequest(c.method, "/", nil)
		r.Pattern = c.pattern
		if got := spanName(r); got != c.want {
			t.Errorf("%s with pattern %q: span named %q, want %q", c.method, c.pattern, got, c.want)
		}
		// The name the handler gives a routed span, found or made once.
		h := &tracedHandler{}
		for range 2 {
			if got := h.name(r); got != c.want {
				t.Errorf("%s with pattern %q: handler named the span %q, want %q", c.method, c.pattern, got, c.want)
			}
		}
	}
}

func TestTheTraceHeadersAreReadAsHTTPHeadersAreWithoutAllocating(t *testing.T) {
	h := http.Header{}
	h.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.Set("Tracestate", "vendor=1")
	h.Add("Baggage", "user=ann")
	h.Add("Baggage", "tenant=acme")
	h.Set("X-Other", "kept")
	c := headerCarrier(h)
	for _, key := range []string{"traceparent", "tracestate", "baggage", "Baggage", "x-other", "missing"} {
		if got, want := c.Get(key), h.Get(key); got != want {
			t.Errorf("Get(%q) = %q, want %q as http.Header reads it", key, got, want)
		}
		if got, want := c.Values(key), h.Values(key); !slices.Equal(got, want) {
			t.Errorf("Values(%q) = %q, want %q as http.Header reads it", key, got, want)
		}
	}
	if got, want := c.Keys(), propagation.HeaderCarrier(h).Keys(); !sameKeys(got, want) {
		t.Errorf("Keys() = %q, want %q", got, want)
	}
	c.Set("tracestate", "vendor=2")
	if got := h.Get("Tracestate"); got != "vendor=2" {
		t.Errorf("Set(tracestate) should set the Tracestate header, got %q", got)
	}
	if n := testing.AllocsPerRun(100, func() {
		c.Get("traceparent")
		c.Get("tracestate")
		c.Values("baggage")
	}); n != 0 {
		t.Errorf("reading the trace headers allocated %v times a request", n)
	}
}

// sameKeys reports whether a and b hold the same keys in any order.
func sameKeys(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
