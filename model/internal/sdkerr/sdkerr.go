// Package sdkerr holds the error mapping the provider packages (openai,
// anthropic) share: what each provider's SDK reports other than the API's own
// errors, which stay with the provider.
package sdkerr

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/interludehq/interlude/model"
)

// Cancelled returns the error to report for a call that was cancelled: the
// context's error once ctx is done, or err itself when it is a cancellation or
// a missed deadline. It returns nil for any other failure, so that callers
// report cancellation as such rather than as a provider failure.
func Cancelled(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// Other returns the *model.Error for a failure that is not an error the API
// explained: an error status whose body could not be read (classified by the
// status), a server that cannot be reached (ErrUnavailable), or a response that
// cannot be read (ErrBadResponse). raw is the HTTP response, if there was one.
func Other(provider string, err error, raw *http.Response) error {
	if raw != nil && raw.StatusCode >= 400 {
		// The SDK could not read the error body; the status still says what happened.
		e := model.StatusError(provider, raw.StatusCode, "", "the error response could not be read")
		e.Err = err
		return e
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return &model.Error{Provider: provider, Message: "cannot reach the server: " + err.Error(), Kind: model.ErrUnavailable, Retryable: true, Err: err}
	}
	return model.BadResponse(provider, "cannot read the response: "+err.Error(), err)
}
