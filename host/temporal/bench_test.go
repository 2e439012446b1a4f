package temporal

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/temporaltest"
	"github.com/agenthost/agenthost/loop"
)

// benchModel answers a request that ends with a tool result with text, any
// other with one tool call: every run takes two steps.
type benchModel struct{}

func (benchModel) Stream(ctx context.Context, req loop.Request, _ func(string)) (loop.Response, error) {
	if last := req.Messages[len(req.Messages)-1]; last.Role == loop.RoleTool {
		return loop.Response{Message: loop.Message{Role: loop.RoleAssistant, Content: "done"}, Usage: loop.Usage{PromptTokens: 10, CompletionTokens: 1, TotalTokens: 11}}, nil
	}
	return loop.Response{Message: loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{tc("c1", "read", `{"path":"a"}`)}},
		Usage: loop.Usage{PromptTokens: 10, CompletionTokens: 1, TotalTokens: 11}}, nil
}

func benchAgent() *loop.Agent {
	return agent("main", nil, newTools("read"), 10)
}

func checkBench(b *testing.B, res *loop.Result) {
	if res == nil || res.StopReason != loop.StopCompleted || res.Steps != 2 {
		b.Fatalf("run ended %+v, want completed after 2 steps", res)
	}
}

// BenchmarkRun runs the same two-step agent (a tool call, then text) with
// a model and a tool that answer at once: in-process, and through a real
// Temporal dev server with one worker in this process, started and
// followed as `agenthost run --temporal` does. ns/step is the cost of a
// step; the difference is what Temporal adds. The parallel case keeps 20
// runs in flight and reports runs/s through the one worker.
func BenchmarkRun(b *testing.B) {
	a := benchAgent()
	a.Model = benchModel{}
	b.Run("local", func(b *testing.B) {
		r := &loop.Runner{}
		for b.Loop() {
			checkBench(b, r.Run(context.Background(), a, loop.Input{Prompt: "task"}))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/step")
	})
	addr := temporaltest.Start(b)
	c, err := Dial(context.Background(), addr, DefaultNamespace, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	w := NewWorker(c, "bench", fakeAgents{"main": a}, 0, 0)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	one := func(b *testing.B) {
		run, err := Start(context.Background(), c, "bench", NewRunID(), RunInput{Agent: "main", Prompt: "task"})
		if err != nil {
			b.Fatal(err)
		}
		res, err := Follow(context.Background(), c, run.GetID(), run.GetRunID(), func(loop.Event) {})
		if err != nil {
			b.Fatal(err)
		}
		checkBench(b, res)
	}
	b.Run("temporal", func(b *testing.B) {
		for b.Loop() {
			one(b)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/step")
	})
	b.Run("temporal-get-only", func(b *testing.B) {
		for b.Loop() {
			run, err := Start(context.Background(), c, "bench", NewRunID(), RunInput{Agent: "main", Prompt: "task"})
			if err != nil {
				b.Fatal(err)
			}
			var res loop.Result
			if err := run.Get(context.Background(), &res); err != nil {
				b.Fatal(err)
			}
			checkBench(b, &res)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/step")
	})
	b.Run("temporal-20-in-flight", func(b *testing.B) {
		sem := make(chan struct{}, 20)
		var wg sync.WaitGroup
		start := time.Now()
		for range b.N {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				one(b)
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
	})
}
