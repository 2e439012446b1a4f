package term

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/loop"
)

// testOutput is an Output as the command line makes it for a run without
// --json or --events, with $NO_COLOR set.
func testOutput(stdout, stderr io.Writer, outTTY, errTTY bool) *Output {
	return &Output{Con: NewConsole(stdout, stderr, outTTY), Progress: errTTY, Live: outTTY, ErrTTY: errTTY}
}

// TestProgressLines drives the terminal progress display with a run's
// events: a line per step with n/cap, a notice when few steps remain (20 %
// of the cap or 2, whichever is larger), tool results with durations and
// retries with their delay.
func TestProgressLines(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := testOutput(&stdout, &stderr, false, true)
	for step := 1; step <= 5; step++ {
		o.Event(loop.Event{Type: loop.EventStepStart, Agent: "build", Step: step, StepsMax: 5, Final: loop.Bool(step == 5)})
		if step == 2 {
			o.Event(loop.Event{Type: loop.EventRetry, Agent: "build", Attempt: 1, DelayMS: loop.Int64(1500), Status: 429, Message: "HTTP 429"})
			o.Event(loop.Event{Type: loop.EventToolEnd, Agent: "build", Tool: "read_file", IsError: loop.Bool(false), DurationMS: loop.Int64(12)})
			o.Event(loop.Event{Type: loop.EventToolEnd, Agent: "explore", Depth: 1, Tool: "list_dir", IsError: loop.Bool(true), DurationMS: loop.Int64(3)})
		}
	}
	o.Event(loop.Event{Type: loop.EventMessage, Agent: "build", Msg: &loop.Message{Role: loop.RoleUser, Content: "not shown"}})
	want := `· build step 1/5
· build step 2/5
  retry 1 in 1.5s: HTTP 429
  ↳ read_file ok 12 ms
    ↳ list_dir error 3 ms
· build step 3/5
  2 steps left
· build step 4/5
  1 step left
· build step 5/5 (final: tools off, asking for a summary)
`
	if got := stderr.String(); got != want {
		t.Errorf("progress:\n%s\nwant:\n%s", got, want)
	}
	if stdout.Len() != 0 {
		t.Errorf("progress wrote to stdout: %q", stdout.String())
	}
}

// TestTextStreamsOnlyTopLevel checks that subagents' text stays off stdout
// and that a host-written final text not streamed is printed at the end.
func TestTextStreamsOnlyTopLevel(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := testOutput(&stdout, &stderr, false, false)
	o.Event(loop.Event{Type: loop.EventStepStart, Agent: "build", Step: 1, StepsMax: 2})
	o.Text("build", 0, "Looking.")
	o.Text("explore", 1, "child text")
	o.Event(loop.Event{Type: loop.EventMessage, Agent: "explore", Depth: 1, Msg: &loop.Message{Role: loop.RoleAssistant, Content: "child text"}})
	o.Event(loop.Event{Type: loop.EventMessage, Agent: "build", Msg: &loop.Message{Role: loop.RoleAssistant, Content: "Looking."}})
	o.Event(loop.Event{Type: loop.EventStepEnd, Agent: "build", Step: 1, StepsMax: 2})
	o.Event(loop.Event{Type: loop.EventStepStart, Agent: "build", Step: 2, StepsMax: 2})
	o.Finish(&loop.Result{StopReason: loop.StopMaxSteps, Steps: 2, StepsMax: 2, Output: "[agenthost] stopped: step limit reached", Session: "s1"})
	if got, want := stdout.String(), "Looking.\n[agenthost] stopped: step limit reached\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if !strings.Contains(stderr.String(), "stopped: max_steps after 2 of 2 steps") {
		t.Errorf("stderr = %q, want the stop summary", stderr.String())
	}
}

// retriedStep drives o through a step whose first request streamed
// "Partial ans" and was cut, and whose retry streamed the whole answer.
func retriedStep(o *Output, answer string) {
	o.Event(loop.Event{Type: loop.EventStepStart, Agent: "main", Step: 1, StepsMax: 3})
	o.Text("main", 0, "Partial ")
	o.Text("main", 0, "ans")
	o.Event(loop.Event{Type: loop.EventRetry, Agent: "main", Step: 1, Attempt: 1, DelayMS: loop.Int64(1), Message: "provider: stream cut"})
	for _, w := range strings.SplitAfter(answer, " ") {
		o.Text("main", 0, w)
	}
	o.Event(loop.Event{Type: loop.EventMessage, Agent: "main", Msg: &loop.Message{Role: loop.RoleAssistant, Content: answer}})
	o.Event(loop.Event{Type: loop.EventStepEnd, Agent: "main", Step: 1, StepsMax: 3})
	o.Finish(&loop.Result{StopReason: loop.StopCompleted, Steps: 1, StepsMax: 3, Output: answer})
}

