package loop

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBudget(t *testing.T) {
	t.Run("used up exactly", func(t *testing.T) {
		m := &fakeModel{script: []reply{
			calls("", tc("a", "read_file", `{"n":1}`), tc("b", "read_file", `{"n":2}`)),
			text("budget summary"),
		}}
		ts := newTools("read_file")
		a := testAgent(m, ts, 10)
		a.Budget = 2
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
		if res.StopReason != StopBudget || res.Steps != 2 || res.ToolCalls != 2 || res.Output != "budget summary" {
			t.Errorf("got %s steps %d calls %d %q", res.StopReason, res.Steps, res.ToolCalls, res.Output)
		}
		if res.Budget == nil || *res.Budget != 2 {
			t.Errorf("Budget = %v, want 2", res.Budget)
		}
		req := m.reqs[1]
		if req.Tools != nil || last(req.Messages).Content != testPrompts.Budget || last(req.Messages).Role != RoleUser {
			t.Errorf("request 2 has tools %v and ends with %+v; want no tools and the budget prompt", toolNames(req.Tools), last(req.Messages))
		}
		if n := len(rec.of(EventBudgetExhausted)); n != 1 {
			t.Errorf("%d budget.exhausted events, want 1", n)
		}
	})
	t.Run("parallel overflow", func(t *testing.T) {
		m := &fakeModel{script: []reply{
			calls("", tc("a", "read_file", `{"n":1}`), tc("b", "read_file", `{"n":2}`)),
			calls("", tc("c", "read_file", `{"n":3}`), tc("d", "read_file", `{"n":4}`), tc("e", "read_file", `{"n":5}`)),
			calls("", tc("f", "read_file", `{"n":6}`)),
		}}
		ts := newTools("read_file")
		a := testAgent(m, ts, 10)
		a.Budget = 3
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
		if diff := cmp.Diff([]string{"a", "b", "c"}, ts.calledSorted()); diff != "" {
			t.Errorf("executed calls (-want +got):\n%s", diff)
		}
		if res.StopReason != StopBudget || res.Steps != 3 || res.ToolCalls != 3 {
			t.Errorf("got %s steps %d calls %d; want budget 3 3", res.StopReason, res.Steps, res.ToolCalls)
		}
		var ids []string
		for _, tm := range toolMsgs(res.Messages) {
			ids = append(ids, tm.ToolCallID)
			refused := tm.ToolCallID == "d" || tm.ToolCallID == "e"
			if refused != (tm.IsError && strings.Contains(tm.Content, "tool budget exhausted")) {
				t.Errorf("tool message %s = %+v; refused = %v", tm.ToolCallID, tm, refused)
			}
		}
		if diff := cmp.Diff([]string{"a", "b", "c", "d", "e"}, ids); diff != "" {
			t.Errorf("calls answered by tool messages (-want +got):\n%s", diff)
		}
		if n := len(rec.of(EventBudgetExhausted)); n != 1 {
			t.Errorf("%d budget.exhausted events, want 1", n)
		}
		if lm := last(m.reqs[2].Messages); lm.Content != testPrompts.Budget || m.reqs[2].Tools != nil {
			t.Errorf("request 3 ends with %+v, tools %v; want the budget prompt and no tools", lm, toolNames(m.reqs[2].Tools))
		}
		want := "[agenthost] stopped: tool-call budget exhausted (3 of 3 calls); the model returned no summary. Dropped tool calls: read_file."
		if res.Output != want {
			t.Errorf("output %q, want %q", res.Output, want)
		}
	})
	t.Run("unlimited", func(t *testing.T) {
		var script []reply
		for i := range 6 {
			script = append(script, calls("", tc(fmt.Sprint("c", i), "read_file", fmt.Sprintf(`{"n":%d}`, i))))
		}
		script = append(script, text("done"))
		m := &fakeModel{script: script}
		ts := newTools("read_file")
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 10), Input{Prompt: "task"})
		if res.StopReason != StopCompleted || res.ToolCalls != 6 || res.Budget != nil {
			t.Errorf("got %s calls %d budget %v", res.StopReason, res.ToolCalls, res.Budget)
		}
	})
}
