package provider_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agenthost/agenthost/host/provider"
	"github.com/agenthost/agenthost/loop"
)

// canned answers every request with the same event stream, from memory.
type canned string

func (c canned) RoundTrip(r *http.Request) (*http.Response, error) {
	r.Body.Close()
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(strings.NewReader(string(c))),
		Request:    r,
	}, nil
}

func ExampleProvider_Stream() {
	// What Ollama streams for a tool call, after a keep-alive comment.
	stream := `: keep-alive

data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Reading it."}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_k3j2","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"go.mod\"}"}}]},"finish_reason":"tool_calls"}]}

data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":12,"total_tokens":52}}

data: [DONE]
`
	p := provider.New(provider.Options{
		BaseURL:    "http://127.0.0.1:11434/v1",
		ModelID:    "qwen2.5:7b-instruct",
		HTTPClient: &http.Client{Transport: canned(stream)},
	})
	resp, err := p.Stream(context.Background(), loop.Request{
		Messages: []loop.Message{{Role: loop.RoleUser, Content: "What does go.mod say?"}},
		Tools:    []loop.ToolSpec{{Name: "read_file", Description: "Read a file"}},
	}, func(text string) { fmt.Print(text) })
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println()
	for _, c := range resp.Message.ToolCalls {
		fmt.Println(c.ID, c.Name, c.Arguments)
	}
	fmt.Println(resp.FinishReason, resp.Usage.TotalTokens, "tokens")
	// Output:
	// Reading it.
	// call_k3j2 read_file {"path":"go.mod"}
	// tool_calls 52 tokens
}
