package loop

import (
	"context"
	"strings"
	"testing"
)

func TestFinalStepDropsToolCalls(t *testing.T) {
	tests := []struct {
		name       string
		steps      int
		final      reply
		wantStop   StopReason
		wantOutput string
	}{
		{
			name: "calls with text", steps: 2,
			final:    calls("here is my summary", tc("f1", "read_file", `{"path":"x"}`), tc("f2", "list_dir", `{}`)),
			wantStop: StopMaxSteps, wantOutput: "here is my summary",
		},
		{
			name: "calls without text get a sentinel", steps: 2,
			final:      calls("", tc("f1", "read_file", `{"path":"x"}`), tc("f2", "list_dir", `{}`)),
			wantStop:   StopMaxSteps,
			wantOutput: "[agenthost] stopped: step limit reached (2 of 2 steps); the model returned no summary. Dropped tool calls: read_file, list_dir.",
		},
		{
			name: "empty final response gets a sentinel", steps: 2,
			final:      text(""),
			wantStop:   StopMaxSteps,
			wantOutput: "[agenthost] stopped: step limit reached (2 of 2 steps); the model returned no summary.",
		},
		{
			name: "text-only agent calling tools", steps: 1,
			final:      calls("", tc("f1", "read_file", `{}`)),
			wantStop:   StopMaxSteps,
			wantOutput: "[agenthost] stopped: step limit reached (1 of 1 steps); the model returned no summary. Dropped tool calls: read_file.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := []reply{tt.final}
			if tt.steps == 2 {
				script = []reply{calls("", tc("c1", "list_dir", `{}`)), tt.final}
			}
			m := &fakeModel{script: script}
			ts := newTools("read_file", "list_dir")
			r, rec, _ := testRunner()
			res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, tt.steps), Input{Prompt: "task"})
			if res.StopReason != tt.wantStop || res.Output != tt.wantOutput {
				t.Errorf("got %s %q, want %s %q", res.StopReason, res.Output, tt.wantStop, tt.wantOutput)
			}
			for _, id := range ts.called() {
				if strings.HasPrefix(id, "f") {
					t.Errorf("final-step call %s was executed", id)
				}
			}
			lm := last(res.Messages)
			if lm.Role != RoleAssistant || len(lm.ToolCalls) != 0 || lm.Content != tt.wantOutput {
				t.Errorf("last message = %+v, want assistant %q without tool calls", lm, tt.wantOutput)
			}
			dropped := rec.of(EventToolDropped)
			wantDropped := len(tt.final.resp.Message.ToolCalls)
			if len(dropped) != wantDropped {
				t.Fatalf("%d tool.dropped events, want %d", len(dropped), wantDropped)
			}
			for i, e := range dropped {
				c := tt.final.resp.Message.ToolCalls[i]
				if e.CallID != c.ID || e.Tool != c.Name || e.Arguments != c.Arguments || !strings.Contains(e.Message, "not executed") {
					t.Errorf("tool.dropped %d = %+v, want call %+v and a reason", i, e, c)
				}
			}
		})
	}
}
