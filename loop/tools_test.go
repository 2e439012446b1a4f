package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agenthost/agenthost/internal/argcount"
)

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
		{name: "unknown tool", call: tc("1", "delete_everything", `{}`), wantErr: `unknown tool "delete_everything". Available tools: read_file, READ_FILE_X, list_dir, Dup, dup`},
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
			} else if diff := cmp.Diff([]ToolCall{*tt.wantExec}, ts.calls); diff != "" {
				t.Errorf("calls the toolset received (-want +got):\n%s", diff)
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
	ids := ts.calledSorted()
	if len(ids) != 4 || !slices.Contains(ids, "dup") {
		t.Fatalf("executed %v, want 4 calls, the second keeping its id", ids)
	}
	if tm := toolMsgs(res.Messages); len(tm) != 4 || tm[1].ToolCallID != "dup" || tm[1].Content != `ok read_file {"n":2}` {
		t.Errorf("tool messages %s, want the second answering call dup", dump(tm))
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
	ends := rec.of(EventToolEnd) // in the order the calls ended
	slices.SortFunc(ends, func(a, b Event) int { return strings.Compare(a.CallID, b.CallID) })
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

// checkingTools is a Toolset that refuses arguments without a "path" key.
type checkingTools struct{ *fakeTools }

func (c checkingTools) Check(call ToolCall, args map[string]any) (CheckedCall, string) {
	if _, ok := args["path"]; !ok {
		return CheckedCall{}, "invalid arguments for tool " + call.Name + ": missing property 'path'"
	}
	return CheckedCall{ToolCall: call, Checked: args}, ""
}

func (c checkingTools) CallChecked(ctx context.Context, call CheckedCall) (ToolResult, error) {
	return c.Call(ctx, call.ToolCall)
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

// TestUnknownToolSuggests: a call of a tool the agent does not have is an
// error result naming the tool the model likely meant — an MCP server's
// tool written with a dot or without its server's name, a misspelt name —
// and the tools it has; nothing runs.
func TestUnknownToolSuggests(t *testing.T) {
	for _, tt := range []struct{ call, want string }{
		{"fs.read_text_file", `unknown tool "fs.read_text_file". Did you mean "fs__read_text_file"? Available tools: read_file, fs__read_text_file, fs__list_directory`},
		{"read_text_file", `unknown tool "read_text_file". Did you mean "fs__read_text_file"? Available tools: read_file, fs__read_text_file, fs__list_directory`},
		{"reed_file", `unknown tool "reed_file". Did you mean "read_file"? Available tools: read_file, fs__read_text_file, fs__list_directory`},
		{"delete", `unknown tool "delete". Available tools: read_file, fs__read_text_file, fs__list_directory`},
	} {
		m := &fakeModel{script: []reply{calls("", tc("1", tt.call, `{}`)), text("done")}}
		ts := newTools("read_file", "fs__read_text_file", "fs__list_directory")
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
		tm := toolMsgs(res.Messages)
		if len(tm) != 1 || !tm[0].IsError || tm[0].Content != tt.want {
			t.Errorf("call %s: tool messages %s, want the error %q", tt.call, dump(tm), tt.want)
		}
		if len(ts.called()) != 0 || res.ToolCalls != 0 {
			t.Errorf("call %s: executed %v", tt.call, ts.called())
		}
	}
}

// TestParallelCallsRunConcurrently: the calls of one response run at the
// same time: each waits until all three have started (a timeout reports
// the contrary), and the answers keep the order of the calls.
func TestParallelCallsRunConcurrently(t *testing.T) {
	m := &fakeModel{script: []reply{
		calls("", tc("1", "wait", `{"n":1}`), tc("2", "wait", `{"n":2}`), tc("3", "wait", `{"n":3}`)),
		text("done"),
	}}
	ts := newTools("wait")
	var started sync.WaitGroup
	started.Add(3)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	ts.fn["wait"] = func(_ context.Context, c ToolCall) (ToolResult, error) {
		started.Done()
		select {
		case <-all:
			return ToolResult{Content: "together " + c.ID}, nil
		case <-time.After(10 * time.Second):
			return ToolResult{Content: "alone " + c.ID, IsError: true}, nil
		}
	}
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
	tm := toolMsgs(res.Messages)
	var got []string
	for _, m := range tm {
		got = append(got, m.ToolCallID+" "+m.Content)
	}
	if diff := cmp.Diff([]string{"1 together 1", "2 together 2", "3 together 3"}, got); diff != "" {
		t.Errorf("tool messages (-want +got):\n%s", diff)
	}
	if n := len(rec.of(EventToolStart)); n != 3 || len(rec.of(EventToolEnd)) != 3 || res.ToolCalls != 3 {
		t.Errorf("%d tool.start, %d tool.end events, %d tool calls; want 3 each", n, len(rec.of(EventToolEnd)), res.ToolCalls)
	}
}

// recordingChecker is a checking Toolset that records what Check was
// given and what CallChecked receives, and fails any call that did not
// come through Check.
type recordingChecker struct {
	*fakeTools
	mu      sync.Mutex
	args    []map[string]any
	checked []any
}

func (r *recordingChecker) Check(call ToolCall, args map[string]any) (CheckedCall, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.args = append(r.args, args)
	return CheckedCall{ToolCall: call, Checked: len(r.args)}, ""
}

func (r *recordingChecker) CallChecked(ctx context.Context, call CheckedCall) (ToolResult, error) {
	r.mu.Lock()
	r.checked = append(r.checked, call.Checked)
	r.mu.Unlock()
	return r.fakeTools.Call(ctx, call.ToolCall)
}

func (r *recordingChecker) Call(ctx context.Context, call ToolCall) (ToolResult, error) {
	return ToolResult{}, fmt.Errorf("Call of %s: a checked call must run with CallChecked", call.Name)
}

// TestCheckedCallsDecodeOnce: the loop decodes a call's arguments once
// (doom-loop signature, object check and the schema check all use that
// one decoding), hands the decoded object to Check with its numbers exact,
// and runs what Check returned with CallChecked, never Call.
func TestCheckedCallsDecodeOnce(t *testing.T) {
	m := &fakeModel{script: []reply{
		calls("", tc("1", "read_file", `{"path":"a","n":0.1}`), tc("2", "read_file", `{"path":"b","big":12345678901234567890}`)),
		text("done"),
	}}
	ts := &recordingChecker{fakeTools: newTools("read_file")}
	r, rec, _ := testRunner()
	d0, _ := argcount.Counts()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
	d1, _ := argcount.Counts()
	if res.StopReason != StopCompleted || res.ToolCalls != 2 || len(res.Errors) != 0 {
		t.Fatalf("stop %s, %d tool calls, errors %q", res.StopReason, res.ToolCalls, res.Errors)
	}
	if d1-d0 != 2 {
		t.Errorf("arguments of 2 calls decoded %d times, want 2", d1-d0)
	}
	if len(ts.args) != 2 || ts.args[0]["n"] != json.Number("0.1") || ts.args[1]["big"] != json.Number("12345678901234567890") {
		t.Errorf("Check got %v, want the decoded objects with exact numbers", ts.args)
	}
	slices.SortFunc(ts.checked, func(a, b any) int { return a.(int) - b.(int) })
	if !slices.Equal(ts.checked, []any{1, 2}) {
		t.Errorf("CallChecked got %v, want what Check returned for each call", ts.checked)
	}
}

// TestArgumentsRefused: arguments that are not one JSON object are refused
// with encoding/json's own words, a number too large for a float64
// included, before the Toolset sees them.
func TestArgumentsRefused(t *testing.T) {
	for _, tt := range []struct{ args, want string }{
		{`{"n":1e400}`, "invalid arguments for tool read_file: not valid JSON: json: cannot unmarshal number 1e400 into Go value of type float64"},
		{`{"a":1} {"b":2}`, "invalid arguments for tool read_file: not valid JSON: invalid character '{' after top-level value"},
		{`{"a":`, "invalid arguments for tool read_file: not valid JSON: unexpected end of JSON input"},
		{`[1]`, "invalid arguments for tool read_file: want a JSON object, got an array"},
		{`7`, "invalid arguments for tool read_file: want a JSON object, got a number"},
	} {
		args, msg := ParseArguments(tc("1", "read_file", tt.args))
		if msg != tt.want || args != nil {
			t.Errorf("ParseArguments(%s) = %v, %q; want %q", tt.args, args, msg, tt.want)
		}
	}
	if args, msg := ParseArguments(tc("1", "read_file", ` {"n": 1e300} `)); msg != "" || args["n"] != json.Number("1e300") {
		t.Errorf("ParseArguments of a large float: %v, %q", args, msg)
	}
}

// changingTools is a RefreshingToolset whose tools are replaced by set.
type changingTools struct {
	*fakeTools
	version   uint64
	refreshes int
}

func (c *changingTools) Refresh(context.Context) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshes++
	return c.version
}

func (c *changingTools) set(names ...string) {
	ft := newTools(names...)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.specs, c.version = ft.specs, c.version+1
}

// TestToolsRefreshed: a RefreshingToolset is asked before each step that
// offers tools; when its version changed, the step offers its new tools
// (the subagents stay), a call of a tool gone is an unknown tool naming the
// tools offered now, and the final step (no tools) does not ask.
func TestToolsRefreshed(t *testing.T) {
	ts := &changingTools{fakeTools: newTools("open", "gate")}
	m := &fakeModel{script: []reply{
		calls("", tc("1", "open", `{}`)),
		calls("", tc("2", "open", `{}`), tc("3", "gate", `{}`)),
		text("summary"),
	}}
	ts.fn["open"] = func(context.Context, ToolCall) (ToolResult, error) {
		ts.set("gate", "close")
		return ToolResult{Content: "opened"}, nil
	}
	sub := testAgent(&fakeModel{}, nil, 2)
	sub.Name = "helper"
	a := testAgent(m, ts, 3)
	a.Subagents = []*Agent{sub}
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopMaxSteps {
		t.Fatalf("stop %s, want %s", res.StopReason, StopMaxSteps)
	}
	names := func(tools []ToolSpec) []string {
		var out []string
		for _, s := range tools {
			out = append(out, s.Name)
		}
		return out
	}
	if got := names(m.reqs[0].Tools); !slices.Equal(got, []string{"open", "gate", "helper"}) {
		t.Errorf("step 1 offered %v", got)
	}
	if got := names(m.reqs[1].Tools); !slices.Equal(got, []string{"gate", "close", "helper"}) {
		t.Errorf("step 2 offered %v, want the new tools and the subagent", got)
	}
	if len(m.reqs[2].Tools) != 0 {
		t.Errorf("final step offered %v", names(m.reqs[2].Tools))
	}
	if ts.refreshes != 2 {
		t.Errorf("%d refreshes, want 2 (the run's start and step 2)", ts.refreshes)
	}
	starts := rec.of(EventStepStart)
	if len(starts) < 2 || !slices.Equal(starts[1].Offered, []string{"gate", "close", "helper"}) {
		t.Errorf("step 2's step.start: %+v", starts)
	}
	tm := toolMsgs(res.Messages)
	if len(tm) != 3 || !tm[1].IsError || tm[1].Content != `unknown tool "open". Available tools: gate, close, helper` || tm[2].IsError {
		t.Errorf("tool messages %+v", tm)
	}
}
