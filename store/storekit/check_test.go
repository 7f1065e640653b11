package storekit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
)

// TestNotFoundNamesTheThreadAsFmtQuotesIt checks the unknown thread's error:
// its code, and its message with the id quoted as %q quotes it, whatever the id.
func TestNotFoundNamesTheThreadAsFmtQuotesIt(t *testing.T) {
	for _, id := range []string{"t1", "", `a "quoted" id`, "tab\there", "\xff\xfe", "é☃", strings.Repeat("long", 100)} {
		err := NotFound(id)
		if !errors.Is(err, interlude.ErrNotFound) {
			t.Errorf("NotFound(%q) = %v, not ErrNotFound", id, err)
		}
		var e *interlude.Error
		if !errors.As(err, &e) || e.Message != fmt.Sprintf("thread %q does not exist", id) {
			t.Errorf("NotFound(%q) says %q", id, e.Message)
		}
	}
}
