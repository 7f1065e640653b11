// Package httpstatus maps Interlude's error codes to HTTP statuses, the same
// on every HTTP surface.
package httpstatus

import (
	"net/http"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/host"
)

// Of returns the HTTP status of an error code: 500 for a code it does not know.
func Of(c interlude.Code) int {
	switch c {
	case interlude.CodeInvalidRequest:
		return http.StatusBadRequest
	case interlude.CodeNotFound:
		return http.StatusNotFound
	case interlude.CodeThreadInterrupted, interlude.CodeNotInterrupted, interlude.CodeUnknownInterrupt,
		interlude.CodeAmbiguousResume, interlude.CodeConflict, interlude.CodeThreadBusy:
		return http.StatusConflict
	case interlude.CodeInvalidResponse:
		return http.StatusUnprocessableEntity
	case host.CodeUnavailable:
		return http.StatusServiceUnavailable
	case interlude.CodeForbidden:
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}
