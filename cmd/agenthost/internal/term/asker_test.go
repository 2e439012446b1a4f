package term

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

func TestAskerDoomAnswers(t *testing.T) {
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
		a := NewAsker(strings.NewReader(tc.in), &out)
		got := a.Decide(context.Background(), loop.Question{Kind: loop.AskDoomLoop, Agent: "main", Call: call, Count: 3})
		if got.Verdict != tc.want || got.By != loop.ByTerminal {
			t.Errorf("answer %q: got %+v, want %v by terminal", tc.in, got, tc.want)
		}
		if !strings.Contains(out.String(), "main is repeating itself: list_dir 3 times in a row, with:\n  path: .\n[o]") {
			t.Errorf("answer %q: question %q does not name the agent, call and count", tc.in, out.String())
		}
	}
}

// TestAskerApproval: yes, no (the default), always, and no with a
// reason; the question shows the arguments escaped, a long value below
// its key behind a gutter (internal/callview).
func TestAskerApproval(t *testing.T) {
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
		{"r  use the other file \n", loop.Deny, "use the other file"},
		{"Reason use b\n", loop.Deny, "use b"},
		{"t\ny\n", loop.Allow, ""},
		{"yes please\na\n", loop.AllowAlways, ""},
		{"t\n", loop.Deny, ""},
	} {
		var out strings.Builder
		a := NewAsker(strings.NewReader(tc.in), &out)
		got := a.Decide(context.Background(), loop.Question{Kind: loop.AskApproval, Agent: "main", Call: call, Pattern: "write_*"})
		if got.Verdict != tc.want || got.Reason != tc.reason || got.By != loop.ByTerminal {
			t.Errorf("answer %q: got %+v, want %v %q", tc.in, got, tc.want, tc.reason)
		}
		q := out.String()
		again := 0
		if strings.HasPrefix(tc.in, "t\n") || strings.HasPrefix(tc.in, "yes please\n") {
			again = 1 // an unknown answer is asked again, once per unknown line
		}
		if got := strings.Count(q, "? answer y (yes), n (no, also an empty line), a (always) or r (no, with a reason; r REASON on one line): "); got != again {
			t.Errorf("answer %q: asked again %d times, want %d:\n%s", tc.in, got, again, q)
		}
		for _, want := range []string{"main wants to run write_file:\n", `  path: a\x1b[31m.txt` + "\n", "  content: 1 line, 1000 B\n    │ xxxxxxxxxx",
			"  n: {\"a\":1}\n", "[y] yes  [n] no (default)  [a] always (write_file, this run)  [r] no, with a reason: "} {
			if !strings.Contains(q, want) {
				t.Errorf("answer %q: question\n%s\nlacks %q", tc.in, q, want)
			}
		}
	}
}

// TestAskerAbort: a cancelled run does not wait for an answer that never comes.
func TestAskerAbort(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	a := NewAsker(r, io.Discard)
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
