package server

import (
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/interludehq/interlude/internal/tracing"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
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
// The span is the HTTP server span of OpenTelemetry's semantic conventions,
// as otelhttp records it, made with the API alone at half otelhttp's cost.
func traced(next http.Handler, tp trace.TracerProvider) http.Handler {
	return &tracedHandler{next: next, tracer: tracing.Tracer(tp), global: tp == nil}
}

type tracedHandler struct {
	next   http.Handler
	tracer trace.Tracer
	global bool // tracer is the global provider's: no span until it is set
	// names are the span names of the routes served so far, by method and
	// pattern, a map replaced (never written to) as routes are added
	names atomic.Pointer[map[routeKey]string]
}

// routeKey is a route's method and pattern.
type routeKey struct{ method, pattern string }

// name is spanName(r), made once for each method and route.
func (h *tracedHandler) name(r *http.Request) string {
	if _, known := methods[r.Method]; !known || r.Pattern == "" {
		return spanName(r)
	}
	k := routeKey{r.Method, r.Pattern}
	for {
		old := h.names.Load()
		var cur map[routeKey]string
		if old != nil {
			cur = *old
		}
		if name, ok := cur[k]; ok {
			return name
		}
		name := spanName(r)
		names := maps.Clone(cur)
		if names == nil {
			names = map[routeKey]string{}
		}
		names[k] = name
		if h.names.CompareAndSwap(old, &names) {
			return name
		}
	}
}

func (h *tracedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.global && !tracing.GlobalSet() {
		h.next.ServeHTTP(w, r)
		return
	}
	ctx := otel.GetTextMapPropagator().Extract(r.Context(), headerCarrier(r.Header))
	// The writer holds the attributes' memory (the SDK copies them), and
	// goes back to its pool once the request is served.
	tw := traceWriters.Get().(*traceWriter)
	*tw = traceWriter{ResponseWriter: w}
	defer freeTraceWriter(tw)
	tw.opts[0], tw.opts[1] = serverKind, trace.WithAttributes(samplingAttrs(tw.attrs[:0], r)...)
	ctx, span := h.tracer.Start(ctx, spanName(r), tw.opts[:]...)
	defer span.End()
	if !span.IsRecording() {
		h.next.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	rc := r.WithContext(ctx)
	h.next.ServeHTTP(tw, rc)
	if tw.status == 0 {
		tw.status = http.StatusOK // the handler wrote nothing: net/http answers 200
	}
	end := peerAttrs(tw.attrs[:0], r)
	if route := route(rc.Pattern); route != "" {
		span.SetName(h.name(rc))
		end = append(end, semconv.HTTPRoute(route))
	}
	if tw.bytes > 0 {
		end = append(end, semconv.HTTPResponseBodySize(int(tw.bytes)))
	}
	end = append(end, semconv.HTTPResponseStatusCode(tw.status))
	span.SetAttributes(end...)
	if tw.status >= 500 {
		span.SetStatus(codes.Error, "")
	}
}

// headerCarrier is propagation.HeaderCarrier with the header names of W3C
// trace context and baggage, which the propagators ask for in lower case,
// looked up in their canonical form as given: http.Header.Get would make that
// form anew, an allocation for each name on every request.
type headerCarrier http.Header

// canonicalKey is key in its canonical header form, made once for the names
// the standard propagators use.
func canonicalKey(key string) string {
	switch key {
	case "traceparent":
		return "Traceparent"
	case "tracestate":
		return "Tracestate"
	case "baggage":
		return "Baggage"
	}
	return http.CanonicalHeaderKey(key)
}

func (c headerCarrier) Get(key string) string { return header(http.Header(c), canonicalKey(key)) }

func (c headerCarrier) Values(key string) []string { return c[canonicalKey(key)] }

func (c headerCarrier) Set(key, value string) { http.Header(c).Set(canonicalKey(key), value) }

func (c headerCarrier) Keys() []string { return propagation.HeaderCarrier(c).Keys() }

// samplingAttrs appends to attrs the request's attributes that HTTP's
// semantic conventions list as those a sampler may decide by, given as the
// span starts.
func samplingAttrs(attrs []attribute.KeyValue, r *http.Request) []attribute.KeyValue {
	method, known := methods[r.Method]
	if !known {
		method = semconv.HTTPRequestMethodOther
	}
	attrs = append(attrs, method)
	if !known {
		attrs = append(attrs, semconv.HTTPRequestMethodOriginal(r.Method))
	}
	if r.URL != nil && r.URL.Path != "" {
		attrs = append(attrs, semconv.URLPath(r.URL.Path))
	}
	host, port := splitHostPort(r.Host)
	attrs = append(attrs, semconv.ServerAddress(host))
	if r.TLS != nil {
		attrs = append(attrs, semconv.URLScheme("https"))
		if port > 0 && port != 443 {
			attrs = append(attrs, semconv.ServerPort(port))
		}
	} else {
		attrs = append(attrs, semconv.URLScheme("http"))
		if port > 0 && port != 80 {
			attrs = append(attrs, semconv.ServerPort(port))
		}
	}
	if ua := header(r.Header, "User-Agent"); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	// client.address is the client behind the proxies when a proxy names it;
	// the immediate peer is network.peer.address already, not repeated.
	client := header(r.Header, "X-Forwarded-For")
	if i := strings.IndexByte(client, ','); i >= 0 {
		client = client[:i]
	}
	if client = strings.TrimSpace(client); client != "" {
		attrs = append(attrs, semconv.ClientAddress(client))
	}
	return attrs
}

// peerAttrs appends to attrs the request's other attributes, given with the
// answer's as the span ends: one call then copies them all.
func peerAttrs(attrs []attribute.KeyValue, r *http.Request) []attribute.KeyValue {
	peer, peerPort := splitHostPort(r.RemoteAddr)
	if peer != "" {
		attrs = append(attrs, semconv.NetworkPeerAddress(peer))
		if peerPort > 0 {
			attrs = append(attrs, semconv.NetworkPeerPort(peerPort))
		}
	}
	if name, version, _ := strings.Cut(r.Proto, "/"); version != "" {
		if name != "HTTP" {
			attrs = append(attrs, semconv.NetworkProtocolName(strings.ToLower(name)))
		}
		attrs = append(attrs, semconv.NetworkProtocolVersion(version))
	}
	if r.ContentLength > 0 {
		attrs = append(attrs, semconv.HTTPRequestBodySize(int(r.ContentLength)))
	}
	return attrs
}

// header is the first value of the header key, given in its canonical form,
// read without canonicalising key again as http.Header.Get does.
func header(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// methods are the http.request.method attributes of the methods HTTP
// defines; any other is "_OTHER".
var methods = map[string]attribute.KeyValue{
	http.MethodConnect: semconv.HTTPRequestMethodConnect,
	http.MethodDelete:  semconv.HTTPRequestMethodDelete,
	http.MethodGet:     semconv.HTTPRequestMethodGet,
	http.MethodHead:    semconv.HTTPRequestMethodHead,
	http.MethodOptions: semconv.HTTPRequestMethodOptions,
	http.MethodPatch:   semconv.HTTPRequestMethodPatch,
	http.MethodPost:    semconv.HTTPRequestMethodPost,
	http.MethodPut:     semconv.HTTPRequestMethodPut,
	http.MethodTrace:   semconv.HTTPRequestMethodTrace,
}

// splitHostPort splits "host:port", "[v6]:port", or a bare host; port is
// -1 when there is none.
func splitHostPort(hostport string) (string, int) {
	if !strings.Contains(hostport, ":") || (strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]")) {
		return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), -1
	}
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return host, -1
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return host, -1
	}
	return host, int(port)
}

