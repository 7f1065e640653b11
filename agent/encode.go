package agent

import (
	"encoding/json"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/jsonappend"
	"github.com/interludehq/interlude/internal/vocab"
)

// A tool call's interrupt history and an approval question's value are
// written by hand, byte for byte as json.Marshal writes them: they are
// encoded on every call that asked a person something, and encoding/json
// would encode each question and then scan it again. Where a value holds
// something these writers leave to encoding/json, they report false and the
// caller uses json.Marshal.

// encodeExchanges returns xs as json.Marshal encodes them.
func encodeExchanges(xs []interlude.Exchange) (json.RawMessage, error) {
	n := 2
	for i := range xs {
		q := &xs[i].Interrupt
		n += 512 + len(q.Message) + len(q.Value) + len(q.Schema) + len(q.State)
	}
	if b, ok := vocab.AppendExchanges(make([]byte, 0, n), xs); ok {
		return b, nil
	}
	return json.Marshal(xs)
}

// approvalValue is the value of the approval question about call c of a
// tool with the input schema given: the call's tool, id and arguments (as
// a string when they are not JSON), the schema, and the violations of the
// arguments, if any. It is the encoding of approvalValueMap.
func approvalValue(c *Call, schema json.RawMessage, vs []interlude.Violation) any {
	if len(vs) == 0 && len(c.Arguments) > 0 { // jsonappend.Raw checks they are JSON
		b := make([]byte, 0, 64+len(c.Arguments)+len(schema)+len(c.Tool)+len(c.ID))
		b = append(b, `{"arguments":`...)
		b, ok := jsonappend.Raw(b, c.Arguments)
		if ok {
			b = append(b, `,"input_schema":`...)
			b, ok = jsonappend.Raw(b, schema)
		}
		if ok {
			b = append(b, `,"tool":`...)
			b = jsonappend.String(b, c.Tool)
			b = append(b, `,"tool_call_id":`...)
			b = jsonappend.String(b, c.ID)
			return json.RawMessage(append(b, '}'))
		}
	}
	return approvalValueMap(c, schema, vs)
}

// approvalValueMap is the approval question's value as a map, which
// encoding/json encodes with its keys sorted.
func approvalValueMap(c *Call, schema json.RawMessage, vs []interlude.Violation) map[string]any {
	value := map[string]any{"tool": c.Tool, "tool_call_id": c.ID, "input_schema": schema}
	if json.Valid(c.Arguments) {
		value["arguments"] = c.Arguments
	} else {
		value["arguments"] = string(c.Arguments)
	}
	if len(vs) > 0 {
		value["violations"] = vs
	}
	return value
}
