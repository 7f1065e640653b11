package storekit

import (
	"encoding/json"
	"fmt"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/internal/vocab"
)

// EncodeInterrupts encodes a thread's pending questions for a store's listing
// column; no questions encode as nil.
func EncodeInterrupts(qs []interlude.Interruption) ([]byte, error) {
	if len(qs) == 0 {
		return nil, nil
	}
	size := 2
	for i := range qs {
		q := &qs[i]
		size += 256 + len(q.Message) + len(q.Value) + len(q.Schema) + len(q.State)
	}
	if b, ok := vocab.AppendInterruptions(make([]byte, 0, size), qs); ok {
		return b, nil
	}
	b, err := json.Marshal(qs)
	if err != nil {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "the pending interrupts cannot be encoded as JSON: " + err.Error(), Err: err}
	}
	return b, nil
}

// DecodeInterrupts decodes what EncodeInterrupts made; store names the store in
// the error.
func DecodeInterrupts(storeName, threadID string, b []byte) ([]interlude.Interruption, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var qs []interlude.Interruption
	if err := json.Unmarshal(b, &qs); err != nil {
		return nil, fmt.Errorf("%s store: thread %q has unreadable pending interrupts: %w", storeName, threadID, err)
	}
	return qs, nil
}
