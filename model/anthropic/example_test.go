package anthropic_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/anthropic"
)

// A Claude model; the API key comes from ANTHROPIC_API_KEY.
func ExampleNew() {
	m, err := anthropic.New(anthropic.WithModel("claude-sonnet-4-5"), anthropic.WithMaxTokens(2048))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := m.Generate(context.Background(), &model.Request{
		System:   "Answer in one sentence.",
		Messages: []model.Message{model.UserText("What is a durable workflow?")},
	})
	switch {
	case errors.Is(err, model.ErrRateLimited), errors.Is(err, model.ErrUnavailable):
		fmt.Println("try again later:", err)
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Println(resp.Message.Text())
	}
}
