package loop

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// setAnswerSchema gives a the test's output schema, {"answer": string},
// asked for in mode.
func setAnswerSchema(a *Agent, mode OutputMode) {
	a.OutputSchema = json.RawMessage(`{"type":"object","required":["answer"]}`)
	a.OutputMode = mode
	a.ValidateOutput = func(v any) error {
		m, ok := v.(map[string]any)
		if !ok {
			return errors.New("at '': want object")
		}
		if _, ok := m["answer"].(string); !ok {
			return errors.New("at '/answer': missing or not a string")
		}
		return nil
	}
}

func TestOutputTextOnly(t *testing.T) {
	m := &fakeModel{script: []reply{text("```json\n{ \"answer\": \"42\" }\n```")}}
	a := testAgent(m, nil, 1)
	setAnswerSchema(a, "")
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopCompleted || string(res.OutputJSON) != `{"answer":"42"}` {
		t.Fatalf("stop %s, output_json %s", res.StopReason, res.OutputJSON)
	}
	req := m.reqs[0]
	rf := req.ResponseFormat
	if rf == nil || rf.Type != "json_schema" || rf.Name != "main" || !strings.Contains(string(rf.Schema), `"answer"`) {
		t.Errorf("response_format = %+v", rf)
	}
	if sys := req.Messages[0].Content; !strings.HasPrefix(sys, "SYSTEM\n\n") || !strings.Contains(sys, `"required":["answer"]`) {
		t.Errorf("system message = %q", sys)
	}
	// The run's JSON carries the value.
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"output_json":{"answer":"42"}`) {
		t.Errorf("result JSON %s", b)
	}
}

// TestOutputRepair: a tool step's request carries no response_format; its
// invalid answer gets one repair request (no tools, the schema, the
// errors); a valid repair completes the run, an invalid one ends it with
// invalid_output and the text kept.
func TestOutputRepair(t *testing.T) {
	for _, tt := range []struct {
		name   string
		repair string
		stop   StopReason
		json   string
	}{
		{"repaired", `{"answer":"yes"}`, StopCompleted, `{"answer":"yes"}`},
		{"still invalid", `{"answer": 3}`, StopInvalidOutput, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{script: []reply{calls("", tc("1", "read_file", `{}`)), text("it is yes"), text(tt.repair)}}
			ts := newTools("read_file")
			a := testAgent(m, ts, 5)
			setAnswerSchema(a, OutputJSONSchema)
			r, rec, _ := testRunner()
			res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
			if res.StopReason != tt.stop || string(res.OutputJSON) != tt.json {
				t.Fatalf("stop %s, output_json %s; want %s, %s", res.StopReason, res.OutputJSON, tt.stop, tt.json)
			}
			if len(m.reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(m.reqs))
			}
			if m.reqs[0].ResponseFormat != nil || m.reqs[1].ResponseFormat != nil {
				t.Errorf("tool steps carried response_format")
			}
			rep := m.reqs[2]
			if rep.ResponseFormat == nil || len(rep.Tools) != 0 {
				t.Errorf("repair request: response_format %v, tools %d", rep.ResponseFormat, len(rep.Tools))
			}
			if c := last(rep.Messages).Content; !strings.Contains(c, "not JSON") || !strings.Contains(c, "does not satisfy") {
				t.Errorf("repair message = %q", c)
			}
			if res.Output != tt.repair || res.Steps != 3 {
				t.Errorf("output %q, steps %d", res.Output, res.Steps)
			}
			if tt.stop == StopInvalidOutput && (len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "/answer")) {
				t.Errorf("errors %q", res.Errors)
			}
			if n := len(rec.of(EventStepStart)); n != 3 {
				t.Errorf("%d step.start events, want 3", n)
			}
		})
	}
}

// TestOutputLimit: a limit's final summary is asked in the schema and
// keeps the limit's stop reason.
func TestOutputLimit(t *testing.T) {
	m := &fakeModel{script: []reply{calls("", tc("1", "read_file", `{}`)), text(`{"answer":"partial"}`)}}
	a := testAgent(m, newTools("read_file"), 2)
	setAnswerSchema(a, OutputJSONObject)
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopMaxSteps || string(res.OutputJSON) != `{"answer":"partial"}` {
		t.Fatalf("stop %s, output_json %s", res.StopReason, res.OutputJSON)
	}
	fin := m.reqs[1]
	if fin.ResponseFormat == nil || fin.ResponseFormat.Type != "json_object" || fin.ResponseFormat.Schema != nil {
		t.Errorf("final request response_format = %+v", fin.ResponseFormat)
	}
	if c := last(fin.Messages).Content; !strings.HasPrefix(c, testPrompts.MaxSteps) || !strings.Contains(c, "output schema") {
		t.Errorf("final prompt = %q", c)
	}

	// An invalid summary, still invalid after the repair: the limit
	// stays the stop reason, the failure is listed.
	m = &fakeModel{script: []reply{calls("", tc("1", "read_file", `{}`)), text("no json"), text("still none")}}
	a = testAgent(m, newTools("read_file"), 2)
	setAnswerSchema(a, OutputPrompt)
	r, rec, _ = testRunner()
	res = runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopMaxSteps || res.OutputJSON != nil || len(res.Errors) != 1 {
		t.Fatalf("stop %s, output_json %s, errors %q", res.StopReason, res.OutputJSON, res.Errors)
	}
	for i, req := range m.reqs {
		if req.ResponseFormat != nil {
			t.Errorf("request %d carries response_format in prompt mode", i+1)
		}
	}
}

// TestOutputSubagent: a subagent with a schema returns its JSON value to
// the parent.
func TestOutputSubagent(t *testing.T) {
	sm := &fakeModel{script: []reply{text(`{ "answer" : "x" }`)}}
	sub := testAgent(sm, nil, 1)
	sub.Name = "helper"
	setAnswerSchema(sub, "")
	m := &fakeModel{script: []reply{calls("", tc("1", "helper", `{"prompt":"go"}`)), text("done")}}
	a := testAgent(m, nil, 5)
	a.Subagents = []*Agent{sub}
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	tm := toolMsgs(res.Messages)[0]
	if !strings.HasPrefix(tm.Content, `{"answer":"x"}`+"\n\n") {
		t.Errorf("subagent result = %q", tm.Content)
	}
}
