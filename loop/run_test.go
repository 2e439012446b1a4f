package loop

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agenthost/agenthost/internal/defaults"
)

func TestSteps(t *testing.T) {
	tests := []struct {
		name       string
		steps      int
		tools      []string
		finalTools FinalTools
		script     []reply
		wantStop   StopReason
		wantSteps  int
		wantOutput string
		wantCalls  []string // executed call ids
		// wantTools[i] lists the tool names sent with request i (nil: none).
		wantTools  [][]string
		wantChoice []string // tool_choice per request
		wantFinal  []bool   // request i ends with the host's final prompt
	}{
		{
			name: "steps 1 is text-only", steps: 1, tools: []string{"read_file"},
			script:   []reply{text("hello")},
			wantStop: StopCompleted, wantSteps: 1, wantOutput: "hello",
			wantTools: [][]string{nil}, wantChoice: []string{""}, wantFinal: []bool{false},
		},
		{
			name: "steps 1 ignores none mode", steps: 1, tools: []string{"read_file"}, finalTools: FinalToolsNone,
			script:   []reply{text("hello")},
			wantStop: StopCompleted, wantSteps: 1, wantOutput: "hello",
			wantTools: [][]string{nil}, wantChoice: []string{""}, wantFinal: []bool{false},
		},
		{
			name: "steps 2 is one tool round then text", steps: 2, tools: []string{"read_file"},
			script:   []reply{calls("", tc("c1", "read_file", `{"path":"a"}`)), text("summary")},
			wantStop: StopMaxSteps, wantSteps: 2, wantOutput: "summary", wantCalls: []string{"c1"},
			wantTools: [][]string{{"read_file"}, nil}, wantChoice: []string{"", ""}, wantFinal: []bool{false, true},
		},
		{
			name: "steps 2 completes on step 1", steps: 2, tools: []string{"read_file"},
			script:   []reply{text("done at once")},
			wantStop: StopCompleted, wantSteps: 1, wantOutput: "done at once",
			wantTools: [][]string{{"read_file"}}, wantChoice: []string{""}, wantFinal: []bool{false},
		},
		{
			name: "steps N completes early", steps: 5, tools: []string{"read_file", "list_dir"},
			script: []reply{
				calls("looking", tc("c1", "list_dir", `{}`)),
				calls("", tc("c2", "read_file", `{"path":"a"}`), tc("c3", "read_file", `{"path":"b"}`)),
				text("all done"),
			},
			wantStop: StopCompleted, wantSteps: 3, wantOutput: "all done", wantCalls: []string{"c1", "c2", "c3"},
			wantTools:  [][]string{{"read_file", "list_dir"}, {"read_file", "list_dir"}, {"read_file", "list_dir"}},
			wantChoice: []string{"", "", ""}, wantFinal: []bool{false, false, false},
		},
		{
			name: "steps N reaches the cap", steps: 3, tools: []string{"read_file"},
			script: []reply{
				calls("", tc("c1", "read_file", `{"path":"1"}`)),
				calls("", tc("c2", "read_file", `{"path":"2"}`)),
				text("limit hit; did 1 and 2; 3 remains"),
			},
			wantStop: StopMaxSteps, wantSteps: 3, wantOutput: "limit hit; did 1 and 2; 3 remains", wantCalls: []string{"c1", "c2"},
			wantTools:  [][]string{{"read_file"}, {"read_file"}, nil},
			wantChoice: []string{"", "", ""}, wantFinal: []bool{false, false, true},
		},
		{
			name: "final step none mode keeps tools with tool_choice none", steps: 2, tools: []string{"read_file"}, finalTools: FinalToolsNone,
			script:   []reply{calls("", tc("c1", "read_file", `{}`)), text("summary")},
			wantStop: StopMaxSteps, wantSteps: 2, wantOutput: "summary", wantCalls: []string{"c1"},
			wantTools:  [][]string{{"read_file"}, {"read_file"}},
			wantChoice: []string{"", ToolChoiceNone}, wantFinal: []bool{false, true},
		},
		{
			name: "no tools at all sends no tools field", steps: 3,
			script:   []reply{text("just text")},
			wantStop: StopCompleted, wantSteps: 1, wantOutput: "just text",
			wantTools: [][]string{nil}, wantChoice: []string{""}, wantFinal: []bool{false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{script: tt.script}
			var ts *fakeTools
			a := testAgent(m, nil, tt.steps)
			if tt.tools != nil {
				ts = newTools(tt.tools...)
				a.Tools = ts
			}
			a.FinalStepTools = tt.finalTools
			r, rec, _ := testRunner()
			res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})

			if res.StopReason != tt.wantStop || res.Steps != tt.wantSteps || res.Output != tt.wantOutput {
				t.Errorf("got stop %s, steps %d, output %q; want %s, %d, %q", res.StopReason, res.Steps, res.Output, tt.wantStop, tt.wantSteps, tt.wantOutput)
			}
			var called []string
			if ts != nil {
				called = ts.calledSorted()
			}
			if diff := cmp.Diff(sorted(tt.wantCalls), called); diff != "" {
				t.Errorf("executed calls (-want +got):\n%s", diff)
			}
			if res.ToolCalls != len(tt.wantCalls) {
				t.Errorf("ToolCalls = %d, want %d", res.ToolCalls, len(tt.wantCalls))
			}
			if len(m.reqs) != len(tt.wantTools) {
				t.Fatalf("%d requests, want %d", len(m.reqs), len(tt.wantTools))
			}
			for i, req := range m.reqs {
				if diff := cmp.Diff(tt.wantTools[i], toolNames(req.Tools)); diff != "" {
					t.Errorf("request %d tools (-want +got):\n%s", i+1, diff)
				}
				if req.ToolChoice != tt.wantChoice[i] {
					t.Errorf("request %d tool_choice = %q, want %q", i+1, req.ToolChoice, tt.wantChoice[i])
				}
				lm := last(req.Messages)
				isFinal := lm.Role == RoleUser && lm.Content == testPrompts.MaxSteps
				if isFinal != tt.wantFinal[i] {
					t.Errorf("request %d ends with the final prompt = %v, want %v (last message %+v)", i+1, isFinal, tt.wantFinal[i], lm)
				}
				if req.Messages[0].Role != RoleSystem || req.Messages[0].Content != "SYSTEM" {
					t.Errorf("request %d does not start with the system message", i+1)
				}
			}
			starts := rec.of(EventStepStart)
			if len(starts) != tt.wantSteps {
				t.Fatalf("%d step.start events, want %d", len(starts), tt.wantSteps)
			}
			for i, e := range starts {
				final := i+1 == tt.steps || tt.wantFinal[i]
				if e.Step != i+1 || e.StepsMax != tt.steps || e.Final == nil || *e.Final != final {
					t.Errorf("step.start %d = step %d/%d final %v, want %d/%d final %v", i, e.Step, e.StepsMax, e.Final, i+1, tt.steps, final)
				}
				if want := tt.wantTools[i]; tt.wantChoice[i] == ToolChoiceNone {
					if e.Offered != nil {
						t.Errorf("step.start %d offers %v on a tool_choice none step", i, e.Offered)
					}
				} else if diff := cmp.Diff(want, e.Offered); diff != "" {
					t.Errorf("step.start %d offered tools (-want +got):\n%s", i, diff)
				}
			}
			if got := len(rec.of(EventStepEnd)); got != tt.wantSteps {
				t.Errorf("%d step.end events, want %d", got, tt.wantSteps)
			}
			if want := (Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}); res.Usage.TotalTokens != want.TotalTokens*len(m.reqs) {
				t.Errorf("usage %+v, want %d total tokens", res.Usage, want.TotalTokens*len(m.reqs))
			}
		})
	}
}

