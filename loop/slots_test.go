package loop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agenthost/agenthost/internal/defaults"
)

// manyCalls is a response of n calls of tool, with ids c001, c002, ...
func manyCalls(tool string, n int) reply {
	cs := make([]ToolCall, n)
	for i := range cs {
		cs[i] = tc(fmt.Sprintf("c%03d", i+1), tool, fmt.Sprintf(`{"n":%d}`, i+1))
	}
	return calls("", cs...)
}

// gate is a tool that holds every call until the test lets it go, and
// counts the calls inside it.
type gate struct {
	mu      sync.Mutex
	cond    *sync.Cond
	waiting []string // ids of the calls inside and not let go, in the order they came
	entered []string // ids of every call that came in, in order
	running int      // calls inside now, let go or not
	most    int      // the most calls inside at once
	let     map[string]bool
}

func newGate() *gate {
	g := &gate{let: map[string]bool{}}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *gate) call(ctx context.Context, c ToolCall) (ToolResult, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running++
	defer func() { g.running-- }()
	g.most = max(g.most, g.running)
	g.waiting = append(g.waiting, c.ID)
	g.entered = append(g.entered, c.ID)
	g.cond.Broadcast()
	stop := context.AfterFunc(ctx, func() { g.mu.Lock(); g.cond.Broadcast(); g.mu.Unlock() })
	defer stop()
	for !g.let[c.ID] && ctx.Err() == nil {
		g.cond.Wait()
	}
	if !g.let[c.ID] {
		g.waiting = slices.DeleteFunc(g.waiting, func(id string) bool { return id == c.ID })
		return ToolResult{}, ctx.Err()
	}
	return ToolResult{Content: "done " + c.ID}, nil
}

// waitInside blocks until n calls wait inside.
func (g *gate) waitInside(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for len(g.waiting) < n {
		g.cond.Wait()
	}
}

// releaseOldest lets the call that came in first among those waiting end.
func (g *gate) releaseOldest() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.let[g.waiting[0]] = true
	g.waiting = g.waiting[1:]
	g.cond.Broadcast()
}

// callIDs are the ids manyCalls gives n calls.
func callIDs(n int) []string {
	var ids []string
	for i := 1; i <= n; i++ {
		ids = append(ids, fmt.Sprintf("c%03d", i))
	}
	return ids
}

// TestParallelCallsBounded: the calls of one response run at most
// Runner.Slots at once, and use all of them: 20 calls, 3 slots, each call
// held until three are inside (or all that are left). The calls start in
// call order (tool.start), and the answers keep it.
func TestParallelCallsBounded(t *testing.T) {
	const n, bound = 20, 3
	m := &fakeModel{script: []reply{manyCalls("wait", n), text("done")}}
	ts := newTools("wait")
	g := newGate()
	ts.fn["wait"] = g.call
	r, rec, _ := testRunner()
	r.Slots = NewSlots(bound)
	go func() {
		for left := n; left > 0; left-- {
			g.waitInside(min(bound, left))
			g.releaseOldest()
		}
	}()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
	if res.StopReason != StopCompleted || res.ToolCalls != n {
		t.Fatalf("stop %s, %d tool calls; want completed, %d", res.StopReason, res.ToolCalls, n)
	}
	if g.most != bound {
		t.Errorf("at most %d calls ran at once, want %d (the bound, reached)", g.most, bound)
	}
	var starts, answers []string
	for _, e := range rec.of(EventToolStart) {
		starts = append(starts, e.CallID)
	}
	for _, tm := range toolMsgs(res.Messages) {
		answers = append(answers, tm.ToolCallID)
		if tm.Content != "done "+tm.ToolCallID {
			t.Errorf("call %s answered %q", tm.ToolCallID, tm.Content)
		}
	}
	if diff := cmp.Diff(callIDs(n), starts); diff != "" {
		t.Errorf("tool.start events (-call order +got):\n%s", diff)
	}
	if diff := cmp.Diff(callIDs(n), answers); diff != "" {
		t.Errorf("answers (-call order +got):\n%s", diff)
	}
	if len(rec.of(EventToolEnd)) != n {
		t.Errorf("%d tool.end events, want %d", len(rec.of(EventToolEnd)), n)
	}
}

// TestParallelCallsOneSlotInOrder: with one slot, the calls reach the
// Toolset one at a time, in call order.
func TestParallelCallsOneSlotInOrder(t *testing.T) {
	const n = 12
	m := &fakeModel{script: []reply{manyCalls("wait", n), text("done")}}
	ts := newTools("wait")
	g := newGate()
	ts.fn["wait"] = g.call
	r, rec, _ := testRunner()
	r.Slots = NewSlots(1)
	go func() {
		for range n {
			g.waitInside(1)
			g.releaseOldest()
		}
	}()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
	if res.StopReason != StopCompleted {
		t.Fatalf("stop %s", res.StopReason)
	}
	if diff := cmp.Diff(callIDs(n), g.entered); diff != "" {
		t.Errorf("calls in the order they reached the Toolset (-call order +got):\n%s", diff)
	}
	if g.most != 1 {
		t.Errorf("%d calls ran at once, want 1", g.most)
	}
}

