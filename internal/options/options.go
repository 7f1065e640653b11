// Package options holds the one rule every constructor's functional options
// follow: an option only records what it is given, a value it cannot take is
// recorded as a problem, and the constructor that takes the options (New,
// Compile, Open) refuses the first problem with an error before doing anything.
// No option ignores, clamps or panics on a bad value.
package options

import (
	"fmt"
	"net/url"

	"github.com/interludehq/interlude"
)

// Problems records the bad values options were given. Embed it in a
// constructor's configuration.
type Problems struct {
	first error
}

// Refuse records that option was given a value it cannot take; the message
// says what it takes instead.
func (p *Problems) Refuse(option, format string, args ...any) {
	if p.first == nil {
		p.first = &interlude.Error{Code: interlude.CodeInvalidRequest, Message: option + ": " + fmt.Sprintf(format, args...)}
	}
}

// Err returns the first problem recorded, or nil.
func (p *Problems) Err() error { return p.first }

// Set stores v in *dst when ok, and otherwise records that option refused
// it, the message saying what it takes instead.
func Set[T any](p *Problems, dst *T, v T, ok bool, option, format string, args ...any) {
	if !ok {
		p.Refuse(option, format, args...)
		return
	}
	*dst = v
}

// HTTPURL parses s as an absolute http or https URL with a host, the one form
// every option and flag naming a server accepts, and reports whether it is
// one: "https:/inbox" or "http:///x" are refused here rather than making
// links that lead nowhere.
func HTTPURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, false
	}
	return u, true
}
