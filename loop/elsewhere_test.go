package loop

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestSubagentElsewhere runs a parent whose token and cost limits a
// subagent's requests reach, once in-process and once with Runner.Subagent
// handing the child to a second Runner (as a child workflow does): the
// requests both models see, the events and the results must be the same.
func TestSubagentElsewhere(t *testing.T) {
	scenario := func() (*Agent, *fakeModel, *fakeModel) {
		childModel := &fakeModel{script: []reply{
			used(calls("", tc("k1", "list_dir", `{}`)), 300, 10),
			used(text("child summary"), 320, 10),
		}}
		child := &Agent{
			Name:  "explore",
			Model: childModel,
			Tools: newTools("list_dir"),
			Policy: Policy{
				StepsMax: 5,
				Prompts:  testPrompts,
				MaxDepth: 3,
				Price:    &Price{Input: 1, Output: 2, CachedInput: 1},
			},
		}
		m := &fakeModel{script: []reply{
			used(calls("", tc("p1", "explore", `{"prompt":"look"}`)), 100, 10),
			used(text("parent summary"), 200, 10),
		}}
		a := testAgent(m, newTools("read_file"), 10)
		a.Price = &Price{Input: 1, Output: 2, CachedInput: 1}
		a.Subagents = []*Agent{child}
		a.Tokens = 700 // child step 2: 110+310+300 projected = 720 > 700
		a.Cost = 1
		return a, m, childModel
	}
	clock := func() func() time.Time {
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		return func() time.Time { t0 = t0.Add(time.Millisecond); return t0 }
	}

	a1, m1, c1 := scenario()
	r1, rec1, _ := testRunner()
	r1.Now = clock()
	res1 := runChecked(t, context.Background(), r1, rec1, a1, Input{Prompt: "task"})

	a2, m2, c2 := scenario()
	r2, rec2, _ := testRunner()
	r2.Now = clock()
	var handed []SubagentRun
	r2.Subagent = func(ctx context.Context, s SubagentRun) *Result {
		handed = append(handed, s)
		child := &Runner{Sink: r2.Sink, Jitter: r2.Jitter, Sleep: r2.Sleep, Now: r2.Now}
		return child.RunSubagent(ctx, s)
	}
	res2 := runChecked(t, context.Background(), r2, rec2, a2, Input{Prompt: "task"})

	if len(handed) != 1 || handed[0].Depth != 1 || len(handed[0].Above) != 1 || handed[0].Above[0].Used.TotalTokens != 110 {
		t.Errorf("Runner.Subagent got %+v, want one call at depth 1 with the parent's 110 tokens above", handed)
	}
	if diff := cmp.Diff(m1.reqs, m2.reqs); diff != "" {
		t.Errorf("parent's requests differ (-in-process +elsewhere):\n%s", diff)
	}
	if diff := cmp.Diff(c1.reqs, c2.reqs); diff != "" {
		t.Errorf("child's requests differ (-in-process +elsewhere):\n%s", diff)
	}
	if res1.StopReason != StopTokenLimit {
		t.Errorf("in-process run stopped %s, want token_limit (the scenario lost its point)", res1.StopReason)
	}
	if diff := cmp.Diff(res1, res2); diff != "" {
		t.Errorf("results differ (-in-process +elsewhere):\n%s", diff)
	}
	if diff := cmp.Diff(rec1.events, rec2.events, cmpopts.IgnoreFields(Event{}, "Time")); diff != "" {
		t.Errorf("events differ (-in-process +elsewhere):\n%s", diff)
	}
}