func TestTruncatedResponse(t *testing.T) {
	tr := calls("", tc("1", "read_file", `{"path":"a`))
	tr.resp.Truncated, tr.resp.FinishReason = true, "length"
	m := &fakeModel{script: []reply{tr, calls("", tc("2", "read_file", `{"path":"a"}`)), text("done")}}
	ts := newTools("read_file")
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
	if diff := cmp.Diff([]string{"2"}, ts.called()); diff != "" {
		t.Errorf("executed calls (-want +got):\n%s", diff)
	}
	tm := toolMsgs(res.Messages)
	if !tm[0].IsError || !strings.Contains(tm[0].Content, "cut off") {
		t.Errorf("truncated call answered %+v", tm[0])
	}
	if res.StopReason != StopCompleted || res.Steps != 3 {
		t.Errorf("got %s steps %d", res.StopReason, res.Steps)
	}
}

func TestEmptyResponse(t *testing.T) {
	m := &fakeModel{script: []reply{calls("working", tc("1", "read_file", `{}`)), text("")}}
	ts := newTools("read_file")
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
	if res.StopReason != StopCompleted || res.Steps != 2 {
		t.Errorf("got %s steps %d", res.StopReason, res.Steps)
	}
	if lm := last(res.Messages); lm.Role != RoleTool {
		t.Errorf("empty response appended: last message %+v", lm)
	}
	if res.Output != "working" {
		t.Errorf("output %q, want the last assistant text %q", res.Output, "working")
	}
}

