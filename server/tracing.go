package server

import (
	"net/http"

	"github.com/interludehq/interlude/host"
	"github.com/interludehq/interlude/internal/tracing"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"
)

// WithTracerProvider makes the server trace each request through tp (by
// default the global provider, once the program sets it with
// otel.SetTracerProvider), named for its method
// and route ("POST /v1/threads/{id}/resume"), as otelhttp does: a request that
// carries a W3C traceparent (read by the global propagator,
// otel.GetTextMapPropagator) continues its caller's trace, and the run it
// starts is a child of the request's span. A run that answers questions starts
// a trace of its own, linked to the request and to the pauses it answers (see
// graph.WithTracerProvider). The server's own host (without WithHost) traces
// its watches through tp as well; the graphs trace their runs through theirs.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// traced wraps the server's routes in a span per request. Without a provider
// of its own, the server traces requests once the program sets the global
// provider, and until then serves them as they come.
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

// hostTracing passes the server's tracer provider to the host it builds.
func hostTracing(c config) []host.Option {
	if c.tracerProvider == nil {
		return nil
	}
	return []host.Option{host.WithTracerProvider(c.tracerProvider)}
}
