package vocab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/interludehq/interlude/internal/jsonappend"
)

// ResolutionStatus says how an interrupt was resolved.
type ResolutionStatus string

// The ways an interrupt can be resolved.
const (
	// Resolved answers with data.
	Resolved ResolutionStatus = "resolved"
	// Rejected declines with an error.
	Rejected ResolutionStatus = "rejected"
	// Cancelled withdraws the question; Interrupt reports a cancelled answer.
	Cancelled ResolutionStatus = "cancelled"
	// Expired is a cancellation made because the question's TTL passed (Expire).
	Expired ResolutionStatus = "expired"
)

// Resolution is the answer to one interrupt, with who gave it and when. The same
// value is an answer sent to the API, a recorded answer in a thread's history,
// and an answer given again (a replay).
type Resolution struct {
	// InterruptID is the interrupt answered; "" names the single pending one.
	InterruptID string `json:"interrupt_id,omitempty"`
	// Status is how the interrupt was resolved.
	Status ResolutionStatus `json:"status"`
	// Response is the answer's data for Resolved.
	Response json.RawMessage `json:"response,omitempty"`
	// Error is the rejection for Rejected; nil means no reason was given.
	Error *Rejection `json:"error,omitempty"`
	// By names who answered (for example the API token's name).
	By string `json:"by,omitempty"`
	// At is when the resolution was committed; zero until it is.
	At time.Time `json:"at,omitzero"`

	err error // an encoding failure in Resolve, reported when the resolution is used
}

// Rejection is the error a rejecting person gives.
type Rejection struct {
	// Name classifies the rejection, for example "Denied".
	Name string `json:"name"`
	// Message explains it; it may be empty.
	Message string `json:"message"`
}

// Resolve returns a resolution answering with v, encoded as JSON. A []byte, like a
// json.RawMessage, is taken as JSON text already encoded (as graph.Input takes it),
// not as bytes to encode; text that is not valid JSON is refused when the answer is
// checked.
func Resolve(v any) Resolution {
	if b, ok := v.([]byte); ok {
		v = json.RawMessage(b)
	}
	// A plain answer (a map of booleans, strings and numbers) is written
	// without encoding/json's reflection.
	if data, ok := jsonappend.Value(make([]byte, 0, 32), v); ok {
		return Resolution{Status: Resolved, Response: data}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return Resolution{Status: Resolved, err: fmt.Errorf("encode the answer as JSON: %w", err)}
	}
	return Resolution{Status: Resolved, Response: data}
}

// For returns the resolution answering the interrupt id.
func (r Resolution) For(id string) Resolution {
	r.InterruptID = id
	return r
}

// Err reports a problem with the resolution itself, such as an answer that could not
// be encoded as JSON.
func (r Resolution) Err() error { return r.err }

// Same reports whether r and o give the same answer, ignoring the interrupt
// they name, who gave it and when.
// Sending the same answer again for an already resolved interrupt is an idempotent
// replay, not a conflict.
func (r Resolution) Same(o Resolution) bool {
	if r.Status != o.Status {
		return false
	}
	if (r.Error == nil) != (o.Error == nil) || (r.Error != nil && *r.Error != *o.Error) {
		return false
	}
	return JSONEqual(r.Response, o.Response)
}

// JSONEqual reports whether two JSON documents mean the same value, whatever their
// spacing or key order. Two empty documents are equal; "null" equals empty.
func JSONEqual(a, b json.RawMessage) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if bytes.Equal(a, b) {
		return true
	}
	if isNull(a) && isNull(b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

func isNull(b []byte) bool { return len(b) == 0 || string(b) == "null" }

// AppendResolution appends r as encoding/json writes a Resolution, for
// encoders that write answers inside a larger document. It reports false, with
// b in any state past its original length, where a value is not one it writes
// unchanged: the caller then uses encoding/json.
func AppendResolution(b []byte, r *Resolution) ([]byte, bool) {
	b = append(b, '{')
	if r.InterruptID != "" {
		b = append(b, `"interrupt_id":`...)
		b = jsonappend.String(b, r.InterruptID)
		b = append(b, ',')
	}
	b = append(b, `"status":`...)
	b = jsonappend.String(b, string(r.Status))
	ok := true
	if len(r.Response) > 0 {
		b = append(b, `,"response":`...)
		if b, ok = jsonappend.Raw(b, r.Response); !ok {
			return b, false
		}
	}
	if r.Error != nil {
		b = append(b, `,"error":{"name":`...)
		b = jsonappend.String(b, r.Error.Name)
		b = append(b, `,"message":`...)
		b = jsonappend.String(b, r.Error.Message)
		b = append(b, '}')
	}
	if r.By != "" {
		b = append(b, `,"by":`...)
		b = jsonappend.String(b, r.By)
	}
	if !r.At.IsZero() {
		b = append(b, `,"at":"`...)
		var err error
		if b, err = r.At.AppendText(b); err != nil {
			return b, false
		}
		b = append(b, '"')
	}
	return append(b, '}'), true
}

// AppendExchanges appends questions with their answers as encoding/json
// writes a []Exchange (a question AppendInterruption leaves is written by its
// MarshalJSON), reporting false as AppendResolution does.
func AppendExchanges(b []byte, xs []Exchange) ([]byte, bool) {
	b = append(b, '[')
	ok := true
	for i := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"interrupt":`...)
		if b, ok = appendEncoded(b, &xs[i].Interrupt); !ok {
			return b, false
		}
		if xs[i].Resolution != nil {
			b = append(b, `,"resolution":`...)
			if b, ok = AppendResolution(b, xs[i].Resolution); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}
