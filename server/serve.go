package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ErrInsecureListen is returned by Serve and ListenAndServe when asked to listen on
// an address other than loopback without tokens configured.
var ErrInsecureListen = errors.New("server: refusing to listen on a non-loopback address without API tokens; configure tokens (WithTokens) or listen on 127.0.0.1 or [::1]")

// CheckListenAddr refuses addr (host:port) without tokens unless its host is
// a loopback address or "localhost" (other host names are checked once bound).
func CheckListenAddr(addr string, tokensConfigured bool) error {
	if tokensConfigured {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("server: listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if host == "" || (ip != nil && !ip.IsLoopback()) {
		return fmt.Errorf("%w (asked for %q)", ErrInsecureListen, addr)
	}
	return nil
}

func loopback(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true // reachable from this machine only
	}
	return false
}

// ListenAndServe listens on addr and serves h until ctx ends; see Serve.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, tokensConfigured bool) error {
	if err := CheckListenAddr(addr, tokensConfigured); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return Serve(ctx, ln, h, tokensConfigured)
}

// Timeouts bound how long a client may take over each part of an exchange,
// and a shutdown. A zero field takes its default; a negative one no bound.
type Timeouts struct {
	ReadHeader time.Duration // reading a request's headers (10s)
	Read       time.Duration // reading its body (30s)
	Write      time.Duration // writing an answer once ready, or each event of a stream (30s)
	Idle       time.Duration // a kept-alive connection's wait for the next request (2m)
	// Shutdown bounds a graceful shutdown (15s); past it, the runs still going
	// are cancelled, to continue later from their last checkpoint.
	Shutdown time.Duration
}

// withDefaults fills the zero fields with defaults and turns negative ones into 0.
func (t Timeouts) withDefaults() Timeouts {
	pick := func(d *time.Duration, def time.Duration) {
		switch {
		case *d == 0:
			*d = def
		case *d < 0:
			*d = 0
		}
	}
	pick(&t.ReadHeader, 10*time.Second)
	pick(&t.Read, 30*time.Second)
	pick(&t.Write, 30*time.Second)
	pick(&t.Idle, 2*time.Minute)
	pick(&t.Shutdown, 15*time.Second)
	return t
}

// deadlines bounds reading the request's body (if it has one) and writing its answer.
func (s *Server) deadlines(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	if t := s.timeouts.Read; t > 0 && r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		rc.SetReadDeadline(time.Now().Add(t))
	}
	if t := s.timeouts.Write; t > 0 {
		rc.SetWriteDeadline(time.Now().Add(t))
	}
}

// bodyRead lifts the read deadline once the body is read, so that a long run
// is not cut off.
func (s *Server) bodyRead(w http.ResponseWriter) {
	if s.timeouts.Read > 0 {
		http.NewResponseController(w).SetReadDeadline(time.Time{})
	}
}

// writeDeadline gives the answer, ready now, the write timeout.
func (s *Server) writeDeadline(w http.ResponseWriter) {
	if t := s.timeouts.Write; t > 0 {
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(t))
	}
}

func (s *Server) serveTimeouts() Timeouts { return s.timeouts }

// abandon cancels the runs a shutdown could not wait for and waits up to
// grace for their requests to end.
func (s *Server) abandon(grace time.Duration) bool {
	s.log.Warn("the shutdown deadline passed: the connections left were closed and the runs still going cancelled; their threads continue from their last checkpoint", "deadline", s.timeouts.Shutdown.String())
	s.stopRuns()
	done := make(chan struct{})
	go func() {
		s.active.Wait()
		close(done)
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// abandonGrace is how long Serve waits past the shutdown deadline.
const abandonGrace = 2 * time.Second

// Serve serves h on ln until ctx ends, then shuts down gracefully: it ends
// live event streams (h's Drain method), waits for the running requests and
// their runs up to the shutdown timeout, then closes the connections left and
// cancels their runs (a *Server's). Without tokens it refuses a listener that
// is not on a loopback address (ErrInsecureListen).
func Serve(ctx context.Context, ln net.Listener, h http.Handler, tokensConfigured bool) error {
	if !tokensConfigured && !loopback(ln.Addr()) {
		ln.Close()
		return fmt.Errorf("%w (listening on %s)", ErrInsecureListen, ln.Addr())
	}
	t := Timeouts{}.withDefaults()
	if ts, ok := h.(interface{ serveTimeouts() Timeouts }); ok {
		t = ts.serveTimeouts()
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: t.ReadHeader, IdleTimeout: t.Idle}
	if d, ok := h.(interface{ Drain() }); ok {
		hs.RegisterOnShutdown(d.Drain)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	sctx := context.Background()
	if t.Shutdown > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(sctx, t.Shutdown)
		defer cancel()
	}
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Past the deadline: cut the connections left and give up their runs.
		err = hs.Close()
		if a, ok := h.(interface{ abandon(time.Duration) bool }); ok {
			a.abandon(abandonGrace)
		}
	}
	<-errc
	return err
}

// ListenAndServe serves the server on addr until ctx ends; see Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	return ListenAndServe(ctx, addr, s, !s.keys.Open())
}

// Serve serves the server on ln until ctx ends; see the package function Serve.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return Serve(ctx, ln, s, !s.keys.Open())
}
