package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/internal/vocab"
)

// The values of the headers every JSON answer carries. Each slice has no spare
// capacity, so an Add to a header appends to a copy, never to these.
var (
	jsonContentType = []string{"application/json"}
	noStore         = []string{"no-store"}
	noSniff         = []string{"nosniff"}
)

// answerBuffers holds the buffers JSON answers are encoded into between
// requests; one grown past maxPooledAnswer is left to the collector.
var answerBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledAnswer = 64 << 10

// encodeAnswer appends v's JSON and a newline to buf, as json.Marshal writes
// it: a run's result field by field when appendResult can, anything else
// through encoding/json.
func encodeAnswer(buf *bytes.Buffer, v any) error {
	if r, ok := v.(*graph.Result[json.RawMessage]); ok && r != nil {
		if b, ok := appendResult(buf.AvailableBuffer(), r); ok {
			buf.Write(append(b, '\n'))
			return nil
		}
	}
	// Encode writes what Marshal does (HTML escaped), then a newline.
	return json.NewEncoder(buf).Encode(v)
}

// appendResult appends r's JSON exactly as json.Marshal writes it, for the
// results a run answers with; it reports false for a result with a part it
// leaves to encoding/json (a breakpoint, a full state, replays) or a value
// that encoding/json would rewrite.
func appendResult(b []byte, r *graph.Result[json.RawMessage]) ([]byte, bool) {
	if r.Breakpoint != nil || r.State != nil || len(r.Replays) > 0 {
		return b, false
	}
	b = append(b, `{"thread_id":`...)
	b = jsonappend.String(b, r.ThreadID)
	b = append(b, `,"status":`...)
	b = jsonappend.String(b, string(r.Status))
	b = append(b, `,"interrupts":`...)
	if r.Interrupts == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Interrupts {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = vocab.AppendInterruption(b, &r.Interrupts[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonappend.String(b, r.Error)
	}
	var ok bool
	if len(r.Values) > 0 {
		b = append(b, `,"values":`...)
		if b, ok = jsonappend.Raw(b, r.Values); !ok {
			return b, false
		}
	}
	if len(r.Messages) > 0 {
		b = append(b, `,"messages":`...)
		if b, ok = jsonappend.Raw(b, r.Messages); !ok {
			return b, false
		}
	}
	if len(r.Next) > 0 {
		b = append(b, `,"next":`...)
		b = jsonappend.Strings(b, r.Next)
	}
	if r.Checkpoint != 0 {
		b = append(b, `,"checkpoint":`...)
		b = strconv.AppendInt(b, r.Checkpoint, 10)
	}
	if r.Replayed {
		b = append(b, `,"replayed":true`...)
	}
	return append(b, '}'), true
}

// writeJSON writes v as the JSON response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := answerBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	if err := encodeAnswer(buf, v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		json.NewEncoder(buf).Encode(errorBody{Error: errorObject{Code: codeInternal, Message: "the response could not be encoded as JSON: " + err.Error()}})
	}
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = noStore
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	if buf.Cap() <= maxPooledAnswer {
		answerBuffers.Put(buf)
	}
}
