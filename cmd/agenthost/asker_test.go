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

func TestTTYAskerDoomAnswers(t *testing.T) {
	call := loop.ToolCall{Name: "list_dir", Arguments: `{"path":"."}`}
	for _, tc := range []struct {
		in   string
		want loop.Verdict
	}{
		{"o\n", loop.Allow},
		{"once\n", loop.Allow},
		{" A \n", loop.AllowAlways},
		{"always", loop.AllowAlways}, // end of input without a newline
		{"s\n", loop.Deny},
		{"\n", loop.Deny},
		{"", loop.Deny},
		{"maybe\n", loop.Deny},
	} {
		var out strings.Builder
		a := &ttyAsker{in: bufio.NewReader(strings.NewReader(tc.in)), out: &out}
		got := a.Decide(context.Background(), loop.Question{Kind: loop.AskDoomLoop, Agent: "main", Call: call, Count: 3})
		if got.Verdict != tc.want || got.By != loop.ByTerminal {
			t.Errorf("answer %q: got %+v, want %v by terminal", tc.in, got, tc.want)
		}
		if !strings.Contains(out.String(), "main is repeating itself: list_dir 3 times in a row, with:\n  path: .\n[o]") {
			t.Errorf("answer %q: question %q does not name the agent, call and count", tc.in, out.String())
		}
	}
}

// TestTTYAskerApproval: yes, no (the default), always, and no with a
// reason; the question shows the arguments escaped, a long value below
// its key behind a gutter (internal/callview).
func TestTTYAskerApproval(t *testing.T) {
	long := strings.Repeat("x", 1000)
	call := loop.ToolCall{Name: "write_file", Arguments: `{"path":"a\u001b[31m.txt","content":"` + long + `","n":{"a": 1}}`}
	for _, tc := range []struct {
		in     string
		want   loop.Verdict
		reason string
	}{
		{"y\n", loop.Allow, ""},
		{"YES\n", loop.Allow, ""},
		{"a\n", loop.AllowAlways, ""},
		{"n\n", loop.Deny, ""},
		{"\n", loop.Deny, ""},
		{"", loop.Deny, ""},
		{"r\nuse the other file\n", loop.Deny, "use the other file"},
	} {
		var out strings.Builder
		a := &ttyAsker{in: bufio.NewReader(strings.NewReader(tc.in)), out: &out}
		got := a.Decide(context.Background(), loop.Question{Kind: loop.AskApproval, Agent: "main", Call: call, Pattern: "write_*"})
		if got.Verdict != tc.want || got.Reason != tc.reason || got.By != loop.ByTerminal {
			t.Errorf("answer %q: got %+v, want %v %q", tc.in, got, tc.want, tc.reason)
		}
		q := out.String()
		for _, want := range []string{"main wants to run write_file:\n", `  path: a\x1b[31m.txt` + "\n", "  content: 1 line, 1000 B\n    │ xxxxxxxxxx",
			"  n: {\"a\":1}\n", "[y] yes  [n] no (default)  [a] always (write_file, this run)  [r] no, with a reason: "} {
			if !strings.Contains(q, want) {
				t.Errorf("answer %q: question\n%s\nlacks %q", tc.in, q, want)
			}
		}
	}
}

// TestCLIApprover: --yes and --approve answer approval questions (not doom
// loops); without a terminal the call is refused with how to allow it.
func TestCLIApprover(t *testing.T) {
	q := loop.Question{Kind: loop.AskApproval, Agent: "main", Call: loop.ToolCall{Name: "gh__push", Arguments: "{}"}}
	for _, tc := range []struct {
		flags  approveFlags
		kind   loop.QuestionKind
		want   loop.Verdict
		by     string
		reason string
	}{
		{approveFlags{yes: true}, loop.AskApproval, loop.Allow, loop.ByFlag, "--yes"},
		{approveFlags{patterns: []string{"fs__*", "gh__*"}}, loop.AskApproval, loop.Allow, loop.ByFlag, "--approve gh__*"},
		{approveFlags{patterns: []string{"fs__*"}}, loop.AskApproval, loop.Deny, loop.ByNone, "--approve gh__push (or --yes)"},
		{approveFlags{yes: true}, loop.AskDoomLoop, loop.Deny, loop.ByNone, "no terminal"},
	} {
		a := &cliApprover{flags: &tc.flags}
		q.Kind = tc.kind
		got := a.Decide(context.Background(), q)
		if got.Verdict != tc.want || got.By != tc.by || !strings.Contains(got.Reason, tc.reason) {
			t.Errorf("%+v %s: got %+v", tc.flags, tc.kind, got)
		}
	}
}

// TestTTYAskerAbort: a cancelled run does not wait for an answer that never comes.
func TestTTYAskerAbort(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	a := &ttyAsker{in: bufio.NewReader(r), out: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan loop.Decision, 1)
	go func() {
		done <- a.Decide(ctx, loop.Question{Kind: loop.AskApproval, Agent: "main", Call: loop.ToolCall{Name: "x"}})
	}()
	cancel()
	select {
	case got := <-done:
		if got.Verdict != loop.Deny {
			t.Fatalf("got %v after abort, want deny", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Decide still waiting 10s after the context was cancelled")
	}
}

// TestTerminalAskerNeedsInteractiveStdin: without a terminal on stdin nobody
// can answer, so there is no asker (ask acts as stop).
func TestTerminalAskerNeedsInteractiveStdin(t *testing.T) {
	if a := terminalAsker(&env{stdin: strings.NewReader(""), stderr: io.Discard, stderrTTY: true}); a != nil {
		t.Fatal("terminalAsker returned an asker although stdin is not a terminal")
	}
}
