package loop

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestStopsTable: each reason is described once; the limits, and only
// they, end with a final step and so have its prompt (with a default) and
// a sentinel; the front ends' classes follow.
func TestStopsTable(t *testing.T) {
	seen := map[StopReason]bool{}
	var limits []StopReason
	ru := &run{a: &Agent{}, res: &Result{}, stepsMax: 3}
	for _, s := range stops {
		if seen[s.reason] {
			t.Errorf("%s is in the table twice", s.reason)
		}
		seen[s.reason] = true
		limit := s.class == ExitLimit
		if limit {
			limits = append(limits, s.reason)
		}
		if (s.prompt != nil) != limit || (s.sentinel != nil) != limit {
			t.Errorf("%s: limit %v, prompt %v, sentinel %v: a limit has both, other reasons neither", s.reason, limit, s.prompt != nil, s.sentinel != nil)
			continue
		}
		if s.check != nil && !limit {
			t.Errorf("%s has a check but is no limit", s.reason)
		}
		if !limit {
			continue
		}
		if ru.limitPrompt(s.reason) == "" {
			t.Errorf("%s has no default prompt", s.reason)
		}
		if got := ru.sentinel(s.reason, nil); !strings.HasPrefix(got, "[agenthost] stopped: ") || strings.Contains(got, "step limit") != (s.reason == StopMaxSteps) {
			t.Errorf("%s: sentinel %q", s.reason, got)
		}
	}
	want := []StopReason{StopBudget, StopDoomLoop, StopTokenLimit, StopCostLimit, StopMaxSteps}
	if !slices.Equal(limits, want) {
		t.Errorf("limits %v, want %v", limits, want)
	}
	for r, c := range map[StopReason]ExitClass{StopCompleted: ExitCompleted, StopAborted: ExitAborted, StopError: ExitFailed,
		StopProviderError: ExitFailed, StopInvalidOutput: ExitFailed, "no_such_reason": ExitFailed, StopCostLimit: ExitLimit} {
		if r.ExitClass() != c {
			t.Errorf("%s: class %d, want %d", r, r.ExitClass(), c)
		}
		broken := r == StopAborted || r == StopError || r == StopProviderError || r == "no_such_reason"
		if r.EndsWithAnswer() != (c == ExitCompleted || c == ExitLimit) || r.IsLimit() != (c == ExitLimit) || r.Broken() != broken {
			t.Errorf("%s: EndsWithAnswer %v, IsLimit %v, Broken %v for class %d", r, r.EndsWithAnswer(), r.IsLimit(), r.Broken(), c)
		}
	}
	if len(StopReasons()) != len(stops) {
		t.Errorf("StopReasons lists %d of %d", len(StopReasons()), len(stops))
	}
}

// TestStopsDocumented: the exit-code table of docs/cli.md gives each stop
// reason the code of its class, so that a reason added to the table (a new
// limit) is documented where users look it up.
func TestStopsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	code := map[ExitClass]string{ExitCompleted: "0", ExitFailed: "1", ExitLimit: "3", ExitAborted: "130"}
	rows := map[string]string{} // code → its row
	for _, line := range strings.Split(string(b), "\n") {
		if c, rest, ok := strings.Cut(strings.TrimPrefix(line, "| "), " | "); ok && strings.HasPrefix(line, "| ") {
			rows[c] = rest
		}
	}
	for _, r := range StopReasons() {
		c := code[r.ExitClass()]
		if !strings.Contains(rows[c], "`"+string(r)+"`") {
			t.Errorf("docs/cli.md, Exit codes: %s (exit %s) is not in the row of code %s: %q", r, c, c, rows[c])
		}
	}
}
