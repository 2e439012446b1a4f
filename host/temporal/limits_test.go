package temporal

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agenthost/agenthost/loop"
)

func TestCapResult(t *testing.T) {
	if s := strings.Repeat("a", MaxToolResultBytes); capResult(s) != s {
		t.Errorf("a result of exactly the cap was changed")
	}
	s := strings.Repeat("é", MaxToolResultBytes) // 2 bytes each: the cap falls inside one
	got := capResult(s)
	kept, note, ok := strings.Cut(got, "\n[agenthost] output cut: ")
	if !ok || len(kept) > MaxToolResultBytes || len(kept) < MaxToolResultBytes-1 || !utf8.ValidString(kept) {
		t.Fatalf("kept %d bytes (valid UTF-8 %v), note found %v", len(kept), utf8.ValidString(kept), ok)
	}
	if !strings.Contains(note, "of 524288 bytes kept") {
		t.Errorf("note %q does not say how much was cut", note)
	}
}

// bigTools answers every call with n bytes.
type bigTools struct {
	*tools
	n int
}

func (b *bigTools) Call(ctx context.Context, c loop.ToolCall) (loop.ToolResult, error) {
	return loop.ToolResult{Content: strings.Repeat("x", b.n)}, nil
}

func (b *bigTools) CallChecked(ctx context.Context, c loop.CheckedCall) (loop.ToolResult, error) {
	return b.Call(ctx, c.ToolCall)
}

// TestPayloadLimits: in a workflow a tool result is cut to
// MaxToolResultBytes before it enters the history, and a model request
// above MaxRequestBytes stops the run with error instead of failing the
// workflow.
func TestPayloadLimits(t *testing.T) {
	big := scenario{name: "big_result", build: func() built {
		m := &scriptModel{script: []reply{calls(tc("c1", "read", `{}`)), text("done")}}
		b := one("main", m, nil, 5, nil)
		b.top.Tools = &bigTools{newTools("read"), MaxToolResultBytes + 1000}
		return b
	}}
	res, _, b := runWorkflow(t, big)
	reqs := b.models["main"].reqs
	if res.StopReason != loop.StopCompleted || len(reqs) != 2 {
		t.Fatalf("stop %s after %d requests", res.StopReason, len(reqs))
	}
	tm := reqs[1].Messages[len(reqs[1].Messages)-1]
	if len(tm.Content) > MaxToolResultBytes+200 || !strings.Contains(tm.Content, "[agenthost] output cut: 262144 of 263144 bytes kept") {
		t.Errorf("tool result in the next request: %d bytes, ends %q", len(tm.Content), tm.Content[len(tm.Content)-120:])
	}

	huge := scenario{name: "huge_request", build: func() built {
		m := &scriptModel{script: []reply{text("never")}}
		return one("main", m, nil, 5, func(a *loop.Agent) { a.System = strings.Repeat("s", MaxRequestBytes) })
	}}
	res, _, b = runWorkflow(t, huge)
	if res.StopReason != loop.StopError || len(b.models["main"].reqs) != 0 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "more than the 1536 KiB") {
		t.Errorf("stop %s, %d requests sent, errors %q; want error, none sent, the limit named", res.StopReason, len(b.models["main"].reqs), res.Errors)
	}
}

// forgetful describes its agents but knows none of them afterwards: a
// worker whose config lacks the agent a run needs.
type forgetful struct {
	fakeAgents
	asked *int // lookups after the description
}

func (f forgetful) Agent(name string) (*loop.Agent, error) {
	if name == "" {
		return f.fakeAgents.Agent(name)
	}
	*f.asked++
	return nil, fmt.Errorf("no agent %q", name)
}

// TestWorkerWithoutTheAgent: a model request on a worker without the
// run's agent stops the run with error, saying so; it is not retried.
func TestWorkerWithoutTheAgent(t *testing.T) {
	m := &scriptModel{script: []reply{text("never")}}
	a := agent("main", m, nil, 3)
	env := newTestEnv()
	var asked int
	Register(env, &Activities{Agents: forgetful{fakeAgents{"main": a}, &asked}})
	env.ExecuteWorkflow(WorkflowRun, RunInput{Prompt: "task"})
	var res loop.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.StopReason != loop.StopError || len(m.reqs) != 0 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], `this worker has no agent "main"`) {
		t.Errorf("stop %s, %d requests, errors %q; want error naming the missing agent", res.StopReason, len(m.reqs), res.Errors)
	}
	if asked != 1 {
		t.Errorf("the activity asked for the agent %d times, want 1 (not retried)", asked)
	}
}

