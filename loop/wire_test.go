package loop

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// wireCorpus holds an event of every type, with the edge cases of the wire
// form: a final step offering nothing, retries without a status or delay,
// results with and without errors, budget and session, a subagent's
// results, a run.end without a result, and messages with tool calls,
// provider data and control characters.
func wireCorpus() []Event {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)
	budget := 4
	child := &Result{Agent: "explore", StopReason: StopBudget, Steps: 2, StepsMax: 4, ToolCalls: 1, Budget: &budget, Output: "child out", Usage: Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}, Errors: []string{}}
	top := &Result{Session: "20250102-030405-abcdef", Agent: "main", StopReason: StopCompleted, Steps: 3, StepsMax: 6, ToolCalls: 2, Output: "done \"quoted\" <html>", Usage: Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}}
	failed := &Result{Agent: "main", StopReason: StopProviderError, Steps: 1, StepsMax: 1, Errors: []string{"provider: HTTP 401: no"}}
	u := Usage{PromptTokens: 300, CompletionTokens: 5, TotalTokens: 305}
	sum := Message{Role: RoleUser, Content: "Summary of earlier conversation: x"}
	asst := Message{Role: RoleAssistant, Content: "a", Reasoning: "r", ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`, Extra: []byte(`{"sig":"x"}`)}, {ID: "c2", Name: "list_dir", Arguments: ""}}}
	toolm := Message{Role: RoleTool, ToolCallID: "c1", Name: "read_file", Content: "alpha\n", IsError: true}
	return []Event{
		{Type: EventRunStart, Time: t0, Agent: "main", StepsMax: 6},
		{Type: EventRunStart, Time: t0, Agent: "explore", Depth: 1, StepsMax: 4},
		{Type: EventStepStart, Time: t0, Agent: "main", Step: 1, StepsMax: 6, Final: Bool(false), Offered: []string{"read_file", "list_dir"}},
		{Type: EventStepStart, Time: t0, Agent: "main", Step: 6, StepsMax: 6, Final: Bool(true)},
		{Type: EventStepStart, Time: t0, Agent: "main", Step: 6, StepsMax: 6, Final: Bool(true), Offered: []string{}},
		{Type: EventStepEnd, Time: t0, Agent: "main", Step: 1, StepsMax: 6, Final: Bool(false), FinishReason: "tool_calls", Usage: &u},
		{Type: EventStepEnd, Time: t0, Agent: "main", Step: 1, StepsMax: 6, Final: Bool(false), Message: "provider_error"},
		{Type: EventToolStart, Time: t0, Agent: "main", Step: 1, StepsMax: 6, CallID: "c1", Tool: "read_file", Arguments: `{"path":"a"}`},
		{Type: EventToolEnd, Time: t0, Agent: "main", Step: 1, StepsMax: 6, CallID: "c1", Tool: "read_file", IsError: Bool(false), DurationMS: Int64(0)},
		{Type: EventToolDropped, Time: t0, Agent: "main", Step: 5, StepsMax: 6, CallID: "c9", Tool: "read_file", Arguments: `{"path":"c.txt"}`, Message: "final step 5 of 6 (budget)"},
		{Type: EventRetry, Time: t0, Agent: "main", Step: 1, StepsMax: 6, Attempt: 1, DelayMS: Int64(12), Status: 503, Message: "provider: HTTP 503"},
		{Type: EventRetry, Time: t0, Agent: "main", Step: 1, StepsMax: 6, Attempt: 2, DelayMS: Int64(0), Message: "network"},
		{Type: EventRetry, Time: t0, Agent: "main", Attempt: 1},
		{Type: EventDoomLoop, Time: t0, Agent: "main", Step: 3, StepsMax: 6, CallID: "c3", Tool: "list_dir", Arguments: `{}`, Message: "warn"},
		{Type: EventBudgetExhausted, Time: t0, Agent: "main", Step: 4, StepsMax: 6, Message: "4 of 4 tool calls used"},
		{Type: EventCompaction, Time: t0, Agent: "main", Step: 3, StepsMax: 6, Usage: &u, Replaced: 3, Kept: 5, Message: "3 older messages replaced", Msg: &sum},
		{Type: EventSubagentStart, Time: t0, Agent: "main", Step: 1, StepsMax: 6, CallID: "p1", Tool: "explore", Arguments: `{"prompt":"look"}`},
		{Type: EventSubagentEnd, Time: t0, Agent: "main", Step: 1, StepsMax: 6, CallID: "p1", Tool: "explore", IsError: Bool(false), DurationMS: Int64(7), Result: child},
		{Type: EventRunEnd, Time: t0, Agent: "explore", Depth: 1, StepsMax: 4, Result: child},
		{Type: EventRunEnd, Time: t0, Agent: "main", StepsMax: 6, Result: top},
		{Type: EventRunEnd, Time: t0, Agent: "main", StepsMax: 1, Result: failed},
		{Type: EventRunEnd, Time: t0, Depth: 0},
		{Type: EventMessage, Time: t0, Agent: "main", Msg: &asst},
		{Type: EventMessage, Time: t0, Agent: "main", Msg: &toolm},
		{Type: EventMessage, Time: t0, Agent: "explore", Depth: 1, Msg: &Message{Role: RoleSystem, Content: "sys \u2028 \x1b[1m"}},
	}
}

// wantWire is the wire form of wireCorpus, one event per line. It is what
// `agenthost run --events` printed for these events before the wire form
// was defined in one place, byte for byte: --events must not change.
const wantWire = `{"type":"run.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"steps_max":6}
{"type":"run.start","time":"2025-01-02T03:04:05.123456789Z","agent":"explore","depth":1,"steps_max":4}
{"type":"step.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"final":false,"tools_offered":["read_file","list_dir"]}
{"type":"step.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":6,"steps_max":6,"final":true,"tools_offered":[]}
{"type":"step.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":6,"steps_max":6,"final":true,"tools_offered":[]}
{"type":"step.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"final":false,"finish_reason":"tool_calls","usage":{"prompt_tokens":300,"completion_tokens":5,"total_tokens":305},"cost":null,"run_cost":null}
{"type":"step.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"final":false,"message":"provider_error","cost":null,"run_cost":null}
{"type":"tool.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"call_id":"c1","tool":"read_file","arguments":"{\"path\":\"a\"}"}
{"type":"tool.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"call_id":"c1","tool":"read_file","is_error":false,"duration_ms":0}
{"type":"tool.dropped","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":5,"steps_max":6,"call_id":"c9","tool":"read_file","arguments":"{\"path\":\"c.txt\"}","message":"final step 5 of 6 (budget)"}
{"type":"retry","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"attempt":1,"delay_ms":12,"status":503,"message":"provider: HTTP 503"}
{"type":"retry","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"attempt":2,"delay_ms":0,"status":0,"message":"network"}
{"type":"retry","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"attempt":1,"delay_ms":null,"status":0}
{"type":"doom_loop","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":3,"steps_max":6,"call_id":"c3","tool":"list_dir","arguments":"{}","message":"warn"}
{"type":"budget.exhausted","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":4,"steps_max":6,"message":"4 of 4 tool calls used"}
{"type":"compaction","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":3,"steps_max":6,"usage":{"prompt_tokens":300,"completion_tokens":5,"total_tokens":305},"replaced":3,"kept":5,"message":"3 older messages replaced","msg":{"role":"user","content":"Summary of earlier conversation: x"}}
{"type":"subagent.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"call_id":"p1","tool":"explore","arguments":"{\"prompt\":\"look\"}"}
{"type":"subagent.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"call_id":"p1","tool":"explore","is_error":false,"duration_ms":7,"stop_reason":"budget","steps":2,"steps_max":4,"tool_calls":1,"budget":4,"output":"child out","usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},"cost":null,"errors":[]}
{"type":"run.end","time":"2025-01-02T03:04:05.123456789Z","agent":"explore","depth":1,"stop_reason":"budget","steps":2,"steps_max":4,"tool_calls":1,"budget":4,"output":"child out","usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},"cost":null,"errors":[]}
{"type":"run.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"session":"20250102-030405-abcdef","stop_reason":"completed","steps":3,"steps_max":6,"tool_calls":2,"budget":null,"output":"done \"quoted\" \u003chtml\u003e","usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15},"cost":null,"errors":[]}
{"type":"run.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"stop_reason":"provider_error","steps":1,"steps_max":1,"tool_calls":0,"budget":null,"output":"","usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0},"cost":null,"errors":["provider: HTTP 401: no"]}
{"type":"run.end","time":"2025-01-02T03:04:05.123456789Z","agent":"","depth":0}
{"type":"message","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"msg":{"role":"assistant","content":"a","reasoning":"r","tool_calls":[{"id":"c1","name":"read_file","arguments":"{\"path\":\"a\"}","extra":{"sig":"x"}},{"id":"c2","name":"list_dir","arguments":""}]}}
{"type":"message","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"msg":{"role":"tool","content":"alpha\n","tool_call_id":"c1","name":"read_file","is_error":true}}
{"type":"message","time":"2025-01-02T03:04:05.123456789Z","agent":"explore","depth":1,"msg":{"role":"system","content":"sys \u2028 \u001b[1m"}}
`

// oldSession is how sessions stored wireCorpus before the wire form: the
// fields as tagged, the result nested under "result". Sessions written so
// are still read.
const oldSession = `{"type":"run.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"steps_max":6}
{"type":"run.start","time":"2025-01-02T03:04:05.123456789Z","agent":"explore","depth":1,"steps_max":4}
{"type":"step.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"final":false,"tools_offered":["read_file","list_dir"]}
{"type":"step.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":6,"steps_max":6,"final":true}
{"type":"step.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":6,"steps_max":6,"final":true}
{"type":"step.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"final":false,"finish_reason":"tool_calls","usage":{"prompt_tokens":300,"completion_tokens":5,"total_tokens":305}}
{"type":"step.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"final":false,"message":"provider_error"}
{"type":"tool.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"call_id":"c1","tool":"read_file","arguments":"{\"path\":\"a\"}"}
{"type":"tool.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"call_id":"c1","tool":"read_file","is_error":false,"duration_ms":0}
{"type":"tool.dropped","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":5,"steps_max":6,"call_id":"c9","tool":"read_file","arguments":"{\"path\":\"c.txt\"}","message":"final step 5 of 6 (budget)"}
{"type":"retry","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"attempt":1,"delay_ms":12,"status":503,"message":"provider: HTTP 503"}
{"type":"retry","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"attempt":2,"delay_ms":0,"message":"network"}
{"type":"retry","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"attempt":1}
{"type":"doom_loop","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":3,"steps_max":6,"call_id":"c3","tool":"list_dir","arguments":"{}","message":"warn"}
{"type":"budget.exhausted","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":4,"steps_max":6,"message":"4 of 4 tool calls used"}
{"type":"compaction","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":3,"steps_max":6,"usage":{"prompt_tokens":300,"completion_tokens":5,"total_tokens":305},"replaced":3,"kept":5,"message":"3 older messages replaced","msg":{"role":"user","content":"Summary of earlier conversation: x"}}
{"type":"subagent.start","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"call_id":"p1","tool":"explore","arguments":"{\"prompt\":\"look\"}"}
{"type":"subagent.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"step":1,"steps_max":6,"call_id":"p1","tool":"explore","is_error":false,"duration_ms":7,"result":{"agent":"explore","stop_reason":"budget","steps":2,"steps_max":4,"tool_calls":1,"budget":4,"output":"child out","usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},"errors":[]}}
{"type":"run.end","time":"2025-01-02T03:04:05.123456789Z","agent":"explore","depth":1,"steps_max":4,"result":{"agent":"explore","stop_reason":"budget","steps":2,"steps_max":4,"tool_calls":1,"budget":4,"output":"child out","usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},"errors":[]}}
{"type":"run.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"steps_max":6,"result":{"session":"20250102-030405-abcdef","agent":"main","stop_reason":"completed","steps":3,"steps_max":6,"tool_calls":2,"budget":null,"output":"done \"quoted\" \u003chtml\u003e","usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15},"errors":null}}
{"type":"run.end","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"steps_max":1,"result":{"agent":"main","stop_reason":"provider_error","steps":1,"steps_max":1,"tool_calls":0,"budget":null,"output":"","usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0},"errors":["provider: HTTP 401: no"]}}
{"type":"run.end","time":"2025-01-02T03:04:05.123456789Z","agent":"","depth":0}
{"type":"message","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"msg":{"role":"assistant","content":"a","reasoning":"r","tool_calls":[{"id":"c1","name":"read_file","arguments":"{\"path\":\"a\"}","extra":{"sig":"x"}},{"id":"c2","name":"list_dir","arguments":""}]}}
{"type":"message","time":"2025-01-02T03:04:05.123456789Z","agent":"main","depth":0,"msg":{"role":"tool","content":"alpha\n","tool_call_id":"c1","name":"read_file","is_error":true}}
{"type":"message","time":"2025-01-02T03:04:05.123456789Z","agent":"explore","depth":1,"msg":{"role":"system","content":"sys \u2028 \u001b[1m"}}
`

func TestWireForm(t *testing.T) {
	var b strings.Builder
	for _, e := range wireCorpus() {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if diff := cmp.Diff(wantWire, b.String()); diff != "" {
		t.Errorf("wire form (-want +got):\n%s", diff)
	}
}

// wireView is what the wire form keeps of e: all of it, except that an
// event with a result keeps only type, time, agent, depth and the result
// (a subagent.end's result without its agent).
func wireView(e Event) Event {
	if e.Result == nil || e.Type == EventStepStart || e.Type == EventRetry {
		return e
	}
	res := *e.Result
	if e.Type == EventSubagentEnd {
		res.Agent = ""
	}
	v := Event{Type: e.Type, Time: e.Time, Agent: e.Agent, Depth: e.Depth, Result: &res}
	if e.Type == EventSubagentEnd {
		v.Step, v.CallID, v.Tool, v.IsError, v.DurationMS = e.Step, e.CallID, e.Tool, e.IsError, e.DurationMS
	}
	return v
}

// readWire decodes text, one event per line, and checks that it holds one
// line per event of wireCorpus.
func readWire(t *testing.T, text string) (lines []string, events []Event) {
	t.Helper()
	lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if n := len(wireCorpus()); len(lines) != n {
		t.Fatalf("%d lines for %d events", len(lines), n)
	}
	events = make([]Event, len(lines))
	for i, line := range lines {
		if err := json.Unmarshal([]byte(line), &events[i]); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	return lines, events
}

// TestWireReadBack: reading the wire form gives back what it keeps of each
// event, and writing that again gives the same bytes.
func TestWireReadBack(t *testing.T) {
	lines, read := readWire(t, wantWire)
	corpus := wireCorpus()
	for i, line := range lines {
		got := read[i]
		if diff := cmp.Diff(wireView(corpus[i]), got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("line %d (%s) read back (-want +got):\n%s", i+1, corpus[i].Type, diff)
		}
		again, err := json.Marshal(got)
		if err != nil || string(again) != line {
			t.Errorf("line %d written again:\n%s\nwant:\n%s (%v)", i+1, again, line, err)
		}
	}
}

// TestWireReadsOldSessions: events stored in the older session form read
// back whole.
func TestWireReadsOldSessions(t *testing.T) {
	_, read := readWire(t, oldSession)
	corpus := wireCorpus()
	for i, got := range read {
		if diff := cmp.Diff(corpus[i], got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("line %d (%s) read back (-want +got):\n%s", i+1, corpus[i].Type, diff)
		}
	}
}
