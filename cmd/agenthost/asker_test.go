package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

func TestTTYAskerAnswers(t *testing.T) {
	call := loop.ToolCall{Name: "list_dir", Arguments: `{"path":"."}`}
	for _, tc := range []struct {
		in   string
		want loop.Answer
	}{
		{"o\n", loop.AnswerOnce},
		{"once\n", loop.AnswerOnce},
		{" A \n", loop.AnswerAlways},
		{"always", loop.AnswerAlways}, // end of input without a newline
		{"s\n", loop.AnswerStop},
		{"\n", loop.AnswerStop},
		{"", loop.AnswerStop},
		{"maybe\n", loop.AnswerStop},
	} {
		var out strings.Builder
		a := &ttyAsker{in: bufio.NewReader(strings.NewReader(tc.in)), out: &out}
		if got := a.AskDoomLoop(context.Background(), "main", call, 3); got != tc.want {
			t.Errorf("answer %q: got %v, want %v", tc.in, got, tc.want)
		}
		if !strings.Contains(out.String(), `main is repeating itself: list_dir({"path":"."}) 3 times in a row.`) {
			t.Errorf("answer %q: question %q does not name the agent, call and count", tc.in, out.String())
		}
	}
}

// TestTTYAskerAbort: a cancelled run does not wait for an answer that never comes.
func TestTTYAskerAbort(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	a := &ttyAsker{in: bufio.NewReader(r), out: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan loop.Answer, 1)
	go func() { done <- a.AskDoomLoop(ctx, "main", loop.ToolCall{Name: "x"}, 3) }()
	cancel()
	select {
	case got := <-done:
		if got != loop.AnswerStop {
			t.Fatalf("got %v after abort, want stop", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AskDoomLoop still waiting 10s after the context was cancelled")
	}
}

// TestTerminalAskerNeedsInteractiveStdin: without a terminal on stdin nobody
// can answer, so there is no asker (ask acts as stop).
func TestTerminalAskerNeedsInteractiveStdin(t *testing.T) {
	if a := terminalAsker(&env{stdin: strings.NewReader(""), stderr: io.Discard, stderrTTY: true}); a != nil {
		t.Fatal("terminalAsker returned an asker although stdin is not a terminal")
	}
}
