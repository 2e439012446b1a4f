package loop

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSubagent(t *testing.T) {
	childModel := &fakeModel{script: []reply{
		calls("", tc("k1", "list_dir", `{}`)),
		calls("", tc("k2", "list_dir", `{"p":1}`)),
		text("child found 3 files"),
	}}
	childTools := newTools("list_dir")
	child := &Agent{Name: "explore", Description: "explores", Model: childModel, Tools: childTools, Policy: Policy{StepsMax: 3, Prompts: testPrompts, MaxDepth: 3}}
	m := &fakeModel{script: []reply{
		calls("", tc("p1", "explore", `{"prompt":"look around"}`)),
		text("parent done"),
	}}
	a := testAgent(m, newTools("read_file"), 5)
	a.Subagents = []*Agent{child}
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})

	if diff := cmp.Diff([]string{"read_file", "explore"}, toolNames(m.reqs[0].Tools)); diff != "" {
		t.Errorf("offered tools (-want +got):\n%s", diff)
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
		{name: "depth refused", args: `{"prompt":"x"}`, maxDepth: NoSubagents, wantErr: "subagent nesting deeper than max_depth 0 refused"},
		{name: "missing prompt", args: `{}`, maxDepth: 3, wantErr: `want {"prompt": string}`},
		{name: "prompt not a string", args: `{"prompt":5}`, maxDepth: 3, wantErr: `want {"prompt": string}`},
		{name: "child provider error", args: `{"prompt":"x"}`, maxDepth: 3, child: []reply{failure(401, false, 0)},
			wantErr: `{"stop_reason":"provider_error","steps":1,"steps_max":2}`, wantRun: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := &fakeModel{script: tt.child}
			child := &Agent{Name: "helper", Model: cm, Policy: Policy{StepsMax: 2, MaxDepth: 3}}
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
	b := &Agent{Name: "b", Model: bm, Policy: Policy{StepsMax: 2, MaxDepth: 1}}
	am := &fakeModel{script: []reply{calls("", tc("x", "b", `{"prompt":"deeper"}`)), text("a done")}}
	aa := &Agent{Name: "a", Model: am, Subagents: []*Agent{b}, Policy: Policy{StepsMax: 3, MaxDepth: 1}}
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

// TestSessionInResult: Input.Session is the Result's session and run.end's,
// set by the loop itself; a subagent's result carries none (its run is part
// of the parent's session, not a session of its own).
func TestSessionInResult(t *testing.T) {
	child := &Agent{Name: "explore", Model: &fakeModel{script: []reply{text("found")}}, Policy: Policy{StepsMax: 2, Prompts: testPrompts, MaxDepth: 3}}
	m := &fakeModel{script: []reply{calls("", tc("p1", "explore", `{"prompt":"look"}`)), text("done")}}
	a := testAgent(m, nil, 3)
	a.Subagents = []*Agent{child}
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task", Session: "s-1"})
	if res.Session != "s-1" {
		t.Errorf("Result.Session = %q, want s-1", res.Session)
	}
	var top, sub []string
	for _, e := range rec.of(EventRunEnd) {
		if e.Depth == 0 {
			top = append(top, e.Result.Session)
		} else {
			sub = append(sub, e.Result.Session)
		}
	}
	if diff := cmp.Diff([]string{"s-1"}, top); diff != "" {
		t.Errorf("top-level run.end sessions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{""}, sub); diff != "" {
		t.Errorf("subagent run.end sessions (-want +got):\n%s", diff)
	}
	if ends := rec.of(EventSubagentEnd); len(ends) != 1 || ends[0].Result.Session != "" {
		t.Errorf("subagent.end %+v, want one without a session", ends)
	}
}