func TestHistoryContinues(t *testing.T) {
	prev := []Message{
		{Role: RoleUser, Content: "earlier"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{tc("old", "read_file", `{}`)}},
		{Role: RoleTool, ToolCallID: "old", Name: "read_file", Content: "x"},
		{Role: RoleAssistant, Content: "earlier answer"},
	}
	m := &fakeModel{script: []reply{calls("", tc("old", "read_file", `{"n":1}`)), text("new answer")}}
	ts := newTools("read_file")
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "more", History: prev})
	if got := m.reqs[0].Messages; len(got) != 6 || got[1].Content != "earlier" || got[5].Content != "more" {
		t.Errorf("first request messages %s", dump(got))
	}
	if ts.called()[0] == "old" {
		t.Errorf("a call id from the continued history was reused")
	}
	if res.Output != "new answer" {
		t.Errorf("output %q", res.Output)
	}
}

func TestAbort(t *testing.T) {
	t.Run("in a tool call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		m := &fakeModel{script: []reply{
			calls("", tc("1", "read_file", `{}`), tc("2", "slow", `{}`), tc("3", "read_file", `{"n":3}`)),
			text("never"),
		}}
		ts := newTools("read_file", "slow")
		ts.fn["slow"] = func(ctx context.Context, c ToolCall) (ToolResult, error) {
			cancel()
			<-ctx.Done()
			return ToolResult{}, fmt.Errorf("plugin %s: %w", c.Name, ctx.Err())
		}
		r, rec, _ := testRunner()
		res := runChecked(t, ctx, r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
		if res.StopReason != StopAborted || len(m.reqs) != 1 {
			t.Errorf("got %s after %d requests", res.StopReason, len(m.reqs))
		}
		// The calls of the step run concurrently: the one the abort
		// interrupted is answered as aborted, the others keep their
		// results.
		if diff := cmp.Diff([]string{"1", "2", "3"}, ts.calledSorted()); diff != "" {
			t.Errorf("executed calls (-want +got):\n%s", diff)
		}
		tm := toolMsgs(res.Messages)
		if len(tm) != 3 || tm[0].IsError || tm[2].IsError || tm[2].Content != `ok read_file {"n":3}` {
			t.Errorf("tool messages %s", dump(tm))
		}
		if c := m.script[0].resp.Message.ToolCalls[1]; len(tm) == 3 {
			if diff := cmp.Diff(AbortedAnswer(c), tm[1]); diff != "" {
				t.Errorf("answer to call %s (-want +got):\n%s", c.ID, diff)
			}
		}
		if len(res.Errors) != 0 {
			t.Errorf("an abort is not a plugin failure: Errors = %q", res.Errors)
		}
	})
	t.Run("in a request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		m := &fakeModel{script: []reply{calls("", tc("1", "read_file", `{}`))}, blockOn: 2}
		ts := newTools("read_file")
		ts.fn["read_file"] = func(context.Context, ToolCall) (ToolResult, error) {
			cancel() // the next request sees a cancelled context
			return ToolResult{Content: "data"}, nil
		}
		r, rec, _ := testRunner()
		res := runChecked(t, ctx, r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
		if res.StopReason != StopAborted {
			t.Errorf("stop %s, want aborted", res.StopReason)
		}
		if tm := toolMsgs(res.Messages); len(tm) != 1 || tm[0].Content != "data" {
			t.Errorf("the completed call keeps its result: %s", dump(tm))
		}
	})
	t.Run("in a subagent", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cm := &fakeModel{script: []reply{{before: cancel, err: fmt.Errorf("read: %w", context.Canceled)}}}
		child := &Agent{Name: "helper", Model: cm, Policy: Policy{StepsMax: 3, MaxDepth: 3}}
		m := &fakeModel{script: []reply{calls("", tc("1", "helper", `{"prompt":"x"}`), tc("2", "helper", `{"prompt":"y"}`))}}
		a := testAgent(m, nil, 5)
		a.Subagents = []*Agent{child}
		r, rec, _ := testRunner()
		res := runChecked(t, ctx, r, rec, a, Input{Prompt: "task"})
		if res.StopReason != StopAborted || len(cm.reqs) != 1 {
			t.Errorf("got %s, child requests %d", res.StopReason, len(cm.reqs))
		}
		tm := toolMsgs(res.Messages)
		if len(tm) != 2 || !tm[0].IsError || !strings.Contains(tm[0].Content, `"stop_reason":"aborted"`) || !strings.HasPrefix(tm[1].Content, "aborted") {
			t.Errorf("tool messages %s", dump(tm))
		}
		if len(tm) == 2 {
			if diff := cmp.Diff(AbortedAnswer(tc("2", "helper", `{"prompt":"y"}`)), tm[1]); diff != "" {
				t.Errorf("answer to call 2 (-want +got):\n%s", diff)
			}
		}
	})
	t.Run("during a retry wait", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		m := &fakeModel{script: []reply{failure(503, true, 0), text("never")}}
		r, rec, _ := testRunner()
		r.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
		res := runChecked(t, ctx, r, rec, testAgent(m, nil, 5), Input{Prompt: "task"})
		if res.StopReason != StopAborted || len(m.reqs) != 1 {
			t.Errorf("got %s after %d requests", res.StopReason, len(m.reqs))
		}
	})
}