// TestRetriedStreamPiped: off a terminal, stdout holds the kept answer
// exactly once, byte for byte (control characters included).
func TestRetriedStreamPiped(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := testOutput(&stdout, &stderr, false, false)
	retriedStep(o, "Partial answer, \x1b[1mthen\x1b[0m complete.")
	if got, want := stdout.String(), "Partial answer, \x1b[1mthen\x1b[0m complete.\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

// TestFailedRequestTextDropped: off a terminal, the text of a request that
// finally failed is not printed: no response kept it.
func TestFailedRequestTextDropped(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := testOutput(&stdout, &stderr, false, false)
	o.Event(loop.Event{Type: loop.EventStepStart, Agent: "main", Step: 1, StepsMax: 3})
	o.Text("main", 0, "Partial ")
	o.Event(loop.Event{Type: loop.EventStepEnd, Agent: "main", Step: 1, StepsMax: 3, Message: "provider_error"})
	o.Finish(&loop.Result{StopReason: loop.StopProviderError, Steps: 1, StepsMax: 3, Errors: []string{"provider: HTTP 500: boom"}})
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", stdout.String())
	}
}

// TestRetriedStreamTerminal: on a terminal, text streams live and escaped;
// a retry after partial text whose stream repeats it goes on where the
// text stopped, and the final answer is not printed a second time at the
// end.
func TestRetriedStreamTerminal(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := testOutput(&stdout, &stderr, true, false)
	retriedStep(o, "Partial answer, \x1b]0;pwned\x07 complete.")
	want := `Partial answer, \x1b]0;pwned\x07 complete.` + "\n"
	if got := stdout.String(); got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

// TestTerminalEscapesEverywhere: on a terminal, nothing the model, a tool or
// a provider wrote reaches it raw: streamed text, the final output printed
// at the end, progress lines and errors.
func TestTerminalEscapesEverywhere(t *testing.T) {
	const evil = "\x1b]0;pwned\x07\x1b[2J\r\u009b"
	var stdout, stderr bytes.Buffer
	o := testOutput(&stdout, &stderr, true, true)
	o.Event(loop.Event{Type: loop.EventStepStart, Agent: "main", Step: 1, StepsMax: 2})
	o.Text("main", 0, evil[:3])
	o.Text("main", 0, evil[3:])
	o.Event(loop.Event{Type: loop.EventToolEnd, Agent: "main", Tool: "t" + evil, IsError: loop.Bool(true), DurationMS: loop.Int64(1)})
	o.Event(loop.Event{Type: loop.EventToolDropped, Agent: "main", Tool: "t", Message: evil})
	o.Event(loop.Event{Type: loop.EventRetry, Agent: "main", Attempt: 1, DelayMS: loop.Int64(1), Message: evil})
	o.Event(loop.Event{Type: loop.EventStepStart, Agent: "main", Step: 2, StepsMax: 2})
	o.Finish(&loop.Result{StopReason: loop.StopMaxSteps, Steps: 2, StepsMax: 2, Output: "out" + evil, Errors: []string{"provider: HTTP 500: " + evil}})
	for name, got := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
		if strings.ContainsAny(got, "\x1b\x07\r\u009b") {
			t.Errorf("%s has a raw control character: %q", name, got)
		}
		if !strings.Contains(got, termtext.Escape(evil)) {
			t.Errorf("%s does not show the escaped text %q: %q", name, termtext.Escape(evil), got)
		}
	}
}

// TestAnswerLineEndedBeforeStderr: with stdout and stderr one file (2>&1)
// or one terminal, whatever is written to stderr comes after the answer's
// line is ended, never on it: on a terminal while the text streams (text
// held for escaping, a trailing \r, is written before the newline), and
// off a terminal when a response is kept (its newline comes with it).
func TestAnswerLineEndedBeforeStderr(t *testing.T) {
	var both bytes.Buffer
	o := testOutput(&both, &both, true, false)
	o.Event(loop.Event{Type: loop.EventStepStart, Agent: "main", Step: 1, StepsMax: 2})
	o.Text("main", 0, "Looking\r")
	fmt.Fprint(o.Con.Err(), "log 1\n")
	o.Text("main", 0, "Done.")
	fmt.Fprint(o.Con.Err(), "log 2\n")
	fmt.Fprint(o.Con.Err(), "log 3\n")
	o.Finish(&loop.Result{StopReason: loop.StopCompleted, Steps: 1, StepsMax: 2, Output: "Looking\rDone."})
	if got, want := both.String(), "Looking\\r\nlog 1\nDone.\nlog 2\nlog 3\n"; got != want {
		t.Errorf("terminal: %q, want %q", got, want)
	}

	both.Reset()
	o = testOutput(&both, &both, false, false)
	o.Event(loop.Event{Type: loop.EventStepStart, Agent: "main", Step: 1, StepsMax: 2})
	o.Text("main", 0, "Done.")
	o.Event(loop.Event{Type: loop.EventMessage, Agent: "main", Msg: &loop.Message{Role: loop.RoleAssistant, Content: "Done."}})
	fmt.Fprint(o.Con.Err(), "log\n")
	o.Finish(&loop.Result{StopReason: loop.StopCompleted, Steps: 1, StepsMax: 2, Output: "Done."})
	if got, want := both.String(), "Done.\nlog\n"; got != want {
		t.Errorf("piped: %q, want %q", got, want)
	}
}
