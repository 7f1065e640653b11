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

// CheckListenAddr refuses addr (host:port) unless tokens are configured or its
// host is a loopback address or "localhost". An empty host means every interface
// and is refused without tokens. A host name other than localhost is checked once
// listening, on the address actually bound.
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

// Serve serves h on ln until ctx ends, then shuts down gracefully: it stops
// accepting connections, ends live event streams (if h has a Drain method, as
// *Server does), waits for the running requests, and with them their runs, to
// finish, and returns nil. Without tokens configured it refuses (closing ln) a
// listener that is not on a loopback address, with an error matching
// ErrInsecureListen.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, tokensConfigured bool) error {
	if !tokensConfigured && !loopback(ln.Addr()) {
		ln.Close()
		return fmt.Errorf("%w (listening on %s)", ErrInsecureListen, ln.Addr())
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
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
	err := hs.Shutdown(context.Background())
	<-errc
	return err
}

// ListenAndServe serves the server on addr until ctx ends; see Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	return ListenAndServe(ctx, addr, s, len(s.tokens) > 0)
}

// Serve serves the server on ln until ctx ends, then shuts down gracefully; see
// the package function Serve.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return Serve(ctx, ln, s, len(s.tokens) > 0)
}
