package cassette_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agenthost/agenthost/internal/cassette"
	"github.com/agenthost/agenthost/loop"
)

// echo is an in-memory model answering with the last message's text.
type echo struct{}

func (echo) Stream(_ context.Context, req loop.Request, _ func(string)) (loop.Response, error) {
	last := req.Messages[len(req.Messages)-1].Content
	return loop.Response{Message: loop.Message{Role: loop.RoleAssistant, Content: "you said: " + last}, FinishReason: "stop"}, nil
}

func Example() {
	dir, _ := os.MkdirTemp("", "cassette")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.jsonl")

	rec, _ := cassette.NewRecorder(path)
	req := loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "hello"}}}
	_, _ = rec.Wrap("m", echo{}).Stream(context.Background(), req, nil)
	_ = rec.Close()

	p, _ := cassette.Load(path)
	resp, err := p.Wrap("m").Stream(context.Background(), req, nil)
	fmt.Println(resp.Message.Content, err)

	req.Messages[0].Content = "goodbye"
	_, err = p.Wrap("m").Stream(context.Background(), req, nil)
	fmt.Println(err.(*loop.ProviderError).Code)
	// Output:
	// you said: hello <nil>
	// cassette_miss
}
