package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
)

// tlsConfig loads the certificate and key serve answers HTTPS with, or returns
// nil when neither is given.
func tlsConfig(certFile, keyFile string) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "" || keyFile == "":
		return nil, usagef("give both --tls-cert and --tls-key, or neither")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("the TLS certificate %s and key %s cannot be used: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}, nil
}

// warnIfCleartext warns, when serve answers plain HTTP on an address other
// machines can reach, that bearer tokens cross the network unencrypted.
func warnIfCleartext(log *slog.Logger, addr net.Addr, tlsOn bool) {
	if tlsOn {
		return
	}
	if a, ok := addr.(*net.TCPAddr); !ok || a.IP.IsLoopback() {
		return
	}
	log.Warn("serving plain HTTP on an address other machines can reach: bearer tokens travel in clear text; give --tls-cert and --tls-key, or put a TLS-terminating proxy in front",
		"addr", addr.String())
}
