package loop

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSteps(t *testing.T) {
	tests := []struct {
		name       string
		steps      int
		tools      []string
		finalTools string
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
				called = ts.called()
			}
			if !reflect.DeepEqual(called, tt.wantCalls) {
				t.Errorf("executed %v, want %v", called, tt.wantCalls)
			}
			if res.ToolCalls != len(tt.wantCalls) {
				t.Errorf("ToolCalls = %d, want %d", res.ToolCalls, len(tt.wantCalls))
			}
			if len(m.reqs) != len(tt.wantTools) {
				t.Fatalf("%d requests, want %d", len(m.reqs), len(tt.wantTools))
			}
			for i, req := range m.reqs {
				if got := toolNames(req.Tools); !reflect.DeepEqual(got, tt.wantTools[i]) {
					t.Errorf("request %d tools = %v, want %v", i+1, got, tt.wantTools[i])
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
				} else if !reflect.DeepEqual(e.Offered, want) {
					t.Errorf("step.start %d offers %v, want %v", i, e.Offered, want)
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
		if got, want := ts.called(), []string{"a", "b", "c"}; !reflect.DeepEqual(got, want) {
			t.Errorf("executed %v, want %v", got, want)
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
		if want := []string{"a", "b", "c", "d", "e"}; !reflect.DeepEqual(ids, want) {
			t.Errorf("tool messages answer %v, want %v", ids, want)
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

// asker answers doom-loop questions from a list and records them.
type asker struct {
	answers []Answer
	asked   []string
}

func (a *asker) AskDoomLoop(ctx context.Context, agent string, call ToolCall, count int) Answer {
	a.asked = append(a.asked, fmt.Sprintf("%s %s %d", agent, call.ID, count))
	if len(a.answers) == 0 {
		return AnswerStop
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	return ans
}

func TestDoomLoop(t *testing.T) {
	same := func(id string) ToolCall { return tc(id, "read_file", `{"a":1,"b":2}`) }
	swapped := func(id string) ToolCall { return tc(id, "read_file", `{"b":2, "a":1}`) }
	tests := []struct {
		name       string
		action     string
		threshold  int
		asker      *asker
		script     []reply
		wantCalls  []string
		wantStop   StopReason
		wantDoomEv int
		// wantErr maps call ids not executed to a substring of their result.
		wantErr map[string]string
		wantAsk []string
	}{
		{
			name: "warn, then stop on a second loop", action: DoomWarn,
			script: []reply{
				calls("", same("1")), calls("", swapped("2")), calls("", same("3")), // third refused with a warning
				calls("", same("4")), // still identical: second doom loop → stop
				text("doom summary"),
			},
			wantCalls: []string{"1", "2"}, wantStop: StopDoomLoop, wantDoomEv: 2,
			wantErr: map[string]string{"3": testPrompts.DoomWarn, "4": "doom loop"},
		},
		{
			name: "warn is the default and a different call resets the count", action: "",
			script: []reply{
				calls("", same("1")), calls("", same("2")), calls("", tc("x", "list_dir", `{}`)),
				calls("", same("3")), calls("", same("4")), text("done"),
			},
			wantCalls: []string{"1", "2", "x", "3", "4"}, wantStop: StopCompleted,
		},
		{
			name: "stop", action: DoomStop,
			script: []reply{
				calls("", same("1"), same("2"), same("3"), tc("4", "list_dir", `{}`)),
				text("stopped"),
			},
			wantCalls: []string{"1", "2"}, wantStop: StopDoomLoop, wantDoomEv: 1,
			wantErr: map[string]string{"3": "doom loop", "4": "doom loop"},
		},
		{
			name: "threshold 2", action: DoomStop, threshold: 2,
			script:    []reply{calls("", same("1")), calls("", same("2")), text("stopped")},
			wantCalls: []string{"1"}, wantStop: StopDoomLoop, wantDoomEv: 1,
			wantErr: map[string]string{"2": "doom loop"},
		},
		{
			name: "ask without a terminal acts as stop", action: DoomAsk,
			script:    []reply{calls("", same("1"), same("2"), same("3")), text("stopped")},
			wantCalls: []string{"1", "2"}, wantStop: StopDoomLoop, wantDoomEv: 1,
			wantErr: map[string]string{"3": "doom loop"},
		},
		{
			name: "ask once, then stop", action: DoomAsk, asker: &asker{answers: []Answer{AnswerOnce, AnswerStop}},
			script:    []reply{calls("", same("1"), same("2"), same("3")), calls("", same("4")), text("stopped")},
			wantCalls: []string{"1", "2", "3"}, wantStop: StopDoomLoop, wantDoomEv: 2,
			wantErr: map[string]string{"4": "doom loop"},
			wantAsk: []string{"main 3 3", "main 4 4"},
		},
		{
			name: "ask always disables detection", action: DoomAsk, asker: &asker{answers: []Answer{AnswerAlways}},
			script:    []reply{calls("", same("1"), same("2"), same("3")), calls("", same("4"), same("5")), text("done")},
			wantCalls: []string{"1", "2", "3", "4", "5"}, wantStop: StopCompleted, wantDoomEv: 1,
			wantAsk: []string{"main 3 3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{script: tt.script}
			ts := newTools("read_file", "list_dir")
			a := testAgent(m, ts, 10)
			a.DoomAction, a.DoomThreshold = tt.action, tt.threshold
			r, rec, _ := testRunner()
			if tt.asker != nil {
				r.Asker = tt.asker
			}
			res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
			if got := ts.called(); !reflect.DeepEqual(got, tt.wantCalls) {
				t.Errorf("executed %v, want %v", got, tt.wantCalls)
			}
			if res.StopReason != tt.wantStop {
				t.Errorf("stop %s, want %s", res.StopReason, tt.wantStop)
			}
			if n := len(rec.of(EventDoomLoop)); n != tt.wantDoomEv {
				t.Errorf("%d doom_loop events, want %d", n, tt.wantDoomEv)
			}
			for _, tm := range toolMsgs(res.Messages) {
				want, refused := tt.wantErr[tm.ToolCallID]
				if refused != tm.IsError || refused && !strings.Contains(tm.Content, want) {
					t.Errorf("tool message %s = %q (error %v); want refused %v with %q", tm.ToolCallID, tm.Content, tm.IsError, refused, want)
				}
			}
			if tt.wantStop == StopDoomLoop {
				lr := m.reqs[len(m.reqs)-1]
				if last(lr.Messages).Content != testPrompts.DoomLoop || lr.Tools != nil {
					t.Errorf("final request ends with %+v, tools %v; want the doom-loop prompt and no tools", last(lr.Messages), toolNames(lr.Tools))
				}
			}
			if tt.asker != nil && !reflect.DeepEqual(tt.asker.asked, tt.wantAsk) {
				t.Errorf("asked %v, want %v", tt.asker.asked, tt.wantAsk)
			}
		})
	}
}

func TestCanonicalJSON(t *testing.T) {
	tests := []struct{ a, b string }{
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`},
		{`{"a":{"y":[1,2],"x":null}}`, ` { "a" : { "x":null, "y":[1, 2] } } `},
		{`{"n":1.50}`, `{"n":1.50}`},
	}
	for _, tt := range tests {
		if ca, cb := canonicalJSON(tt.a), canonicalJSON(tt.b); ca != cb {
			t.Errorf("canonicalJSON(%s) = %s, canonicalJSON(%s) = %s; want equal", tt.a, ca, tt.b, cb)
		}
	}
	if canonicalJSON(`{"n":1}`) == canonicalJSON(`{"n":2}`) {
		t.Error("different values share a signature")
	}
	if got := canonicalJSON(`{not json`); got != `{not json` {
		t.Errorf("invalid JSON canonicalised to %q, want the raw text", got)
	}
	if got := canonicalJSON(`{} {}`); got != `{} {}` {
		t.Errorf("trailing data canonicalised to %q, want the raw text", got)
	}
}

func TestToolCallChecks(t *testing.T) {
	tests := []struct {
		name     string
		call     ToolCall
		wantExec *ToolCall // the call as the toolset must receive it; nil: not executed
		wantErr  string    // substring of the error result; "" for success
	}{
		{name: "exact", call: tc("1", "read_file", `{"p":1}`), wantExec: &ToolCall{ID: "1", Name: "read_file", Arguments: `{"p":1}`}},
		{name: "wrong case repaired", call: tc("1", "Read_File", `{"p":1}`), wantExec: &ToolCall{ID: "1", Name: "read_file", Arguments: `{"p":1}`}},
		{name: "empty arguments become {}", call: tc("1", "read_file", ""), wantExec: &ToolCall{ID: "1", Name: "read_file", Arguments: "{}"}},
		{name: "blank arguments become {}", call: tc("1", "read_file", " \n"), wantExec: &ToolCall{ID: "1", Name: "read_file", Arguments: "{}"}},
		{name: "unknown tool", call: tc("1", "delete_everything", `{}`), wantErr: `unknown tool "delete_everything"; available tools: read_file, READ_FILE_X, list_dir, Dup, dup`},
		{name: "ambiguous case is not repaired", call: tc("1", "DUP", `{}`), wantErr: `unknown tool "DUP"`},
		{name: "invalid JSON", call: tc("1", "read_file", `{"p":`), wantErr: "invalid arguments for tool read_file: not valid JSON: unexpected end of JSON input"},
		{name: "array arguments", call: tc("1", "read_file", `[1,2]`), wantErr: "want a JSON object, got an array"},
		{name: "string arguments", call: tc("1", "read_file", `"x"`), wantErr: "want a JSON object, got a string"},
		{name: "null arguments", call: tc("1", "read_file", `null`), wantErr: "want a JSON object, got null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{script: []reply{calls("", tt.call), text("done")}}
			ts := newTools("read_file", "READ_FILE_X", "list_dir", "Dup", "dup")
			r, rec, _ := testRunner()
			res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
			if res.StopReason != StopCompleted {
				t.Errorf("stop %s, want completed", res.StopReason)
			}
			if tt.wantExec == nil {
				if len(ts.calls) != 0 || res.ToolCalls != 0 {
					t.Errorf("executed %+v, want nothing", ts.calls)
				}
			} else if len(ts.calls) != 1 || !reflect.DeepEqual(ts.calls[0], *tt.wantExec) {
				t.Errorf("executed %+v, want %+v", ts.calls, *tt.wantExec)
			}
			tm := toolMsgs(res.Messages)
			if len(tm) != 1 {
				t.Fatalf("%d tool messages, want 1", len(tm))
			}
			if tt.wantErr == "" {
				if tm[0].IsError || tm[0].Name != tt.wantExec.Name {
					t.Errorf("tool message %+v, want a success named %s", tm[0], tt.wantExec.Name)
				}
				// The stored assistant call carries the repaired name and arguments.
				if sc := res.Messages[2].ToolCalls[0]; sc.Name != tt.wantExec.Name || sc.Arguments != tt.wantExec.Arguments {
					t.Errorf("stored call %+v, want name %s args %s", sc, tt.wantExec.Name, tt.wantExec.Arguments)
				}
			} else if !tm[0].IsError || !strings.Contains(tm[0].Content, tt.wantErr) {
				t.Errorf("tool message %+v, want an error containing %q", tm[0], tt.wantErr)
			}
		})
	}
}

func TestCallIDRepair(t *testing.T) {
	m := &fakeModel{script: []reply{
		calls("", tc("", "read_file", `{"n":1}`), tc("dup", "read_file", `{"n":2}`), tc("dup", "read_file", `{"n":3}`)),
		calls("", tc("dup", "read_file", `{"n":4}`)),
		text("done"),
	}}
	ts := newTools("read_file")
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
	ids := ts.called()
	if len(ids) != 4 || ids[1] != "dup" {
		t.Fatalf("executed %v, want 4 calls, the second keeping its id", ids)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || seen[id] {
			t.Errorf("call id %q empty or repeated in %v", id, ids)
		}
		seen[id] = true
	}
	if res.StopReason != StopCompleted {
		t.Errorf("stop %s", res.StopReason)
	}
}

func TestPluginFailure(t *testing.T) {
	m := &fakeModel{script: []reply{
		calls("", tc("1", "crash", `{}`), tc("2", "read_file", `{}`)),
		text("recovered"),
	}}
	ts := newTools("crash", "read_file")
	ts.fn["crash"] = func(context.Context, ToolCall) (ToolResult, error) {
		return ToolResult{}, errors.New("wasm trap: unreachable")
	}
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
	if res.StopReason != StopCompleted || res.Output != "recovered" || res.ToolCalls != 2 {
		t.Errorf("got %s %q calls %d", res.StopReason, res.Output, res.ToolCalls)
	}
	tm := toolMsgs(res.Messages)
	if !tm[0].IsError || tm[0].Content != "plugin failure: wasm trap: unreachable" {
		t.Errorf("crash result %+v", tm[0])
	}
	if tm[1].IsError {
		t.Errorf("second call failed: %+v", tm[1])
	}
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "crash") || !strings.Contains(res.Errors[0], "wasm trap") {
		t.Errorf("Errors = %q", res.Errors)
	}
	ends := rec.of(EventToolEnd)
	if len(ends) != 2 || !*ends[0].IsError || *ends[1].IsError || ends[0].DurationMS == nil {
		t.Errorf("tool.end events %+v", ends)
	}
	if n := len(rec.of(EventToolStart)); n != 2 {
		t.Errorf("%d tool.start events, want 2", n)
	}
}

func TestToolErrorResult(t *testing.T) {
	m := &fakeModel{script: []reply{calls("", tc("1", "read_file", `{}`)), text("ok")}}
	ts := newTools("read_file")
	ts.fn["read_file"] = func(context.Context, ToolCall) (ToolResult, error) {
		return ToolResult{Content: "no such file", IsError: true}, nil
	}
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
	if tm := toolMsgs(res.Messages); !tm[0].IsError || tm[0].Content != "no such file" {
		t.Errorf("tool message %+v", tm[0])
	}
	if len(res.Errors) != 0 {
		t.Errorf("a tool error result is not a plugin failure; Errors = %q", res.Errors)
	}
}

func TestTruncatedResponse(t *testing.T) {
	tr := calls("", tc("1", "read_file", `{"path":"a`))
	tr.resp.Truncated, tr.resp.FinishReason = true, "length"
	m := &fakeModel{script: []reply{tr, calls("", tc("2", "read_file", `{"path":"a"}`)), text("done")}}
	ts := newTools("read_file")
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
	if got := ts.called(); !reflect.DeepEqual(got, []string{"2"}) {
		t.Errorf("executed %v, want [2]", got)
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

func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		policy    RetryPolicy
		script    []reply
		wantStop  StopReason
		wantSlept []time.Duration
		wantRetry []int // status of each retry event
		wantErr   string
	}{
		{
			name:   "retry after is honoured",
			script: []reply{failure(429, true, 1500*time.Millisecond), failure(503, true, 0), text("ok")},
			// 1.5s from the server, then backoff 2s for the second failure.
			wantStop: StopCompleted, wantSlept: []time.Duration{1500 * time.Millisecond, 2 * time.Second}, wantRetry: []int{429, 503},
		},
		{
			name:     "backoff doubles and is capped",
			policy:   RetryPolicy{Attempts: 6, Initial: 500 * time.Millisecond, MaxDelay: 3 * time.Second},
			script:   []reply{failure(500, true, 0), failure(500, true, 0), failure(500, true, 0), failure(500, true, 0), failure(500, true, 0), text("ok")},
			wantStop: StopCompleted, wantSlept: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second},
			wantRetry: []int{500, 500, 500, 500, 500},
		},
		{
			name:     "attempts cap",
			policy:   RetryPolicy{Attempts: 3},
			script:   []reply{failure(502, true, 0), failure(502, true, 0), failure(502, true, 0), text("never")},
			wantStop: StopProviderError, wantSlept: []time.Duration{time.Second, 2 * time.Second}, wantRetry: []int{502, 502},
			wantErr: "giving up after 3 attempts: provider: HTTP 502: status 502",
		},
		{
			name:     "default attempts is 5",
			script:   []reply{failure(0, true, 0), failure(0, true, 0), failure(0, true, 0), failure(0, true, 0), failure(0, true, 0), text("never")},
			wantStop: StopProviderError, wantSlept: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
			wantRetry: []int{0, 0, 0, 0}, wantErr: "giving up after 5 attempts",
		},
		{
			name:     "not retryable",
			script:   []reply{failure(401, false, 0), text("never")},
			wantStop: StopProviderError, wantErr: "provider: HTTP 401: status 401",
		},
		{
			name:     "retry after longer than max delay",
			policy:   RetryPolicy{MaxDelay: 10 * time.Second},
			script:   []reply{failure(429, true, time.Minute), text("never")},
			wantStop: StopProviderError, wantErr: "server asked to wait 1m0s before retrying, more than max_delay 10s",
		},
		{
			name:     "an error that is not a ProviderError",
			script:   []reply{{err: errors.New("cassette: no recorded response")}, text("never")},
			wantStop: StopError, wantErr: "model fake: cassette: no recorded response",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{script: tt.script}
			a := testAgent(m, newTools("read_file"), 3)
			a.Retry = tt.policy
			r, rec, slept := testRunner()
			res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
			if res.StopReason != tt.wantStop {
				t.Errorf("stop %s, want %s", res.StopReason, tt.wantStop)
			}
			if res.Steps != 1 {
				t.Errorf("steps %d, want 1 (retries never consume steps)", res.Steps)
			}
			if n := len(rec.of(EventStepEnd)); n != 1 {
				t.Errorf("%d step.end events, want 1 (also after a failed request)", n)
			}
			if !reflect.DeepEqual(*slept, tt.wantSlept) {
				t.Errorf("slept %v, want %v", *slept, tt.wantSlept)
			}
			retries := rec.of(EventRetry)
			var statuses []int
			for i, e := range retries {
				statuses = append(statuses, e.Status)
				if e.Attempt != i+1 || e.DelayMS == nil || *e.DelayMS != tt.wantSlept[i].Milliseconds() || e.Message == "" {
					t.Errorf("retry event %d = %+v", i, e)
				}
			}
			if !reflect.DeepEqual(statuses, tt.wantRetry) {
				t.Errorf("retry statuses %v, want %v", statuses, tt.wantRetry)
			}
			if tt.wantErr != "" && (len(res.Errors) != 1 || !strings.Contains(res.Errors[0], tt.wantErr)) {
				t.Errorf("Errors = %q, want one containing %q", res.Errors, tt.wantErr)
			}
			if tt.wantErr == "" && len(res.Errors) != 0 {
				t.Errorf("Errors = %q, want none", res.Errors)
			}
		})
	}
}

func TestBackoffJitter(t *testing.T) {
	ru := &run{r: &Runner{Jitter: func() float64 { return 0 }}}
	p := RetryPolicy{Initial: time.Second, MaxDelay: time.Minute}
	if got := ru.backoff(p, 1); got != 800*time.Millisecond {
		t.Errorf("backoff with jitter 0 = %v, want 800ms", got)
	}
	ru.r.Jitter = func() float64 { return 0.999 }
	if got := ru.backoff(p, 3); got < 4790*time.Millisecond || got > 4800*time.Millisecond {
		t.Errorf("backoff of try 3 with jitter 0.999 = %v, want just under 4.8s", got)
	}
	if got := ru.backoff(p, 40); got != time.Minute {
		t.Errorf("backoff of try 40 = %v, want the 1m cap", got)
	}
}

func TestCompaction(t *testing.T) {
	big := func(r reply) reply { r.resp.Usage.PromptTokens = 900; return r }
	m := &fakeModel{script: []reply{
		calls("step one", tc("1", "read_file", `{"n":1}`)),
		calls("step two", tc("2", "read_file", `{"n":2}`)),
		big(calls("", tc("3", "read_file", `{"n":3}`), tc("4", "read_file", `{"n":4}`))),
		text("the summary of it all"), // compaction request
		text("done"),
	}}
	ts := newTools("read_file")
	a := testAgent(m, ts, 10)
	a.ContextWindow = 1000
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopCompleted || res.Steps != 4 || res.Output != "done" {
		t.Errorf("got %s steps %d %q; want completed 4 done (compaction is not a step)", res.StopReason, res.Steps, res.Output)
	}
	if len(m.reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(m.reqs))
	}
	cr := m.reqs[3]
	if cr.Tools != nil || last(cr.Messages).Content != testPrompts.Compaction || cr.Messages[0].Role != RoleSystem {
		t.Errorf("compaction request: tools %v, messages %s", toolNames(cr.Tools), dump(cr.Messages))
	}
	// History before compaction: sys, user, a1, t1, a2, t2, a3 (2 calls), t3, t4.
	// Keeping the last 4 (t2, a3, t3, t4) would split a2 from its result t2,
	// so a2 onwards is kept and user, a1, t1 are summarised.
	if len(cr.Messages) != 1+3+1 || cr.Messages[3].ToolCallID != "1" {
		t.Errorf("compaction request has %d messages, want sys, user, a1, t1, prompt: %s", len(cr.Messages), dump(cr.Messages))
	}
	next := m.reqs[4].Messages
	if len(next) != 7 || next[0].Role != RoleSystem || next[1].Role != RoleUser ||
		next[1].Content != "Summary of earlier conversation: the summary of it all" ||
		next[2].Content != "step two" || len(next[4].ToolCalls) != 2 {
		t.Errorf("request after compaction: %s", dump(next))
	}
	ev := rec.of(EventCompaction)
	if len(ev) != 1 || ev[0].Msg == nil || ev[0].Msg.Content != next[1].Content || ev[0].Usage == nil ||
		ev[0].Replaced != 3 || ev[0].Kept != 5 {
		t.Errorf("compaction events %+v; want replaced 3 (user, a1, t1), kept 5", ev)
	}
	if res.Usage.TotalTokens != 5*12 {
		t.Errorf("usage %+v, want the compaction request included (60 total tokens)", res.Usage)
	}
}

func TestCompactionFailureKeepsHistory(t *testing.T) {
	big := func(r reply) reply { r.resp.Usage.PromptTokens = 900; return r }
	m := &fakeModel{script: []reply{
		calls("", tc("1", "read_file", `{"n":1}`)),
		calls("", tc("2", "read_file", `{"n":2}`)),
		big(calls("", tc("3", "read_file", `{"n":3}`))),
		failure(400, false, 0), // compaction fails
		text("done"),
	}}
	a := testAgent(m, newTools("read_file"), 10)
	a.ContextWindow = 1000
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopCompleted || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "compaction") {
		t.Errorf("got %s errors %q", res.StopReason, res.Errors)
	}
	if got := len(m.reqs[4].Messages); got != 8 {
		t.Errorf("request after failed compaction has %d messages, want the full 8", got)
	}
}

func TestSubagent(t *testing.T) {
	childModel := &fakeModel{script: []reply{
		calls("", tc("k1", "list_dir", `{}`)),
		calls("", tc("k2", "list_dir", `{"p":1}`)),
		text("child found 3 files"),
	}}
	childTools := newTools("list_dir")
	child := &Agent{Name: "explore", Description: "explores", Model: childModel, Tools: childTools, Steps: 3, Prompts: testPrompts, MaxDepth: 3}
	m := &fakeModel{script: []reply{
		calls("", tc("p1", "explore", `{"prompt":"look around"}`)),
		text("parent done"),
	}}
	a := testAgent(m, newTools("read_file"), 5)
	a.Subagents = []*Agent{child}
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})

	if got := toolNames(m.reqs[0].Tools); !reflect.DeepEqual(got, []string{"read_file", "explore"}) {
		t.Errorf("offered %v", got)
	}
	if spec := m.reqs[0].Tools[1]; spec.Description != "explores" || string(spec.InputSchema) != string(subagentSchema) {
		t.Errorf("subagent tool spec %+v", spec)
	}
	if got := childModel.reqs[0].Messages; len(got) != 1 || got[0].Role != RoleUser || got[0].Content != "look around" {
		t.Errorf("child's first request %s", dump(got))
	}
	if lm := last(childModel.reqs[2].Messages); lm.Content != testPrompts.MaxSteps || childModel.reqs[2].Tools != nil {
		t.Errorf("child's third request is not its final step: %+v", lm)
	}
	tm := toolMsgs(res.Messages)
	want := "child found 3 files\n\n" + `{"stop_reason":"max_steps","steps":3,"steps_max":3}`
	if len(tm) != 1 || tm[0].Content != want || tm[0].IsError {
		t.Errorf("subagent result %+v, want %q", tm, want)
	}
	if res.ToolCalls != 1 || res.Steps != 2 || res.StopReason != StopCompleted {
		t.Errorf("parent: calls %d steps %d stop %s", res.ToolCalls, res.Steps, res.StopReason)
	}
	if res.Usage.TotalTokens != 5*12 {
		t.Errorf("parent usage %+v, want children included (60)", res.Usage)
	}
	starts, ends := rec.of(EventSubagentStart), rec.of(EventSubagentEnd)
	if len(starts) != 1 || len(ends) != 1 || ends[0].Result == nil || ends[0].Result.Agent != "explore" || starts[0].Agent != "main" {
		t.Errorf("subagent events %+v %+v", starts, ends)
	}
	var childEvents int
	for _, e := range rec.events {
		if e.Depth == 1 {
			childEvents++
			if e.Agent != "explore" {
				t.Errorf("depth-1 event from agent %q", e.Agent)
			}
		}
	}
	if childEvents == 0 || len(rec.of(EventRunEnd)) != 2 {
		t.Errorf("child events %d, run.end events %d", childEvents, len(rec.of(EventRunEnd)))
	}
	checkHistory(t, ends[0].Result.Messages)
}

func TestSubagentErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     string
		maxDepth int
		child    []reply
		wantErr  string
		wantRun  bool
	}{
		{name: "depth refused", args: `{"prompt":"x"}`, maxDepth: 0, wantErr: "subagent nesting deeper than max_depth 0 refused"},
		{name: "missing prompt", args: `{}`, maxDepth: 3, wantErr: `want {"prompt": string}`},
		{name: "prompt not a string", args: `{"prompt":5}`, maxDepth: 3, wantErr: `want {"prompt": string}`},
		{name: "child provider error", args: `{"prompt":"x"}`, maxDepth: 3, child: []reply{failure(401, false, 0)},
			wantErr: `{"stop_reason":"provider_error","steps":1,"steps_max":2}`, wantRun: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := &fakeModel{script: tt.child}
			child := &Agent{Name: "helper", Model: cm, Steps: 2, MaxDepth: 3}
			m := &fakeModel{script: []reply{calls("", tc("p1", "helper", tt.args)), text("ok")}}
			a := testAgent(m, nil, 5)
			a.Subagents, a.MaxDepth = []*Agent{child}, tt.maxDepth
			r, rec, _ := testRunner()
			res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
			tm := toolMsgs(res.Messages)
			if len(tm) != 1 || !tm[0].IsError || !strings.Contains(tm[0].Content, tt.wantErr) {
				t.Errorf("result %+v, want an error containing %q", tm, tt.wantErr)
			}
			if ran := len(cm.reqs) > 0; ran != tt.wantRun {
				t.Errorf("child ran = %v, want %v", ran, tt.wantRun)
			}
			if wantCalls := map[bool]int{true: 1}[tt.wantRun]; res.ToolCalls != wantCalls {
				t.Errorf("ToolCalls = %d, want %d", res.ToolCalls, wantCalls)
			}
			if tt.wantRun && (len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0], "subagent helper: ")) {
				t.Errorf("Errors = %q", res.Errors)
			}
		})
	}
}