// route is the path of a routed request's pattern ("/v1/threads/{id}"), or
// "" before routing.
func route(pattern string) string {
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		return pattern[i:]
	}
	return ""
}

// spanName names a request's span for its method and route, once routed.
func spanName(r *http.Request) string {
	method := r.Method
	if _, ok := methods[method]; !ok {
		method = "HTTP"
	}
	if r.Pattern == "" {
		return method
	}
	rt := route(r.Pattern)
	if rt == "" {
		return method
	}
	// A pattern of the method and a path is the name as it is.
	if p := r.Pattern; len(p) == len(method)+1+len(rt) && p[len(method)] == ' ' && p[:len(method)] == method {
		return p
	}
	return method + " " + rt
}

// traceWriter notes the status and the size of a response.
type traceWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	// attrs is memory for the span's attributes, those it starts with
	// (up to 8) and then those it ends with (up to 8); opts for its options.
	attrs [8]attribute.KeyValue
	opts  [2]trace.SpanStartOption
}

// serverKind is the option of a request's span kind, made once.
var serverKind = trace.WithSpanKind(trace.SpanKindServer)

var traceWriters = sync.Pool{New: func() any { return new(traceWriter) }}

// freeTraceWriter gives w back to the pool, letting go of what it holds.
func freeTraceWriter(w *traceWriter) {
	*w = traceWriter{}
	traceWriters.Put(w)
}

func (w *traceWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *traceWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer (to flush,
// set deadlines).
func (w *traceWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
