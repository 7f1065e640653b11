package postgres

import (
	"encoding/json"
	"fmt"

	"github.com/interludehq/interlude"
)

func encodeInterrupts(qs []interlude.Question) ([]byte, error) {
	if len(qs) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(qs)
	if err != nil {
		return nil, &interlude.Error{Code: interlude.CodeInvalidRequest, Message: "the pending interrupts cannot be encoded as JSON: " + err.Error(), Err: err}
	}
	return b, nil
}

func decodeInterrupts(threadID string, b []byte) ([]interlude.Question, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var qs []interlude.Question
	if err := json.Unmarshal(b, &qs); err != nil {
		return nil, fmt.Errorf("postgres store: thread %q has unreadable pending interrupts: %w", threadID, err)
	}
	return qs, nil
}
