package sdkerr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/interludehq/interlude/model"
)

func TestCancelledReportsTheContextOrTheCancellation(t *testing.T) {
	other := errors.New("boom")
	if err := Cancelled(context.Background(), other); err != nil {
		t.Fatalf("a live context and another failure: %v, want nil", err)
	}
	deadline := fmt.Errorf("reading: %w", context.DeadlineExceeded)
	if err := Cancelled(context.Background(), deadline); err != deadline {
		t.Fatalf("a missed deadline: %v, want it unchanged", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Cancelled(ctx, other); !errors.Is(err, context.Canceled) {
		t.Fatalf("a done context: %v, want context.Canceled", err)
	}
}

func TestOtherClassifiesStatusNetworkAndUnreadableResponses(t *testing.T) {
	cause := errors.New("unexpected end of JSON input")
	var me *model.Error
	err := Other("p", cause, &http.Response{StatusCode: 503})
	if !errors.Is(err, model.ErrUnavailable) || !errors.As(err, &me) || me.Status != 503 || me.Provider != "p" || !errors.Is(err, cause) {
		t.Fatalf("unreadable 503: %#v", err)
	}
	netErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	err = Other("p", netErr, nil)
	if !errors.Is(err, model.ErrUnavailable) || !errors.As(err, &me) || !me.Retryable || me.Status != 0 {
		t.Fatalf("unreachable server: %#v", err)
	}
	err = Other("p", cause, &http.Response{StatusCode: 200})
	if !errors.Is(err, model.ErrBadResponse) || !errors.Is(err, cause) {
		t.Fatalf("unreadable 200: %#v", err)
	}
}
