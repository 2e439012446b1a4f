package loop

import (
	"context"
	"errors"
	"testing"
)

// TestSample: a tool's Sample request goes to the agent's model, its usage
// is charged to the run, a request the token limit would not allow is
// refused unsent, and outside a tool call Sample is ErrNoRun.
func TestSample(t *testing.T) {
	t.Run("charged to the run", func(t *testing.T) {
		m := &fakeModel{script: []reply{
			used(calls("", tc("a", "summarise", `{}`)), 100, 10),
			used(text("a summary"), 30, 7),
			used(text("done"), 120, 5),
		}}
		tools := newTools("summarise")
		var got string
		tools.fn["summarise"] = func(ctx context.Context, c ToolCall) (ToolResult, error) {
			resp, model, err := Sample(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "summarise this"}}})
			if err != nil {
				return ToolResult{}, err
			}
			got = resp.Message.Content + " by " + model
			return ToolResult{Content: got}, nil
		}
		a := testAgent(m, tools, 10)
		a.ModelID = "the-model"
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
		if res.StopReason != StopCompleted || got != "a summary by the-model" {
			t.Fatalf("got %s, tool saw %q", res.StopReason, got)
		}
		if res.Usage.TotalTokens != 110+37+125 {
			t.Errorf("usage %+v, want %d tokens: the sampling request's count", res.Usage, 110+37+125)
		}
	})
	t.Run("refused past the token limit", func(t *testing.T) {
		m := &fakeModel{script: []reply{
			used(calls("", tc("a", "summarise", `{}`)), 100, 10),
			used(text("done"), 120, 5),
		}}
		tools := newTools("summarise")
		var serr *SpendLimitError
		tools.fn["summarise"] = func(ctx context.Context, c ToolCall) (ToolResult, error) {
			_, _, err := Sample(ctx, Request{Messages: []Message{{Role: RoleUser, Content: string(make([]byte, 400))}}})
			errors.As(err, &serr)
			return ToolResult{Content: "refused", IsError: true}, nil
		}
		a := testAgent(m, tools, 10)
		a.Tokens = 200 // 110 used + about 100 for the sampling request: past it
		r, rec, _ := testRunner()
		runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
		if serr == nil || serr.Reason != StopTokenLimit {
			t.Fatalf("Sample error %v, want a token_limit SpendLimitError", serr)
		}
		if len(m.reqs) != 2 {
			t.Errorf("%d model requests, want 2: the sampling request is not sent", len(m.reqs))
		}
	})
	t.Run("parallel calls", func(t *testing.T) {
		m := &fakeModel{script: []reply{
			used(calls("", tc("a", "summarise", `{}`), tc("b", "summarise", `{}`)), 100, 10),
			used(text("one"), 30, 7),
			used(text("two"), 30, 7),
			used(text("done"), 120, 5),
		}}
		tools := newTools("summarise")
		tools.fn["summarise"] = func(ctx context.Context, c ToolCall) (ToolResult, error) {
			resp, _, err := Sample(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "summarise " + c.ID}}})
			if err != nil {
				return ToolResult{}, err
			}
			return ToolResult{Content: resp.Message.Content}, nil
		}
		a := testAgent(m, tools, 10)
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
		if res.Usage.TotalTokens != 110+2*37+125 {
			t.Errorf("usage %+v, want %d tokens", res.Usage, 110+2*37+125)
		}
	})
	t.Run("outside a run", func(t *testing.T) {
		if _, _, err := Sample(context.Background(), Request{}); !errors.Is(err, ErrNoRun) {
			t.Fatalf("got %v, want ErrNoRun", err)
		}
	})
}