func TestNestedSubagentDepth(t *testing.T) {
	// main → a → b, with max_depth 1: a runs, a's call to b is refused.
	bm := &fakeModel{}
	b := &Agent{Name: "b", Model: bm, Steps: 2, MaxDepth: 1}
	am := &fakeModel{script: []reply{calls("", tc("x", "b", `{"prompt":"deeper"}`)), text("a done")}}
	aa := &Agent{Name: "a", Model: am, Steps: 3, MaxDepth: 1, Subagents: []*Agent{b}}
	m := &fakeModel{script: []reply{calls("", tc("y", "a", `{"prompt":"go"}`)), text("main done")}}
	top := testAgent(m, nil, 3)
	top.MaxDepth, top.Subagents = 1, []*Agent{aa}
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, top, Input{Prompt: "task"})
	if len(am.reqs) != 2 || len(bm.reqs) != 0 {
		t.Errorf("a made %d requests, b %d; want 2 and 0", len(am.reqs), len(bm.reqs))
	}
	if tm := toolMsgs(am.reqs[1].Messages); len(tm) != 1 || !strings.Contains(tm[0].Content, "max_depth 1 refused") {
		t.Errorf("a's call to b answered %+v", tm)
	}
	if res.Output != "main done" {
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
		if got := ts.called(); !reflect.DeepEqual(got, []string{"1", "2"}) {
			t.Errorf("executed %v", got)
		}
		tm := toolMsgs(res.Messages)
		if len(tm) != 3 || tm[0].IsError || !tm[1].IsError || !strings.HasPrefix(tm[1].Content, "aborted") || !tm[2].IsError || !strings.HasPrefix(tm[2].Content, "aborted") {
			t.Errorf("tool messages %s", dump(tm))
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
		child := &Agent{Name: "helper", Model: cm, Steps: 3, MaxDepth: 3}
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
	child := &Agent{Name: "helper", Model: &fakeModel{script: []reply{text("child text")}}, Steps: 1}
	m := &fakeModel{script: []reply{calls("calling", tc("1", "helper", `{"prompt":"x"}`)), text("parent text")}}
	a := testAgent(m, nil, 3)
	a.Subagents = []*Agent{child}
	r, rec, _ := testRunner()
	var got []string
	r.OnText = func(agent string, depth int, s string) { got = append(got, fmt.Sprintf("%s/%d:%s", agent, depth, s)) }
	runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	want := []string{"main/0:calling", "helper/1:child text", "main/0:parent text"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OnText got %v, want %v", got, want)
	}
}

func TestBadAgents(t *testing.T) {
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, &Agent{Name: "nomodel", Steps: 2}, Input{Prompt: "x"})
	if res.StopReason != StopError || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], `"nomodel" has no model`) {
		t.Errorf("got %s %q", res.StopReason, res.Errors)
	}
	res = (&Runner{}).Run(context.Background(), nil, Input{})
	if res.StopReason != StopError {
		t.Errorf("nil agent: %s", res.StopReason)
	}
	// Steps below 1 act as a text-only agent.
	m := &fakeModel{script: []reply{text("hi")}}
	res = (&Runner{}).Run(context.Background(), &Agent{Name: "zero", Model: m, Tools: newTools("read_file")}, Input{Prompt: "x"})
	if res.StopReason != StopCompleted || res.StepsMax != 1 || m.reqs[0].Tools != nil {
		t.Errorf("steps 0: %s max %d", res.StopReason, res.StepsMax)
	}
}

