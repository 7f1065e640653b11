package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/server/internal/httpstatus"
	"github.com/interludehq/interlude/server/langgraph"
)

// Error codes besides those of package interlude.
const (
	codeUnauthenticated  = "unauthenticated"
	codeForbidden        = "forbidden"
	codeTooLarge         = "too_large"
	codeMethodNotAllowed = "method_not_allowed"
	codeNotImplemented   = "not_implemented"
	codeUnavailable      = "unavailable"
	codeInternal         = "internal"
	codeSlowConsumer     = "slow_consumer" // a stream's client read too slowly
)

// apiError is an error as answered to a client.
type apiError struct {
	status  int
	code    string
	message string
	details any
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

// pathDetails is the details of an invalid_request error about one field.
type pathDetails struct {
	Path string `json:"path"`
}

// badRequest refuses a request because of the field at path ("" for the body).
func badRequest(path, format string, args ...any) *apiError {
	e := &apiError{status: http.StatusBadRequest, code: string(interlude.CodeInvalidRequest), message: fmt.Sprintf(format, args...)}
	if path != "" {
		e.details = pathDetails{Path: path}
	}
	return e
}

func notFound(format string, args ...any) *apiError {
	return &apiError{status: http.StatusNotFound, code: string(interlude.CodeNotFound), message: fmt.Sprintf(format, args...)}
}

// interruptDetails is the details of a 409 naming interrupts.
type interruptDetails struct {
	Interrupts []string `json:"interrupts"`
}

// violationDetails is the details of a 422 invalid_response.
type violationDetails struct {
	Violations []interlude.Violation `json:"violations"`
	Total      int                   `json:"total"`
	Interrupts []string              `json:"interrupts,omitempty"`
}

// toAPIError turns any error into what the client is told, and reports an
// unexpected error, whose text is logged but not shown.
func toAPIError(err error) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae, false
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &apiError{status: http.StatusRequestEntityTooLarge, code: codeTooLarge,
			message: fmt.Sprintf("the request body is larger than %d bytes", mbe.Limit)}, false
	}
	var ie *interlude.Error
	if errors.As(err, &ie) {
		e := &apiError{status: httpstatus.Of(ie.Code), code: string(ie.Code), message: ie.Message}
		switch {
		case ie.Code == interlude.CodeThreadBusy:
			// Who holds the thread is for the server's log, not for clients.
			e.message = busyMessage
		case ie.Code == interlude.CodeInvalidResponse:
			vs := ie.Violations
			if vs == nil {
				vs = []interlude.Violation{}
			}
			e.details = violationDetails{Violations: vs, Total: max(ie.TotalViolations, len(vs)), Interrupts: ie.Interrupts}
		case len(ie.Interrupts) > 0:
			e.details = interruptDetails{Interrupts: ie.Interrupts}
		}
		return e, e.status == http.StatusInternalServerError
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &apiError{status: http.StatusServiceUnavailable, code: codeUnavailable,
			message: "the server stopped the run before it finished (shutting down or timed out); the last committed checkpoint stands"}, false
	}
	return &apiError{status: http.StatusInternalServerError, code: codeInternal, message: "internal error; the server log has the details"}, true
}

// errorBody is the JSON of an error answer.
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details"`
}

func (e *apiError) object() errorObject {
	return errorObject{Code: e.code, Message: e.message, Details: e.details}
}

// busyMessage is what a client is told of a thread another run holds.
const busyMessage = "another run is working on this thread; try again in a moment"

// logBusy logs who holds a thread a request found busy.
func (s *Server) logBusy(r *http.Request, err error) {
	s.log.InfoContext(r.Context(), "thread busy", "method", r.Method, "path", r.URL.Path, "err", err)
}

// writeError answers err.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.refusal(w, r, err)
	writeJSON(w, ae.status, errorBody{Error: ae.object()})
}

// writeLangGraphError answers err on a LangGraph route, as writeError does,
// in that API's shape.
func (s *Server) writeLangGraphError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.refusal(w, r, err)
	langgraph.WriteError(w, ae.status, ae.code, ae.message)
}

// refusal is what the client is told of err, with the headers it calls for
// set, and err logged when it is unexpected.
func (s *Server) refusal(w http.ResponseWriter, r *http.Request, err error) *apiError {
	ae, unexpected := toAPIError(err)
	if unexpected {
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	switch {
	case ae.status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="interlude"`)
	case ae.code == string(interlude.CodeThreadBusy):
		w.Header().Set("Retry-After", "1")
		s.logBusy(r, err)
	}
	return ae
}

// answer writes v as a 200 answer.
func answer(w http.ResponseWriter, v any) error {
	writeJSON(w, http.StatusOK, v)
	return nil
}