// TestParallelCallsDefaultBound: without Runner.Slots, a response's calls
// run at most defaults.MaxParallelTools at once.
func TestParallelCallsDefaultBound(t *testing.T) {
	n := defaults.MaxParallelTools * 4
	m := &fakeModel{script: []reply{manyCalls("wait", n), text("done")}}
	ts := newTools("wait")
	g := newGate()
	ts.fn["wait"] = g.call
	r, rec, _ := testRunner()
	go func() {
		for left := n; left > 0; left-- {
			g.waitInside(min(defaults.MaxParallelTools, left))
			g.releaseOldest()
		}
	}()
	res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
	if res.StopReason != StopCompleted || res.ToolCalls != n {
		t.Fatalf("stop %s, %d tool calls", res.StopReason, res.ToolCalls)
	}
	if g.most != defaults.MaxParallelTools {
		t.Errorf("at most %d calls ran at once, want %d", g.most, defaults.MaxParallelTools)
	}
}

// TestParallelCallsShareSlots: two runs sharing one Slots run at most its
// size of calls at once between them, and both complete.
func TestParallelCallsShareSlots(t *testing.T) {
	const n, bound = 10, 2
	ts := newTools("wait")
	g := newGate()
	ts.fn["wait"] = g.call
	slots := NewSlots(bound)
	go func() {
		for left := 2 * n; left > 0; left-- {
			g.waitInside(min(bound, left))
			g.releaseOldest()
		}
	}()
	var wg sync.WaitGroup
	results := make([]*Result, 2)
	for k := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := make([]ToolCall, n)
			for i := range cs {
				cs[i] = tc(fmt.Sprintf("r%d-%02d", k, i), "wait", fmt.Sprintf(`{"n":%d}`, i))
			}
			m := &fakeModel{script: []reply{calls("", cs...), text("done")}}
			results[k] = (&Runner{Slots: slots}).Run(context.Background(), testAgent(m, ts, 5), Input{Prompt: "task"})
		}()
	}
	wg.Wait()
	for k, res := range results {
		if res.StopReason != StopCompleted || res.ToolCalls != n {
			t.Errorf("run %d: stop %s, %d tool calls", k, res.StopReason, res.ToolCalls)
		}
		checkHistory(t, res.Messages)
	}
	if g.most != bound {
		t.Errorf("at most %d calls ran at once across the runs, want %d", g.most, bound)
	}
}

// flushSignal closes flushed at the first Flush after the assistant
// message with tool calls was emitted: the loop is about to wait.
type flushSignal struct {
	mu      sync.Mutex
	rec     recorder
	calls   bool
	flushed chan struct{}
	once    sync.Once
}

func (s *flushSignal) Emit(e Event) {
	s.rec.Emit(e)
	if e.Type == EventMessage && e.Msg.Role == RoleAssistant && len(e.Msg.ToolCalls) > 0 {
		s.mu.Lock()
		s.calls = true
		s.mu.Unlock()
	}
}

func (s *flushSignal) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls {
		s.once.Do(func() { close(s.flushed) })
	}
}

// TestAbortWhileWaitingForSlots: calls waiting for a slot when the run is
// aborted are answered AbortedAnswer without starting (no tool event, the
// Toolset never sees them); the calls running are aborted too.
func TestAbortWhileWaitingForSlots(t *testing.T) {
	t.Run("no slot free", func(t *testing.T) {
		for _, sequential := range []bool{false, true} {
			ctx, cancel := context.WithCancel(context.Background())
			m := &fakeModel{script: []reply{manyCalls("read_file", 5), text("never")}}
			ts := newTools("read_file")
			slots := NewSlots(2)
			for range slots.Size() {
				if err := slots.Acquire(ctx); err != nil {
					t.Fatal(err) // the slots are taken by another run
				}
			}
			sink := &flushSignal{flushed: make(chan struct{})}
			go func() { <-sink.flushed; cancel() }()
			r := &Runner{Sink: sink, Slots: slots, Sequential: sequential}
			res := runChecked(t, ctx, r, &sink.rec, testAgent(m, ts, 5), Input{Prompt: "task"})
			if res.StopReason != StopAborted || res.ToolCalls != 0 || len(ts.called()) != 0 {
				t.Errorf("sequential %v: stop %s, %d tool calls, toolset ran %v; want aborted, none run", sequential, res.StopReason, res.ToolCalls, ts.called())
			}
			for i, tm := range toolMsgs(res.Messages) {
				if diff := cmp.Diff(AbortedAnswer(m.script[0].resp.Message.ToolCalls[i]), tm); diff != "" {
					t.Errorf("sequential %v: answer %d (-want +got):\n%s", sequential, i, diff)
				}
			}
			if n := len(sink.rec.of(EventToolStart)) + len(sink.rec.of(EventToolEnd)); n != 0 {
				t.Errorf("sequential %v: %d tool events for calls that never started", sequential, n)
			}
			cancel()
		}
	})
	t.Run("some running", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		m := &fakeModel{script: []reply{manyCalls("wait", 6), text("never")}}
		ts := newTools("wait")
		g := newGate()
		ts.fn["wait"] = g.call
		go func() { g.waitInside(2); cancel() }()
		r, rec, _ := testRunner()
		r.Slots = NewSlots(2)
		res := runChecked(t, ctx, r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
		if res.StopReason != StopAborted {
			t.Errorf("stop %s, want aborted", res.StopReason)
		}
		if diff := cmp.Diff([]string{"c001", "c002"}, ts.calledSorted()); diff != "" {
			t.Errorf("calls run (-want +got):\n%s", diff)
		}
		tm := toolMsgs(res.Messages)
		for i, c := range m.script[0].resp.Message.ToolCalls {
			if diff := cmp.Diff(AbortedAnswer(c), tm[i]); diff != "" {
				t.Errorf("answer %d (-want +got):\n%s", i, diff)
			}
		}
		if len(rec.of(EventToolStart)) != 2 || len(rec.of(EventToolEnd)) != 2 || res.ToolCalls != 2 {
			t.Errorf("%d tool.start, %d tool.end, %d tool calls; want 2 each", len(rec.of(EventToolStart)), len(rec.of(EventToolEnd)), res.ToolCalls)
		}
	})
}

