//go:build !notemporal

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// TestRunsShowEscapes: runs show prints the answer of a durable run, model
// text, escaped when stdout is a terminal (as run does), and exact when it
// is not.
func TestRunsShowEscapes(t *testing.T) {
	ri := runInfo{ID: "r1", Agent: "main", Status: "completed", Started: time.Unix(0, 0),
		Result: &loop.Result{Agent: "main", StopReason: loop.StopCompleted, Steps: 1, StepsMax: 5,
			Output: "title \x1b]0;pwned\x07 clear \x1b[2J c1 \u009b31m end"}}
	for _, tty := range []bool{true, false} {
		var out bytes.Buffer
		writeRunInfo(&env{stdout: &out, stdoutTTY: tty}, ri)
		got := out.String()
		raw := strings.ContainsAny(got, "\x1b\x07\u009b")
		if tty && raw {
			t.Errorf("on a terminal, runs show wrote control characters: %q", got)
		}
		if !tty && !strings.Contains(got, ri.Result.Output) {
			t.Errorf("piped, runs show changed the answer: %q", got)
		}
		if !strings.Contains(got, "title") || !strings.Contains(got, "end") {
			t.Errorf("the answer is missing: %q", got)
		}
	}
}
