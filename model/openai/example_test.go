package openai_test

import (
	"context"
	"fmt"

	"github.com/interludehq/interlude/model"
	"github.com/interludehq/interlude/model/openai"
)

// A model served by a local Ollama, through its OpenAI-compatible API.
func ExampleNew() {
	m, err := openai.New(
		openai.WithBaseURL("http://localhost:11434/v1"),
		openai.WithAPIKey("ollama"), // Ollama ignores the key
		openai.WithModel("llama3.1:8b"),
		openai.WithMaxRetries(1),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	for c, err := range m.Stream(context.Background(), &model.Request{
		Messages: []model.Message{model.UserText("Say hello.")},
	}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Print(c.Text)
	}
}
