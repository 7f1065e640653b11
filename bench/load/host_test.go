package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as the echo peer, as the load program
// does when hostRoundTrip starts a copy of it.
func TestMain(m *testing.M) {
	if os.Getenv(echoEnv) != "" {
		serveEcho()
		return
	}
	os.Exit(m.Run())
}

func TestHostRoundTripTimesAnEchoPeer(t *testing.T) {
	d, err := hostRoundTrip()
	if err != nil {
		t.Fatal(err)
	}
	if d <= 0 {
		t.Fatalf("round trip %v, want a positive duration", d)
	}
}