// checkingTools is a Toolset that refuses arguments without a "path" key.
type checkingTools struct{ *fakeTools }

func (c checkingTools) Check(call ToolCall) string {
	if !strings.Contains(call.Arguments, `"path"`) {
		return "invalid arguments for tool " + call.Name + ": missing property 'path'"
	}
	return ""
}

func TestArgumentCheckerRefusesBeforeCounting(t *testing.T) {
	m := &fakeModel{script: []reply{
		calls("", tc("1", "read_file", `{"nopath":1}`)),
		calls("", tc("2", "read_file", `{"path":"a"}`)),
		text("done"),
	}}
	ts := checkingTools{newTools("read_file")}
	r, rec, _ := testRunner()
	a := testAgent(m, ts, 5)
	a.Budget = 1
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if got := ts.called(); len(got) != 1 {
		t.Fatalf("toolset ran %v, want only the valid call", got)
	}
	if res.ToolCalls != 1 {
		t.Errorf("ToolCalls = %d, want 1 (the refused call does not count)", res.ToolCalls)
	}
	var refused string
	for _, msg := range res.Messages {
		if msg.Role == RoleTool && msg.ToolCallID == "1" {
			refused = msg.Content
		}
	}
	if !strings.Contains(refused, "missing property 'path'") {
		t.Errorf("refused call answered %q, want the schema reason", refused)
	}
	for _, ev := range rec.events {
		if ev.Type == EventToolStart && ev.CallID == "1" {
			t.Errorf("tool.start emitted for the refused call")
		}
	}
}
