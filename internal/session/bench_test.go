package session

import (
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// stepEvents are the events of one step that calls one tool, as the loop
// emits them: what a session appends per step of BenchmarkRunSteps.
func stepEvents() []loop.Event {
	t0 := time.Now()
	u := loop.Usage{PromptTokens: 1200, CompletionTokens: 20, TotalTokens: 1220}
	call := loop.ToolCall{ID: "call_17_1", Name: "read_file", Arguments: `{"path":"notes/file-17.txt"}`}
	return []loop.Event{
		{Type: loop.EventStepStart, Time: t0, Agent: "main", Step: 17, StepsMax: 200, Final: loop.Bool(false), Offered: []string{"read_file"}},
		{Type: loop.EventMessage, Time: t0, Agent: "main", Msg: &loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{call}}},
		{Type: loop.EventToolStart, Time: t0, Agent: "main", Step: 17, StepsMax: 200, CallID: call.ID, Tool: call.Name, Arguments: call.Arguments},
		{Type: loop.EventToolEnd, Time: t0, Agent: "main", Step: 17, StepsMax: 200, CallID: call.ID, Tool: call.Name, IsError: loop.Bool(false), DurationMS: loop.Int64(0)},
		{Type: loop.EventMessage, Time: t0, Agent: "main", Msg: &loop.Message{Role: loop.RoleTool, ToolCallID: call.ID, Name: call.Name,
			Content: "line one of the file\nline two, with \"quotes\" and <tags>\n"}},
		{Type: loop.EventStepEnd, Time: t0, Agent: "main", Step: 17, StepsMax: 200, Final: loop.Bool(false), FinishReason: "tool_calls", Usage: &u, RunUsage: &u},
	}
}

// BenchmarkEmit appends the events of a step to a session file; ns/op and
// allocs/op are per event.
func BenchmarkEmit(b *testing.B) {
	s, err := Create(b.TempDir(), Meta{Agent: "main"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	evs := stepEvents()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.Emit(evs[i%len(evs)])
		i++
	}
}
