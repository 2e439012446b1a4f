package fakemodel

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func openaiClient(s *Server) *openai.Client {
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = s.URL()
	return openai.NewClientWithConfig(cfg)
}

// TestGoOpenAIStream checks that go-openai's streaming client reads the
// fake's streams as a real server's.
func TestGoOpenAIStream(t *testing.T) {
	s := start(t, `{"text": "Reading the file now.", "tool_calls": [{"name": "read_file", "arguments": {"path": "notes/ü.md"}}, {"name": "list_dir", "arguments": {"path": "."}}], "usage": {"prompt_tokens": 50, "completion_tokens": 9}}
{"status": 401, "body": {"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}}}`)
	client := openaiClient(s)
	req := openai.ChatCompletionRequest{
		Model:         "gpt-test",
		Messages:      []openai.ChatCompletionMessage{{Role: "user", Content: "read it"}},
		Tools:         []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read_file"}}},
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	stream, err := client.CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatalf("CreateChatCompletionStream: %v", err)
	}
	defer stream.Close()
	var text, finish string
	var calls []openai.ToolCall
	var usage *openai.Usage
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if resp.Usage != nil {
			usage = resp.Usage
		}
		for _, ch := range resp.Choices {
			text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				i := *tc.Index
				for len(calls) <= i {
					calls = append(calls, openai.ToolCall{})
				}
				if tc.ID != "" {
					calls[i].ID = tc.ID
				}
				calls[i].Function.Name += tc.Function.Name
				calls[i].Function.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
	}
	if text != "Reading the file now." || finish != "tool_calls" {
		t.Errorf("text %q finish %q", text, finish)
	}
	if len(calls) != 2 || calls[0].ID != "call_1_1" || calls[0].Function.Name != "read_file" || calls[0].Function.Arguments != `{"path":"notes/ü.md"}` ||
		calls[1].Function.Name != "list_dir" || calls[1].Function.Arguments != `{"path":"."}` {
		t.Errorf("calls %+v", calls)
	}
	if usage == nil || usage.TotalTokens != 59 {
		t.Errorf("usage %+v, want total 59", usage)
	}

	// A scripted error reaches go-openai as an *openai.APIError.
	_, err = client.CreateChatCompletionStream(context.Background(), req)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 || apiErr.Message != "bad key" {
		t.Errorf("error %v (%T), want APIError 401 bad key", err, err)
	}

	reqs := s.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[0]), `"stream":true`) {
		t.Errorf("recorded %d requests: %s", len(reqs), reqs)
	}
	if got := FormatRequests(reqs[:1], "summary"); got != "#1 model=gpt-test tools=[read_file] tool_choice=- msgs=user last_user=\"read it\"\n" {
		t.Errorf("summary %q", got)
	}
}
