package loop

import (
	"context"
	"math"
	"testing"
)

// used returns r with its usage replaced.
func used(r reply, prompt, completion int) reply {
	r.resp.Usage = Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	return r
}

func TestTokenLimit(t *testing.T) {
	t.Run("projection makes the next step final", func(t *testing.T) {
		// 100+10 used; the next request is projected at 100 tokens: 210 > 200.
		m := &fakeModel{script: []reply{
			used(calls("", tc("a", "read_file", `{}`)), 100, 10),
			used(text("summary"), 120, 5),
		}}
		a := testAgent(m, newTools("read_file"), 10)
		a.Tokens = 200
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
		if res.StopReason != StopTokenLimit || res.Steps != 2 || res.Output != "summary" {
			t.Fatalf("got %s after %d steps, %q", res.StopReason, res.Steps, res.Output)
		}
		if lm := last(m.reqs[1].Messages); lm.Content != testPrompts.Tokens || m.reqs[1].Tools != nil {
			t.Errorf("request 2 is not the final step: tools %v, last %+v", toolNames(m.reqs[1].Tools), lm)
		}
		if res.Usage.TotalTokens != 235 {
			t.Errorf("usage %+v, want 235 tokens (the final step may pass the limit)", res.Usage)
		}
	})
	t.Run("within the limit", func(t *testing.T) {
		m := &fakeModel{script: []reply{
			used(calls("", tc("a", "read_file", `{}`)), 100, 10),
			used(text("done"), 120, 5),
		}}
		a := testAgent(m, newTools("read_file"), 10)
		a.Tokens = 210 // 110 + 100 projected = 210: not past the limit
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
		if res.StopReason != StopCompleted {
			t.Fatalf("got %s, want completed", res.StopReason)
		}
	})
	t.Run("first step estimated from the prompt", func(t *testing.T) {
		m := &fakeModel{script: []reply{used(text("short"), 1000, 5)}}
		a := testAgent(m, newTools("read_file"), 10)
		a.Tokens = 50
		r, rec, _ := testRunner()
		big := string(make([]byte, 400)) // about 100 tokens
		res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: big})
		if res.StopReason != StopTokenLimit || res.Steps != 1 || m.reqs[0].Tools != nil {
			t.Fatalf("got %s after %d steps with tools %v; want token_limit on step 1 without tools", res.StopReason, res.Steps, toolNames(m.reqs[0].Tools))
		}
	})
}

func TestCostLimit(t *testing.T) {
	m := &fakeModel{script: []reply{
		used(calls("", tc("a", "read_file", `{}`)), 1000, 100),
		used(text("summary"), 1200, 50),
	}}
	a := testAgent(m, newTools("read_file"), 10)
	a.Price = &Price{Input: 1, Output: 2, CachedInput: 0.5} // per 1M tokens
	a.Cost = 0.002                                          // 0.0012 used + 0.001 projected
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopCostLimit || res.Steps != 2 {
		t.Fatalf("got %s after %d steps", res.StopReason, res.Steps)
	}
	if lm := last(m.reqs[1].Messages); lm.Content != testPrompts.Cost {
		t.Errorf("final request ends with %+v, want the cost prompt", lm)
	}
	want := (1000*1.0 + 100*2 + 1200*1 + 50*2) / 1e6
	if res.Cost == nil || math.Abs(*res.Cost-want) > 1e-12 {
		t.Errorf("cost %v, want %v", res.Cost, want)
	}
	ends := rec.of(EventStepEnd)
	if len(ends) != 2 || ends[0].Cost == nil || ends[0].RunUsage == nil || ends[1].RunUsage.TotalTokens != 2350 || ends[1].RunCost == nil {
		t.Errorf("step.end events lack cost or run usage: %+v", ends)
	}
}

