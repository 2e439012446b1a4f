package loop_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agenthost/agenthost/loop"
)

// scripted is a Model that plays back fixed responses.
type scripted []loop.Response

func (s *scripted) Stream(ctx context.Context, req loop.Request, onText func(string)) (loop.Response, error) {
	if len(*s) == 0 {
		return loop.Response{}, &loop.ProviderError{Status: 400, Message: "no more responses"}
	}
	r := (*s)[0]
	*s = (*s)[1:]
	return r, nil
}

// clock is a Toolset with one tool.
type clock struct{}

func (clock) Tools() []loop.ToolSpec {
	return []loop.ToolSpec{{Name: "now", Description: "the time", InputSchema: json.RawMessage(`{"type":"object"}`)}}
}

func (clock) Call(ctx context.Context, c loop.ToolCall) (loop.ToolResult, error) {
	return loop.ToolResult{Content: "12:00"}, nil
}

func ExampleRunner_Run() {
	model := &scripted{
		{Message: loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: "c1", Name: "now", Arguments: "{}"}}}},
		{Message: loop.Message{Role: loop.RoleAssistant, Content: "It is noon."}},
	}
	agent := &loop.Agent{Name: "clock", Model: model, Tools: clock{}, Policy: loop.Policy{StepsMax: 5}}
	r := &loop.Runner{Sink: loop.SinkFunc(func(e loop.Event) {
		switch e.Type {
		case loop.EventStepStart:
			fmt.Printf("step %d of %d, tools %v\n", e.Step, e.StepsMax, e.Offered)
		case loop.EventToolEnd:
			fmt.Printf("  %s error=%v\n", e.Tool, *e.IsError)
		}
	})}
	res := r.Run(context.Background(), agent, loop.Input{Prompt: "What time is it?"})
	fmt.Println(res.StopReason, res.Steps, res.ToolCalls, res.Output)
	// Output:
	// step 1 of 5, tools [now]
	//   now error=false
	// step 2 of 5, tools [now]
	// completed 2 1 It is noon.
}
