// Command plainloop is the "plain Go program" that agenthost's start-up is
// measured against (issue 41): one streamed chat-completions request with
// go-openai, the client agenthost's provider uses, to the model at
// OPENAI_BASE_URL, with one tool offered as agenthost offers read_file; it
// prints the answer's text and exits. Nothing else: no configuration, no
// plugins, no session. `go run ./bench` runs it beside agenthost's cached
// start-up; by hand (the fake model from bench/fakeserve):
//
//	go build -o /tmp/plainloop ./bench/plainloop
//	OPENAI_BASE_URL=$(...) /tmp/plainloop
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	openai "github.com/sashabaranov/go-openai"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "plainloop:", err)
		os.Exit(1)
	}
}

func run() error {
	base := os.Getenv("OPENAI_BASE_URL")
	if base == "" {
		return errors.New("OPENAI_BASE_URL is not set: point it at an OpenAI-compatible server (bench/fakeserve)")
	}
	cfg := openai.DefaultConfig("none")
	cfg.BaseURL = base
	stream, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model:  "fake-model",
		Stream: true,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "You are a helpful agent."},
			{Role: openai.ChatMessageRoleUser, Content: "Read the lines, one per step."},
		},
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name:        "read_file",
			Description: "Read a file of the workspace.",
			Parameters:  map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []string{"path"}},
		}}},
	})
	if err != nil {
		return fmt.Errorf("request to %s: %w", base, err)
	}
	defer stream.Close()
	var text []byte
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("stream from %s: %w", base, err)
		}
		for _, c := range chunk.Choices {
			text = append(text, c.Delta.Content...)
		}
	}
	fmt.Println(string(text))
	return nil
}
