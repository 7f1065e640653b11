package model

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The classes of provider failure. An [*Error] matches the one in its Kind
// field with [errors.Is].
var (
	// ErrRateLimited: the provider refused the request because of a rate or
	// quota limit (HTTP 429). Wait and retry, unless the error is not
	// Retryable: then the account's quota is used up.
	ErrRateLimited = errors.New("model: rate limited")
	// ErrUnavailable: the provider failed (HTTP 5xx, overloaded) or could not
	// be reached. Retry later.
	ErrUnavailable = errors.New("model: provider unavailable")
	// ErrBadResponse: the provider answered with something that is not a
	// valid response (malformed JSON, a stream cut short, unusable tool
	// arguments).
	ErrBadResponse = errors.New("model: malformed response")
	// ErrAuth: the provider rejected the credentials (HTTP 401 or 403).
	ErrAuth = errors.New("model: authentication failed")
	// ErrInvalidRequest: the provider rejected the request itself (HTTP 400,
	// 404, 413, 422): an unknown model, a bad message sequence, a prompt too
	// long, an invalid tool schema. Retrying the same request will not help.
	ErrInvalidRequest = errors.New("model: invalid request")
)

// Error is a failure reported by, or while talking to, a model provider.
type Error struct {
	// Provider names the provider, such as "openai" or "anthropic".
	Provider string
	// Status is the HTTP status code, or 0 when there was no HTTP response.
	Status int
	// Code is the provider's own error code or type, such as
	// "rate_limit_exceeded" or "overloaded_error", when it sent one.
	Code string
	// Message is the provider's explanation, or ours when it sent none.
	Message string
	// Retryable reports whether sending the same request again later may
	// succeed.
	Retryable bool
	// Kind is the class of failure: one of ErrRateLimited, ErrUnavailable,
	// ErrBadResponse, ErrAuth, ErrInvalidRequest, or nil for anything else.
	Kind error
	// Err is the underlying error, if any.
	Err error
}

// StatusError returns the error for an HTTP error response from provider,
// classified by its status: 429 is ErrRateLimited, 5xx ErrUnavailable, 401
// and 403 ErrAuth, 400, 404, 413 and 422 ErrInvalidRequest. Rate limits,
// server failures, 408 and 409 are retryable.
func StatusError(provider string, status int, code, message string) *Error {
	e := &Error{Provider: provider, Status: status, Code: code, Message: message}
	switch {
	case status == http.StatusTooManyRequests:
		e.Kind, e.Retryable = ErrRateLimited, true
	case status >= 500:
		e.Kind, e.Retryable = ErrUnavailable, true
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = ErrAuth
	case status == http.StatusRequestTimeout || status == http.StatusConflict:
		e.Retryable = true
	case status == http.StatusBadRequest || status == http.StatusNotFound ||
		status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity:
		e.Kind = ErrInvalidRequest
	}
	return e
}

// BadResponse returns an ErrBadResponse error from provider explaining what
// was wrong with the response, wrapping cause (which may be nil).
func BadResponse(provider, message string, cause error) *Error {
	return &Error{Provider: provider, Message: message, Kind: ErrBadResponse, Retryable: true, Err: cause}
}

// Error describes the failure and what to do about it.
func (e *Error) Error() string {
	var sb strings.Builder
	if e.Provider != "" {
		sb.WriteString(e.Provider)
		sb.WriteString(": ")
	}
	sb.WriteString(e.title())
	switch {
	case e.Status != 0 && e.Code != "":
		fmt.Fprintf(&sb, " (HTTP %d, %s)", e.Status, e.Code)
	case e.Status != 0:
		fmt.Fprintf(&sb, " (HTTP %d)", e.Status)
	case e.Code != "":
		fmt.Fprintf(&sb, " (%s)", e.Code)
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if msg != "" {
		sb.WriteString(": ")
		sb.WriteString(msg)
	}
	if hint := e.hint(); hint != "" {
		if msg == "" || !strings.ContainsAny(msg[len(msg)-1:], ".!?") {
			sb.WriteString(".")
		}
		sb.WriteString(" ")
		sb.WriteString(hint)
		sb.WriteString(".")
	}
	return sb.String()
}

func (e *Error) title() string {
	switch e.Kind {
	case ErrRateLimited:
		return "rate limited"
	case ErrUnavailable:
		return "provider unavailable"
	case ErrBadResponse:
		return "malformed response"
	case ErrAuth:
		return "authentication failed"
	case ErrInvalidRequest:
		return "request rejected"
	}
	return "request failed"
}

func (e *Error) hint() string {
	switch e.Kind {
	case ErrRateLimited:
		if !e.Retryable {
			return "The account's quota is used up: check its plan and billing; retrying will not help until then"
		}
		return "Wait and retry, lower the request rate, or raise the account's limits"
	case ErrUnavailable:
		return "The provider is failing or unreachable: retry later, and check the base URL if it persists"
	case ErrBadResponse:
		if !e.Retryable {
			return "" // the message says what went wrong and what to change
		}
		return "Check that the base URL points at a server speaking this provider's API; retrying may help"
	case ErrAuth:
		return "Check the API key and that it may use this model"
	case ErrInvalidRequest:
		return "Fix the request (model name, message order, tool schemas, prompt size); retrying it unchanged will fail again"
	}
	if e.Retryable {
		return "Retrying may help"
	}
	return ""
}

// Is reports whether target is the class of e (its Kind).
func (e *Error) Is(target error) bool {
	return e.Kind != nil && target == e.Kind
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