func TestPriceCost(t *testing.T) {
	p := Price{Input: 2, Output: 8, CachedInput: 1}
	got := p.Cost(Usage{PromptTokens: 1_000_000, CachedTokens: 400_000, CompletionTokens: 500_000})
	if want := 0.6*2 + 0.4*1 + 0.5*8; math.Abs(got-want) > 1e-9 {
		t.Errorf("Cost = %v, want %v", got, want)
	}
}

func TestCostUnknownWithoutPrice(t *testing.T) {
	m := &fakeModel{script: []reply{text("done")}}
	a := testAgent(m, nil, 3)
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.Cost != nil {
		t.Errorf("cost %v, want nil without a price", *res.Cost)
	}
}

func TestUsageEstimated(t *testing.T) {
	noUsage := text("0123456789ab") // 12 bytes of content + "assistant"
	noUsage.resp.Usage = Usage{}
	m := &fakeModel{script: []reply{noUsage}}
	a := testAgent(m, nil, 3)
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if !res.Usage.Estimated || res.Usage.CompletionTokens != (len("assistant")+12+3)/4 || res.Usage.PromptTokens == 0 {
		t.Errorf("usage %+v, want an estimate", res.Usage)
	}
	if e := rec.of(EventStepEnd); len(e) != 1 || !e[0].Usage.Estimated {
		t.Errorf("step.end usage not marked estimated: %+v", e)
	}
}

func TestSubagentUsageCountsForParent(t *testing.T) {
	childModel := &fakeModel{script: []reply{
		used(calls("", tc("k1", "list_dir", `{}`)), 300, 10),
		used(text("child summary"), 320, 10),
	}}
	child := &Agent{Name: "explore", Model: childModel, Tools: newTools("list_dir"), Policy: Policy{StepsMax: 5, Prompts: testPrompts, MaxDepth: 3}}
	m := &fakeModel{script: []reply{
		used(calls("", tc("p1", "explore", `{"prompt":"look"}`)), 100, 10),
		used(text("parent summary"), 200, 10),
	}}
	a := testAgent(m, newTools("read_file"), 10)
	a.Subagents = []*Agent{child}
	a.Tokens = 700 // child step 2: 110+310+300 projected = 720 > 700
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if len(childModel.reqs) != 2 || last(childModel.reqs[1].Messages).Content != testPrompts.Tokens {
		t.Fatalf("the child's second request is not its final step (parent's limit): %d requests", len(childModel.reqs))
	}
	// parent: 110 + child 640 = 750 > 700, so the parent's next step is final.
	if res.StopReason != StopTokenLimit || last(m.reqs[1].Messages).Content != testPrompts.Tokens {
		t.Fatalf("parent stopped %s; its second request ends with %+v", res.StopReason, last(m.reqs[1].Messages))
	}
	if res.Usage.TotalTokens != 110+310+330+210 {
		t.Errorf("parent usage %+v, want the child's included", res.Usage)
	}
}

func TestSubagentOwnLimitEndsOnlyIt(t *testing.T) {
	childModel := &fakeModel{script: []reply{
		used(calls("", tc("k1", "list_dir", `{}`)), 300, 10),
		used(text("child summary"), 320, 10),
	}}
	child := &Agent{Name: "explore", Model: childModel, Tools: newTools("list_dir"), Policy: Policy{StepsMax: 5, Prompts: testPrompts, MaxDepth: 3, Tokens: 500}}
	m := &fakeModel{script: []reply{
		used(calls("", tc("p1", "explore", `{"prompt":"look"}`)), 100, 10),
		used(text("parent done"), 200, 10),
	}}
	a := testAgent(m, newTools("read_file"), 10)
	a.Subagents = []*Agent{child}
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	ends := rec.of(EventSubagentEnd)
	if len(ends) != 1 || ends[0].Result.StopReason != StopTokenLimit {
		t.Fatalf("subagent.end %+v, want the child stopped by token_limit", ends)
	}
	if res.StopReason != StopCompleted || res.Output != "parent done" {
		t.Errorf("parent %s %q, want completed", res.StopReason, res.Output)
	}
}
