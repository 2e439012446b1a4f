package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

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

// TestTerminalAskerNeedsInteractiveStdin: without a terminal on stdin nobody
// can answer, so there is no asker (ask acts as stop).
func TestTerminalAskerNeedsInteractiveStdin(t *testing.T) {
	if a := terminalAsker(&env{stdin: strings.NewReader(""), stderr: io.Discard, stderrTTY: true}); a != nil {
		t.Fatal("terminalAsker returned an asker although stdin is not a terminal")
	}
}
