package cassette

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// TestDecisionsReplay: the decisions a recording Approver made are lines
// of the cassette; a Player answers the same questions with them in order
// (arguments matched canonically), By replay, a refusal nobody was asked
// about By none; a question it does not hold is denied.
func TestDecisionsReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	r, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	answers := []loop.Decision{
		{Verdict: loop.Allow, By: loop.ByTerminal},
		{Verdict: loop.Deny, By: loop.ByTerminal, Reason: "not twice"},
		{Verdict: loop.Deny, By: loop.ByNone, Reason: "no terminal"},
	}
	inner := loop.ApproverFunc(func(ctx context.Context, q loop.Question) loop.Decision {
		d := answers[0]
		answers = answers[1:]
		return d
	})
	rec := r.WrapApprover(inner)
	q := func(args string) loop.Question {
		return loop.Question{Kind: loop.AskApproval, Agent: "main", Call: loop.ToolCall{ID: "x", Name: "write_file", Arguments: args}}
	}
	rec.Decide(context.Background(), q(`{"a":1,"b":2}`))
	rec.Decide(context.Background(), q(`{"a":1,"b":2}`))
	rec.Decide(context.Background(), q(`{"c":3}`))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), `{"decision":`); n != 3 {
		t.Fatalf("%d decision lines:\n%s", n, b)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Decisions() != 3 || p.Len() != 0 {
		t.Fatalf("loaded %d decisions, %d entries", p.Decisions(), p.Len())
	}
	ap := p.Approver()
	for i, c := range []struct {
		args string
		want loop.Decision
	}{
		{`{"b":2, "a":1}`, loop.Decision{Verdict: loop.Allow, By: loop.ByReplay}},
		{`{"b":2,"a":1}`, loop.Decision{Verdict: loop.Deny, By: loop.ByReplay, Reason: "not twice"}},
		{`{"c":3}`, loop.Decision{Verdict: loop.Deny, By: loop.ByNone, Reason: "no terminal"}},
	} {
		if got := ap.Decide(context.Background(), q(c.args)); got != c.want {
			t.Errorf("question %d: %+v, want %+v", i+1, got, c.want)
		}
	}
	if got := ap.Decide(context.Background(), q(`{"a":1,"b":2}`)); got.Verdict != loop.Deny || got.By != loop.ByReplay || !strings.Contains(got.Reason, "holds no decision") {
		t.Errorf("a question past the recording: %+v", got)
	}
}
