package model_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/interludehq/interlude/model"
)

func TestStatusErrorsMatchTheirClass(t *testing.T) {
	tests := []struct {
		status    int
		kind      error
		retryable bool
		hint      string
	}{
		{429, model.ErrRateLimited, true, "Wait and retry"},
		{500, model.ErrUnavailable, true, "retry later"},
		{503, model.ErrUnavailable, true, "retry later"},
		{529, model.ErrUnavailable, true, "retry later"},
		{401, model.ErrAuth, false, "Check the API key"},
		{403, model.ErrAuth, false, "Check the API key"},
		{400, model.ErrInvalidRequest, false, "Fix the request"},
		{404, model.ErrInvalidRequest, false, "Fix the request"},
		{409, nil, true, "Retrying may help"},
	}
	all := []error{model.ErrRateLimited, model.ErrUnavailable, model.ErrBadResponse, model.ErrAuth, model.ErrInvalidRequest}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			var err error = fmt.Errorf("calling model: %w", model.StatusError("openai", tt.status, "some_code", "provider says no"))
			for _, k := range all {
				if got := errors.Is(err, k); got != (k == tt.kind) {
					t.Errorf("errors.Is(%v) = %v", k, got)
				}
			}
			var me *model.Error
			if !errors.As(err, &me) {
				t.Fatal("not a *model.Error")
			}
			if me.Retryable != tt.retryable || me.Status != tt.status || me.Provider != "openai" {
				t.Errorf("got %+v", me)
			}
			msg := err.Error()
			for _, want := range []string{"openai", fmt.Sprint(tt.status), "some_code", "provider says no", tt.hint} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}

func TestBadResponseWrapsItsCause(t *testing.T) {
	cause := errors.New("unexpected end of JSON input")
	err := model.BadResponse("anthropic", "cannot decode the response", cause)
	if !errors.Is(err, model.ErrBadResponse) || !errors.Is(err, cause) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "base URL") {
		t.Fatalf("message should say what to do: %v", err)
	}
}
