package jsonbody

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

func TestABodyIsReadWholeWhateverItsDeclaredLength(t *testing.T) {
	body := strings.Repeat("x", 1000)
	for _, declared := range []int64{-1, 0, 1, 999, 1000, 1001, 5000} {
		for _, rd := range []func() io.Reader{
			func() io.Reader { return strings.NewReader(body) },
			func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) },
			func() io.Reader { return iotest.DataErrReader(strings.NewReader(body)) },
		} {
			got, err := readAll(rd(), declared, 2000)
			if err != nil || string(got) != body {
				t.Fatalf("declared %d: read %d bytes, %v", declared, len(got), err)
			}
		}
	}
	if _, err := readAll(iotest.ErrReader(io.ErrUnexpectedEOF), 10, 2000); err != io.ErrUnexpectedEOF {
		t.Fatalf("a failing read: %v", err)
	}
}

func TestABodyOverTheLimitIsRefused(t *testing.T) {
	for _, declared := range []int64{-1, 11, 2000} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", 11)))
		r.ContentLength = declared
		_, err := ReadAll(httptest.NewRecorder(), r, 10)
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); !ok || mbe.Limit != 10 {
			t.Fatalf("declared %d: %v", declared, err)
		}
	}
	r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", 10)))
	if body, err := ReadAll(httptest.NewRecorder(), r, 10); err != nil || len(body) != 10 {
		t.Fatalf("a body at the limit: %d bytes, %v", len(body), err)
	}
}
