package loop

import (
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/prompts"
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

// TestBlankPromptsUseDefaults: a prompt the agent leaves blank is the text
// of package prompts; one it sets is sent as is.
func TestBlankPromptsUseDefaults(t *testing.T) {
	d := prompts.Default()
	same := tc("", "read_file", `{"a":1}`)
	tests := []struct {
		name    string
		prompts Prompts
		budget  int
		script  []reply
		// want is the content of the last message of request i (1-based).
		want map[int]string
	}{
		{
			name: "max steps", script: []reply{calls("", tc("1", "read_file", `{}`)), text("summary")},
			want: map[int]string{2: d.MaxSteps},
		},
		{
			name: "max steps set by the agent", prompts: Prompts{MaxSteps: "MINE"},
			script: []reply{calls("", tc("1", "read_file", `{}`)), text("summary")},
			want:   map[int]string{2: "MINE"},
		},
		{
			name: "blank is white space too", prompts: Prompts{MaxSteps: " \n"},
			script: []reply{calls("", tc("1", "read_file", `{}`)), text("summary")},
			want:   map[int]string{2: d.MaxSteps},
		},
		{
			name: "budget", budget: 1, script: []reply{calls("", tc("1", "read_file", `{}`), tc("2", "read_file", `{}`)), text("summary")},
			want: map[int]string{2: d.Budget},
		},
		{
			name: "doom warn and doom loop",
			script: []reply{
				calls("", withID(same, "1"), withID(same, "2"), withID(same, "3")),
				calls("", withID(same, "4")), text("summary"),
			},
			want: map[int]string{2: d.DoomWarn, 3: d.DoomLoop},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{script: tt.script}
			a := testAgent(m, newTools("read_file"), len(tt.script))
			a.Prompts, a.Budget = tt.prompts, tt.budget
			r, rec, _ := testRunner()
			runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
			for i, want := range tt.want {
				if i > len(m.reqs) {
					t.Fatalf("%d requests, want at least %d", len(m.reqs), i)
				}
				if got := last(m.reqs[i-1].Messages).Content; got != want {
					t.Errorf("request %d ends with %q, want %q", i, got, want)
				}
			}
		})
	}
}

func withID(c ToolCall, id string) ToolCall { c.ID = id; return c }
