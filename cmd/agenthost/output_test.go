package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// TestProgressLines drives the terminal progress display with a run's
// events: a line per step with n/cap, a notice when few steps remain (20 %
// of the cap or 2, whichever is larger), tool results with durations and
// retries with their delay.
func TestProgressLines(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := &output{e: &env{stdout: &stdout, stderr: &stderr}, progress: true}
	for step := 1; step <= 5; step++ {
		o.event(loop.Event{Type: loop.EventStepStart, Agent: "build", Step: step, StepsMax: 5, Final: loop.Bool(step == 5)})
		if step == 2 {
			o.event(loop.Event{Type: loop.EventRetry, Agent: "build", Attempt: 1, DelayMS: loop.Int64(1500), Status: 429, Message: "HTTP 429"})
			o.event(loop.Event{Type: loop.EventToolEnd, Agent: "build", Tool: "read_file", IsError: loop.Bool(false), DurationMS: loop.Int64(12)})
			o.event(loop.Event{Type: loop.EventToolEnd, Agent: "explore", Depth: 1, Tool: "list_dir", IsError: loop.Bool(true), DurationMS: loop.Int64(3)})
		}
	}
	o.event(loop.Event{Type: loop.EventMessage, Agent: "build", Msg: &loop.Message{Role: loop.RoleUser, Content: "not shown"}})
	want := `· build step 1/5
· build step 2/5
  retry 1 in 1.5s: HTTP 429
  ↳ read_file ok (12 ms)
    ↳ list_dir error (3 ms)
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
	o := &output{e: &env{stdout: &stdout, stderr: &stderr}}
	o.event(loop.Event{Type: loop.EventStepStart, Agent: "build", Step: 1, StepsMax: 2})
	o.text("build", 0, "Looking.")
	o.text("explore", 1, "child text")
	o.event(loop.Event{Type: loop.EventStepStart, Agent: "build", Step: 2, StepsMax: 2})
	o.finish(&loop.Result{StopReason: loop.StopMaxSteps, Steps: 2, StepsMax: 2, Output: "[agenthost] stopped: step limit reached", Session: "s1"})
	if got, want := stdout.String(), "Looking.\n[agenthost] stopped: step limit reached\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if !strings.Contains(stderr.String(), "stopped: max_steps after 2 of 2 steps") {
		t.Errorf("stderr = %q, want the stop summary", stderr.String())
	}
}
