package loop

import (
	"context"
	"testing"
)

// stepModel answers with one tool call, then with text: a run of two steps.
type stepModel struct{ n int }

var (
	benchCall = Response{Message: Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}}}
	benchText = Response{Message: Message{Role: RoleAssistant, Content: "done"}}
)

func (m *stepModel) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	m.n++
	if m.n%2 == 1 {
		return benchCall, nil
	}
	return benchText, nil
}

// BenchmarkStep measures the loop's own cost per step: one request to a
// trivial model plus one tool call, with events discarded.
func BenchmarkStep(b *testing.B) {
	a := &Agent{Name: "bench", Model: &stepModel{}, Tools: newTools("read_file"), Policy: Policy{StepsMax: 10, System: "sys"}}
	r := &Runner{Sink: SinkFunc(func(Event) {})}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res := r.Run(ctx, a, Input{Prompt: "task"})
		if res.StopReason != StopCompleted || res.Steps != 2 {
			b.Fatalf("got %s after %d steps", res.StopReason, res.Steps)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/step")
}
