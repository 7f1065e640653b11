package openai_test

import (
	"testing"
)

// TestAgentRunsOnThisProvider runs a whole agent turn cycle over the wire format:
// the model calls lookup_order twice, the agent runs the tool and sends the
// results back, and the model answers with text.
func TestAgentRunsOnThisProvider(t *testing.T) {
	conversation.RunAgent(t)
}
