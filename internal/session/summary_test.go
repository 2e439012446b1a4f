package session

import (
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// TestSummarize: a session's summary is read from its top-level events
// (a subagent's run.end is in its parent's), sums the usage and cost of
// its finished runs, keeps the last finished run's stop and steps and
// the first prompt, says unfinished when the last run has no run.end,
// and knows the cost only when every run's is known.
func TestSummarize(t *testing.T) {
	usd := func(v float64) *float64 { return &v }
	user := func(depth int, s string) loop.Event {
		return loop.Event{Type: loop.EventMessage, Depth: depth, Msg: &loop.Message{Role: loop.RoleUser, Content: s}}
	}
	end := func(depth int, stop loop.StopReason, steps int, u loop.Usage, cost *float64) loop.Event {
		return loop.Event{Type: loop.EventRunEnd, Depth: depth, Result: &loop.Result{StopReason: stop, Steps: steps, StepsMax: 10, Usage: u, Cost: cost}}
	}
	start := func(depth int) loop.Event { return loop.Event{Type: loop.EventRunStart, Depth: depth} }

	if s := Summarize(nil); s.Finished || s.Runs != 0 || s.Prompt != "" || !s.CostKnown {
		t.Errorf("no events: %+v", s)
	}

	evs := []loop.Event{
		start(0), user(0, "first"),
		start(1), user(1, "sub prompt"), end(1, loop.StopMaxSteps, 7, loop.Usage{TotalTokens: 1000}, nil),
		end(0, loop.StopCompleted, 2, loop.Usage{PromptTokens: 8, CompletionTokens: 2, TotalTokens: 10}, usd(0.5)),
		start(0), user(0, "second"),
		end(0, loop.StopBudget, 3, loop.Usage{PromptTokens: 15, CompletionTokens: 5, TotalTokens: 20, Estimated: true}, usd(0.25)),
	}
	s := Summarize(evs)
	want := Summary{Prompt: "first", Finished: true, Stop: loop.StopBudget, Steps: 3, StepsMax: 10, Runs: 2,
		Usage: loop.Usage{PromptTokens: 23, CompletionTokens: 7, TotalTokens: 30, Estimated: true}, Cost: 0.75, CostKnown: true}
	if s != want {
		t.Errorf("two finished runs:\n got %+v\nwant %+v", s, want)
	}

	// A third run without a price, then a fourth still running.
	evs = append(evs, start(0), end(0, loop.StopCompleted, 1, loop.Usage{TotalTokens: 5}, nil), start(0), user(0, "third"))
	s = Summarize(evs)
	if s.Finished || s.Runs != 3 || s.CostKnown || s.Usage.TotalTokens != 35 || s.Prompt != "first" {
		t.Errorf("an unpriced run, then one running: %+v", s)
	}
}
