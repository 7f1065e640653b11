package server

import (
	"net/http"

	"github.com/interludehq/interlude/internal/tracing"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"
)

// WithTracerProvider traces each request through tp (by default the global
// provider, once set), named for its method and route and continuing a W3C
// traceparent; the server's own host traces its watches through tp too.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// traced wraps the routes in a span per request, through the global provider
// once it is set if tp is nil.
func traced(next http.Handler, tp trace.TracerProvider) http.Handler {
	opts := []otelhttp.Option{otelhttp.WithSpanNameFormatter(spanName)}
	if tp != nil {
		return otelhttp.NewHandler(next, "interlude", append(opts, otelhttp.WithTracerProvider(tp))...)
	}
	h := otelhttp.NewHandler(next, "interlude", opts...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tracing.GlobalSet() {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// spanName names a request's span for its method and route, once routed.
func spanName(_ string, r *http.Request) string {
	if r.Pattern == "" {
		return r.Method
	}
	return r.Method + " " + r.Pattern
}
