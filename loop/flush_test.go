package loop

import (
	"context"
	"sync"
	"testing"
	"time"
)

// flushSink counts the events emitted and those flushed, and closes
// endFlushed once a tool.end event has been flushed.
type flushSink struct {
	mu               sync.Mutex
	types            []string
	flushed          int
	endFlushed       chan struct{}
	endFlushedClosed bool
}

func (s *flushSink) Emit(e Event) {
	checkWire(e)
	s.mu.Lock()
	s.types = append(s.types, e.Type)
	s.mu.Unlock()
}

func (s *flushSink) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushed = len(s.types)
	for _, typ := range s.types {
		if typ == EventToolEnd && !s.endFlushedClosed {
			close(s.endFlushed)
			s.endFlushedClosed = true
		}
	}
}

// held is how many emitted events were not flushed yet.
func (s *flushSink) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.types) - s.flushed
}

type flushCheckModel struct {
	Model
	check func(string)
}

func (m flushCheckModel) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	m.check("model request")
	return m.Model.Stream(ctx, req, onText)
}

// TestFlushBeforeWaits: a Flusher sink has been flushed of every event
// before each model request (retries included), each retry's sleep and
// each tool call; while parallel calls run, what the ended ones answered
// is flushed before the loop waits on the others.
func TestFlushBeforeWaits(t *testing.T) {
	sink := &flushSink{endFlushed: make(chan struct{})}
	waits := map[string]int{}
	var mu sync.Mutex
	check := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		waits[what]++
		if n := sink.held(); n != 0 {
			t.Errorf("%s #%d: %d events not flushed", what, waits[what], n)
		}
	}
	m := &fakeModel{script: []reply{
		failure(503, true, 0),
		calls("", tc("c1", "a", `{}`), tc("c2", "b", `{}`)),
		calls("", tc("c3", "a", `{"x":1}`)),
		text("done"),
	}}
	tools := newTools("a", "b")
	var started sync.WaitGroup
	started.Add(2) // the two parallel calls of the second response
	tools.fn["a"] = func(ctx context.Context, c ToolCall) (ToolResult, error) {
		check("tool call")
		if c.ID == "c1" {
			started.Done()
			started.Wait()
		}
		return ToolResult{Content: "ok"}, nil
	}
	tools.fn["b"] = func(ctx context.Context, c ToolCall) (ToolResult, error) {
		check("tool call")
		started.Done()
		started.Wait()
		// c1 ends now; its tool.end must reach the disk while this call
		// still runs.
		select {
		case <-sink.endFlushed:
		case <-time.After(10 * time.Second):
			t.Error("the ended call's tool.end was not flushed while the other call ran")
		}
		return ToolResult{Content: "ok"}, nil
	}
	r := &Runner{
		Sink:   sink,
		Jitter: func() float64 { return 0.5 },
		Sleep: func(ctx context.Context, d time.Duration) error {
			check("retry sleep")
			return ctx.Err()
		},
	}
	a := testAgent(flushCheckModel{Model: m, check: check}, tools, 10)
	a.Retry = RetryPolicy{Attempts: 3, Initial: time.Millisecond, MaxDelay: time.Second}
	res := r.Run(context.Background(), a, Input{Prompt: "go"})
	if res.StopReason != StopCompleted {
		t.Fatalf("stop %s: %v", res.StopReason, res.Errors)
	}
	if waits["model request"] != 4 || waits["tool call"] != 3 || waits["retry sleep"] != 1 {
		t.Fatalf("waits checked: %v", waits)
	}
}