// TestEventPages: the events query answers at most about 1 MiB of events
// at a time, so that its answer stays within Temporal's payload limit; a
// follower reads them all over several pages.
func TestEventPages(t *testing.T) {
	var script []reply
	for i := range 5 {
		script = append(script, calls(tc(fmt.Sprint("c", i), "read", fmt.Sprintf(`{"n":%d}`, i))))
	}
	big := scenario{name: "big_results", build: func() built {
		m := &scriptModel{script: append(script, text("done"))}
		b := one("main", m, nil, 10, nil)
		b.top.Tools = &bigTools{newTools("read"), MaxToolResultBytes}
		return b
	}}
	b := big.build()
	env := newTestEnv()
	Register(env, testActivities(env, fakeAgents{"main": b.top}))
	env.ExecuteWorkflow(WorkflowRun, RunInput{Prompt: "task"})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	events, n := pages(t, env)
	if n < 2 || len(events) == 0 || events[len(events)-1].Type != loop.EventRunEnd {
		t.Errorf("%d events in %d pages; want 1.25 MiB of tool results over several pages, ending with run.end", len(events), n)
	}
	_, local, _ := runLocal(t, big)
	if diff := cmp.Diff(wire(t, local), wire(t, events)); diff != "" {
		t.Errorf("events read page by page differ from a local run's:\n%s", diff)
	}
}

// slottedAgents are fakeAgents whose tool calls take slots (as
// HostAgents' take the host's).
type slottedAgents struct {
	fakeAgents
	slots *loop.Slots
}

func (s slottedAgents) Slots() *loop.Slots { return s.slots }

// heldTools records, at each call, whether a slot was still free.
type heldTools struct {
	*tools
	slots *loop.Slots
	free  []bool
}

func (h *heldTools) Call(ctx context.Context, c loop.ToolCall) (loop.ToolResult, error) {
	free := h.slots.TryAcquire()
	if free {
		h.slots.Release()
	}
	h.free = append(h.free, free)
	return h.tools.Call(ctx, c)
}

func (h *heldTools) CallChecked(ctx context.Context, c loop.CheckedCall) (loop.ToolResult, error) {
	return h.Call(ctx, c.ToolCall)
}

// TestToolActivityTakesSlot: on a worker whose agents share slots (the
// host's max_parallel_tools), each tool activity holds one while the
// plugin runs and gives it back: with one slot, none is free during a
// call, and three calls in a row all run.
func TestToolActivityTakesSlot(t *testing.T) {
	slots := loop.NewSlots(1)
	m := &scriptModel{script: []reply{calls(tc("c1", "read", `{"p":1}`), tc("c2", "read", `{"p":2}`), tc("c3", "read", `{"p":3}`)), text("done")}}
	a := agent("main", m, nil, 5)
	ht := &heldTools{tools: newTools("read"), slots: slots}
	a.Tools = ht
	env := newTestEnv()
	Register(env, &Activities{Agents: slottedAgents{fakeAgents{"main": a}, slots}})
	env.ExecuteWorkflow(WorkflowRun, RunInput{Prompt: "task"})
	var res loop.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.StopReason != loop.StopCompleted || res.ToolCalls != 3 || len(res.Errors) != 0 {
		t.Fatalf("stop %s, %d tool calls, errors %q", res.StopReason, res.ToolCalls, res.Errors)
	}
	if diff := cmp.Diff([]bool{false, false, false}, ht.free); diff != "" {
		t.Errorf("was a slot free during each call (-want +got):\n%s", diff)
	}
	if !slots.TryAcquire() {
		t.Errorf("the slot was not given back after the calls")
	}
}

// TestToolSlotWaitsWithinDeadline: a tool activity waits for a slot only
// while the call could still run to its own timeout before the activity's
// deadline; past that it fails, naming the limit, for Temporal to retry.
func TestToolSlotWaitsWithinDeadline(t *testing.T) {
	slots := loop.NewSlots(1)
	a := &Activities{Agents: fakeAgents{}} // ToolTimeout: 10s
	if !slots.TryAcquire() {
		t.Fatal("a new slot is taken")
	}
	// 10s of the call's timeout and 200ms to wait.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second+200*time.Millisecond)
	defer cancel()
	release, err := a.slot(ctx, slots, "read")
	if err == nil || !strings.Contains(err.Error(), "1 tool slots (host.max_parallel_tools) stayed taken") {
		t.Fatalf("slot while the only one is taken: %v; want an error naming the limit", err)
	}
	if ctx.Err() != nil {
		t.Errorf("the wait lasted until the activity's deadline; it must leave the call its own timeout")
	}
	slots.Release()
	if release, err = a.slot(ctx, slots, "read"); err != nil {
		t.Fatalf("slot with one free: %v", err)
	}
	if slots.TryAcquire() {
		t.Errorf("the slot was not taken")
	}
	release()
	if !slots.TryAcquire() {
		t.Errorf("release did not give the slot back")
	}
}
