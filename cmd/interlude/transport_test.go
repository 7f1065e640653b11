package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interludehq/interlude/internal/proctest"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key as PEM
// files and returns their paths and the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "interlude test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

func TestServeAnswersHTTPSWithTLSCertAndKey(t *testing.T) {
	t.Parallel()
	certFile, keyFile, cert := selfSigned(t)
	addr := proctest.FreeAddr(t)
	stderr := &proctest.Buffer{}
	cmd := exec.Command(bin, "serve", "--addr", addr, "--db", filepath.Join(t.TempDir(), "tls.db"), "--tls-cert", certFile, "--tls-key", keyFile)
	cmd.Env, cmd.Stderr = baseEnv(), stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })

	roots := x509.NewCertPool()
	roots.AddCert(cert)
	httpsClient := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	up := waitFor(15*time.Second, func() bool {
		select {
		case <-done:
			return true
		default:
		}
		resp, err := httpsClient.Get("https://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	select {
	case <-done:
		t.Fatalf("interlude serve exited: %v\n%s", cmd.ProcessState, stderr.String())
	default:
	}
	if !up {
		t.Fatalf("interlude serve did not answer /healthz over HTTPS in time\n%s", stderr.String())
	}
	plain := &http.Client{Timeout: 2 * time.Second}
	if resp, err := plain.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("the HTTPS server answered plain HTTP")
		}
	}
	if log := stderr.String(); !strings.Contains(log, "tls=true") || strings.Contains(log, "clear text") {
		t.Errorf("the log does not say it serves TLS, or warns of clear text:\n%s", log)
	}
}

func TestServeRefusesTLSFlagsThatDoNotPairUp(t *testing.T) {
	certFile, keyFile, _ := selfSigned(t)
	for _, args := range [][]string{
		{"--tls-cert", certFile},
		{"--tls-key", keyFile},
	} {
		code, _, errOut := inProcess(append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db")}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "give both --tls-cert and --tls-key") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
	code, _, errOut := inProcess("serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db"), "--tls-cert", keyFile, "--tls-key", certFile)
	if code != exitFailed || !strings.Contains(errOut, "cannot be used") {
		t.Errorf("swapped certificate and key: exit %d\n%s", code, errOut)
	}
}

func TestServeRefusesATokensFileOtherUsersCanRead(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("alice:"+aliceToken+":run\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tokens, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db"), "--tokens", tokens)
	cmd.Env = baseEnv()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailed || !strings.Contains(string(out), "chmod 600 "+tokens) {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestPlainHTTPOnAReachableAddressWarnsThatTokensTravelInClearText(t *testing.T) {
	cases := []struct {
		name string
		addr net.Addr
		tls  bool
		warn bool
	}{
		{"every interface", &net.TCPAddr{IP: net.IPv4zero, Port: 8000}, false, true},
		{"a LAN address", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 8000}, false, true},
		{"an IPv6 address", &net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 8000}, false, true},
		{"a LAN address with TLS", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 8000}, true, false},
		{"loopback", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8000}, false, false},
		{"IPv6 loopback", &net.TCPAddr{IP: net.IPv6loopback, Port: 8000}, false, false},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		warnIfCleartext(slog.New(slog.NewTextHandler(&buf, nil)), c.addr, c.tls)
		if got := strings.Contains(buf.String(), "clear text"); got != c.warn {
			t.Errorf("%s: warned %v, want %v: %q", c.name, got, c.warn, buf.String())
		}
		if c.warn && !strings.Contains(buf.String(), "level=WARN") {
			t.Errorf("%s: the warning is not logged as one: %q", c.name, buf.String())
		}
	}
}
