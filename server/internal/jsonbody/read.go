package jsonbody

import (
	"io"
	"net/http"
)

// ReadAll reads r's body whole, refusing one longer than limit bytes with an
// *http.MaxBytesError, as http.MaxBytesReader does. The buffer is sized from
// the length the request declares (if any, and within limit), so that a body
// read whole takes one allocation.
func ReadAll(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	return readAll(http.MaxBytesReader(w, r.Body, limit), r.ContentLength, limit)
}

// readAll reads rd to its end, as io.ReadAll does, into a buffer of declared
// bytes when declared is within limit.
func readAll(rd io.Reader, declared, limit int64) ([]byte, error) {
	if declared < 0 || declared > limit {
		return io.ReadAll(rd)
	}
	// One byte more than declared, so that the read that finds the end needs
	// no larger buffer.
	b := make([]byte, 0, declared+1)
	for {
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // io.ReadAll's way to grow
		}
	}
}