func TestOnText(t *testing.T) {
	child := &Agent{Name: "helper", Model: &fakeModel{script: []reply{text("child text")}}, Policy: Policy{StepsMax: 1}}
	m := &fakeModel{script: []reply{calls("calling", tc("1", "helper", `{"prompt":"x"}`)), text("parent text")}}
	a := testAgent(m, nil, 3)
	a.Subagents = []*Agent{child}
	r, rec, _ := testRunner()
	var got []string
	r.OnText = func(agent string, depth int, s string) { got = append(got, fmt.Sprintf("%s/%d:%s", agent, depth, s)) }
	runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	want := []string{"main/0:calling", "helper/1:child text", "main/0:parent text"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnText fragments (-want +got):\n%s", diff)
	}
}

func TestBadAgents(t *testing.T) {
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, &Agent{Name: "nomodel", Policy: Policy{StepsMax: 2}}, Input{Prompt: "x"})
	if res.StopReason != StopError || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], `"nomodel" has no model`) {
		t.Errorf("got %s %q", res.StopReason, res.Errors)
	}
	res = (&Runner{}).Run(context.Background(), nil, Input{})
	if res.StopReason != StopError {
		t.Errorf("nil agent: %s", res.StopReason)
	}
}

// TestZeroIsDefault: an Agent's zero values behave as the settings left out
// of agents.hcl (internal/defaults): StepsMax 0 is host.max_steps' default,
// MaxDepth 0 is host.max_depth's default, and NoSubagents refuses every
// subagent, as max_depth = 0 does.
func TestZeroIsDefault(t *testing.T) {
	m := &fakeModel{script: []reply{text("hi")}}
	res := (&Runner{}).Run(context.Background(), &Agent{Name: "zero", Model: m, Tools: newTools("read_file")}, Input{Prompt: "x"})
	if res.StopReason != StopCompleted || res.StepsMax != defaults.MaxSteps || m.reqs[0].Tools == nil {
		t.Errorf("steps 0: %s max %d, tools offered %v; want completed, max %d, tools offered", res.StopReason, res.StepsMax, m.reqs[0].Tools != nil, defaults.MaxSteps)
	}
	for _, tt := range []struct {
		maxDepth int
		wantRun  bool
	}{{0, true}, {NoSubagents, false}, {1, true}} {
		child := &Agent{Name: "helper", Model: &fakeModel{script: []reply{text("child")}}, Policy: Policy{StepsMax: 2}}
		pm := &fakeModel{script: []reply{calls("", tc("p1", "helper", `{"prompt":"x"}`)), text("ok")}}
		a := &Agent{Name: "main", Model: pm, Subagents: []*Agent{child}, Policy: Policy{StepsMax: 3, MaxDepth: tt.maxDepth}}
		res := (&Runner{}).Run(context.Background(), a, Input{Prompt: "x"})
		tm := toolMsgs(res.Messages)
		if len(tm) != 1 || tm[0].IsError == tt.wantRun {
			t.Errorf("MaxDepth %d: answer %+v, want the subagent run: %v", tt.maxDepth, tm, tt.wantRun)
		}
	}
}
