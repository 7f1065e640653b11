package graph

import (
	"encoding/json"
	"strconv"

	"github.com/interludehq/interlude/internal/jsonappend"
)

// encodeDelta returns d's stored JSON, as encoding/json encodes it. The
// common delta of a step (writes, next nodes, status) is written by hand, the
// writes' values copied as they were encoded when written, so that a step's
// record costs what the step changed and no more; deltas carrying anything
// else go through encoding/json.
func encodeDelta(d *delta) ([]byte, error) {
	if d.Reset != nil || len(d.Resolve) > 0 || len(d.Ledger) > 0 || len(d.Memo) > 0 || len(d.Calls) > 0 ||
		len(d.Raised) > 0 || len(d.Esc) > 0 || d.Break != nil {
		return json.Marshal(d)
	}
	b := make([]byte, 0, 64+writesSize(d.Input)+writesSize(d.Writes))
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(d.V), 10)
	if d.Nonce != "" {
		b = append(b, `,"nonce":`...)
		b = jsonappend.String(b, d.Nonce)
	}
	if len(d.Input) > 0 {
		b = append(b, `,"in":`...)
		b = appendWrites(b, d.Input)
	}
	if len(d.Writes) > 0 {
		b = append(b, `,"w":`...)
		b = appendWrites(b, d.Writes)
	}
	if d.Status != "" {
		b = append(b, `,"status":`...)
		b = jsonappend.String(b, string(d.Status))
	}
	if len(d.Next) > 0 {
		b = append(b, `,"next":`...)
		b = jsonappend.Strings(b, d.Next)
	}
	if d.Mid {
		b = append(b, `,"mid":true`...)
	}
	if d.Base != 0 {
		b = append(b, `,"base":`...)
		b = strconv.AppendInt(b, d.Base, 10)
	}
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(d.Step), 10)
	if d.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonappend.String(b, d.Error)
	}
	return append(b, '}'), nil
}

func writesSize(ws []write) int {
	n := 0
	for _, w := range ws {
		n += len(w.Field) + len(w.Value) + 16
	}
	return n
}

// appendWrites appends writes as [{"f":field,"x":value}, ...]. Values are
// compact JSON already: encoded by encoding/json, or compacted when read.
func appendWrites(b []byte, ws []write) []byte {
	b = append(b, '[')
	for i, w := range ws {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"f":`...)
		b = jsonappend.String(b, w.Field)
		b = append(b, `,"x":`...)
		b = append(b, w.Value...)
		b = append(b, '}')
	}
	return append(b, ']')
}