// TestMaxCallsPerStep: the calls of a response past Agent.MaxCallsPerStep
// get an error result naming the limit and how to raise it; they do not
// run, emit no tool event and do not count toward the budget. The cap
// decides before the budget.
func TestMaxCallsPerStep(t *testing.T) {
	t.Run("set", func(t *testing.T) {
		m := &fakeModel{script: []reply{manyCalls("read_file", 5), text("done")}}
		ts := newTools("read_file")
		a := testAgent(m, ts, 5)
		a.MaxCallsPerStep = 3
		a.Budget = 4
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
		if res.StopReason != StopCompleted || res.ToolCalls != 3 || len(rec.of(EventBudgetExhausted)) != 0 {
			t.Errorf("stop %s, %d tool calls, budget events %d; want completed, 3, none (4 of the budget unused)", res.StopReason, res.ToolCalls, len(rec.of(EventBudgetExhausted)))
		}
		if diff := cmp.Diff([]string{"c001", "c002", "c003"}, ts.calledSorted()); diff != "" {
			t.Errorf("calls run (-want +got):\n%s", diff)
		}
		tm := toolMsgs(res.Messages)
		for _, i := range []int{3, 4} {
			want := fmt.Sprintf("tool call read_file not executed: this response made 5 tool calls and at most 3 of one response run "+
				"(host.max_calls_per_step in agents.hcl; raise it to allow more); this was call %d. Send the calls that matter in your next response.", i+1)
			if !tm[i].IsError || tm[i].Content != want {
				t.Errorf("answer %d = %+v, want the error %q", i, tm[i], want)
			}
		}
		for _, e := range rec.events {
			if (e.Type == EventToolStart || e.Type == EventToolEnd) && (e.CallID == "c004" || e.CallID == "c005") {
				t.Errorf("%s event for refused call %s", e.Type, e.CallID)
			}
		}
	})
	t.Run("default", func(t *testing.T) {
		n := defaults.MaxCallsPerStep + 3
		m := &fakeModel{script: []reply{manyCalls("read_file", n), text("done")}}
		ts := newTools("read_file")
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, testAgent(m, ts, 5), Input{Prompt: "task"})
		if res.ToolCalls != defaults.MaxCallsPerStep || len(ts.called()) != defaults.MaxCallsPerStep {
			t.Errorf("%d tool calls, toolset ran %d; want %d", res.ToolCalls, len(ts.called()), defaults.MaxCallsPerStep)
		}
		refused := 0
		for _, tm := range toolMsgs(res.Messages) {
			if strings.Contains(tm.Content, "host.max_calls_per_step") {
				refused++
			}
		}
		if refused != 3 {
			t.Errorf("%d calls refused by max_calls_per_step, want 3", refused)
		}
	})
	t.Run("before the budget", func(t *testing.T) {
		m := &fakeModel{script: []reply{manyCalls("read_file", 3), text("done")}}
		ts := newTools("read_file")
		a := testAgent(m, ts, 5)
		a.MaxCallsPerStep = 2
		a.Budget = 1
		r, rec, _ := testRunner()
		res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
		tm := toolMsgs(res.Messages)
		if tm[0].IsError || !strings.HasPrefix(tm[1].Content, "tool budget exhausted") || !strings.Contains(tm[2].Content, "at most 2 of one response run") {
			t.Errorf("answers %s; want a result, a budget refusal, a max_calls_per_step refusal", dump(tm))
		}
		if res.StopReason != StopBudget {
			t.Errorf("stop %s, want budget", res.StopReason)
		}
	})
}
