package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/loop"
)

// The scenarios of package loop's tests, run twice: in-process with
// loop.Runner, and as a workflow in the SDK's test environment with the
// same agents behind the activities. Both must send the same requests to
// the model, make the same tool calls, emit the same events (times and
// durations aside; subagents' message events are not carried out of their
// child workflow) and give the same result.

// reply is one scripted answer of scriptModel.
type reply struct {
	resp loop.Response
	err  error
}

// scriptModel answers from a script and records the requests.
type scriptModel struct {
	mu     sync.Mutex
	script []reply
	reqs   []loop.Request
}

func (m *scriptModel) Stream(ctx context.Context, req loop.Request, _ func(string)) (loop.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, _ := json.Marshal(req) // a deep copy, in the form an activity sees
	var cp loop.Request
	_ = json.Unmarshal(b, &cp)
	m.reqs = append(m.reqs, cp)
	n := len(m.reqs) - 1
	if n >= len(m.script) {
		return loop.Response{}, &loop.ProviderError{Status: 400, Message: fmt.Sprintf("no scripted reply for request %d", n+1)}
	}
	return m.script[n].resp, m.script[n].err
}

func text(s string) reply {
	return reply{resp: loop.Response{Message: loop.Message{Role: loop.RoleAssistant, Content: s}, FinishReason: "stop",
		Usage: loop.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}}
}

func calls(cs ...loop.ToolCall) reply {
	return reply{resp: loop.Response{Message: loop.Message{Role: loop.RoleAssistant, ToolCalls: cs}, FinishReason: "tool_calls",
		Usage: loop.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}}
}

func tc(id, name, args string) loop.ToolCall {
	return loop.ToolCall{ID: id, Name: name, Arguments: args}
}

func fail(status int, retryable bool, after time.Duration) reply {
	return reply{err: &loop.ProviderError{Status: status, Message: fmt.Sprintf("status %d", status), Retryable: retryable, RetryAfter: after}}
}

// tools is a fake toolset recording calls; block names a tool whose calls
// call onBlock and wait for their context to end; bad names a tool whose
// arguments the schema check refuses.
type tools struct {
	mu      sync.Mutex
	specs   []loop.ToolSpec
	calls   []string
	block   string
	onBlock func()
	bad     string
}

func newTools(names ...string) *tools {
	t := &tools{}
	for _, n := range names {
		t.specs = append(t.specs, loop.ToolSpec{Name: n, Description: "the " + n + " tool", InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	return t
}

func (t *tools) Tools() []loop.ToolSpec { return t.specs }

func (t *tools) Call(ctx context.Context, c loop.ToolCall) (loop.ToolResult, error) {
	t.mu.Lock()
	t.calls = append(t.calls, c.Name+" "+c.Arguments)
	t.mu.Unlock()
	if c.Name == t.block {
		t.onBlock()
		<-ctx.Done()
		return loop.ToolResult{}, ctx.Err()
	}
	if c.Name == "crash" {
		return loop.ToolResult{}, fmt.Errorf("trap: unreachable")
	}
	return loop.ToolResult{Content: "ok " + c.Name + " " + c.Arguments}, nil
}

func (t *tools) Check(c loop.ToolCall, _ map[string]any) (loop.CheckedCall, string) {
	if c.Name == t.bad {
		return loop.CheckedCall{}, "invalid arguments for tool " + c.Name + ": missing property \"path\""
	}
	return loop.CheckedCall{ToolCall: c}, ""
}

func (t *tools) CallChecked(ctx context.Context, c loop.CheckedCall) (loop.ToolResult, error) {
	return t.Call(ctx, c.ToolCall)
}

var _ loop.ArgumentChecker = (*tools)(nil)

// fakeAgents serves agents by name.
type fakeAgents map[string]*loop.Agent

func (f fakeAgents) Agent(name string) (*loop.Agent, error) {
	if name == "" {
		name = "main"
	}
	if a := f[name]; a != nil {
		return a, nil
	}
	return nil, fmt.Errorf("no agent %q", name)
}
func (f fakeAgents) ModelTimeout(string) time.Duration { return time.Minute }
func (f fakeAgents) ToolTimeout(string) time.Duration  { return 10 * time.Second }

var prompts = loop.Prompts{MaxSteps: "PROMPT max_steps", Budget: "PROMPT budget", Tokens: "PROMPT tokens", Cost: "PROMPT cost",
	DoomLoop: "PROMPT doom_loop", DoomWarn: "PROMPT doom_warn", Compaction: "PROMPT compaction"}

// built is one scenario's agents, fresh for each way of running it.
type built struct {
	top    *loop.Agent
	models map[string]*scriptModel
	tools  map[string]*tools
}

type scenario struct {
	name  string
	build func() built
	// cancel: the scenario's blocking tool cancels the run.
	cancel bool
	check  func(t *testing.T, res *loop.Result, b built)
}

func agent(name string, m *scriptModel, ts *tools, steps int) *loop.Agent {
	a := &loop.Agent{
		Name:    name,
		ModelID: "fake-" + name,
		Model:   m,
		Policy: loop.Policy{
			System:   "SYSTEM " + name,
			StepsMax: steps,
			Prompts:  prompts,
			MaxDepth: 2,
			Retry:    loop.RetryPolicy{Attempts: 3, Initial: time.Second, MaxDelay: 5 * time.Second},
		},
	}
	if ts != nil {
		a.Tools = ts
	}
	return a
}

func one(name string, m *scriptModel, ts *tools, steps int, edit func(*loop.Agent)) built {
	a := agent(name, m, ts, steps)
	if edit != nil {
		edit(a)
	}
	return built{top: a, models: map[string]*scriptModel{name: m}, tools: map[string]*tools{name: ts}}
}

var scenarios = []scenario{
	{name: "cap", build: func() built {
		m := &scriptModel{script: []reply{calls(tc("c1", "read", `{"p":1}`)), calls(tc("c2", "read", `{"p":2}`)), calls(tc("c3", "read", `{"p":3}`))}}
		return one("main", m, newTools("read"), 3, nil)
	}, check: func(t *testing.T, res *loop.Result, b built) {
		reqs := b.models["main"].reqs
		if res.StopReason != loop.StopMaxSteps || len(reqs) != 3 || reqs[2].Tools != nil || reqs[2].Messages[len(reqs[2].Messages)-1].Content != prompts.MaxSteps {
			t.Errorf("stop %s after %d requests; want max_steps, the third without tools and with the max_steps prompt", res.StopReason, len(reqs))
		}
	}},
	{name: "final_none", build: func() built {
		m := &scriptModel{script: []reply{calls(tc("c1", "read", `{}`)), text("summary")}}
		return one("main", m, newTools("read"), 2, func(a *loop.Agent) { a.FinalStepTools = loop.FinalToolsNone })
	}, check: func(t *testing.T, res *loop.Result, b built) {
		reqs := b.models["main"].reqs
		if len(reqs) != 2 || reqs[1].ToolChoice != loop.ToolChoiceNone || len(reqs[1].Tools) != 1 || res.Output != "summary" {
			t.Errorf("final request %+v; want the tools listed with tool_choice none", reqs)
		}
	}},
	{name: "budget_parallel_overflow", build: func() built {
		m := &scriptModel{script: []reply{calls(tc("c1", "read", `{"p":1}`), tc("c2", "read", `{"p":2}`), tc("c3", "read", `{"p":3}`)), text("")}}
		return one("main", m, newTools("read"), 10, func(a *loop.Agent) { a.Budget = 2 })
	}, check: func(t *testing.T, res *loop.Result, b built) {
		if res.StopReason != loop.StopBudget || res.ToolCalls != 2 || len(b.tools["main"].calls) != 2 || !strings.Contains(res.Output, "budget exhausted") {
			t.Errorf("stop %s, %d calls, output %q; want budget after 2 calls and the sentinel", res.StopReason, res.ToolCalls, res.Output)
		}
	}},
	{name: "max_calls_per_step", build: func() built {
		m := &scriptModel{script: []reply{calls(tc("c1", "read", `{"p":1}`), tc("c2", "read", `{"p":2}`), tc("c3", "read", `{"p":3}`)), text("done")}}
		return one("main", m, newTools("read"), 5, func(a *loop.Agent) { a.MaxCallsPerStep = 2 })
	}, check: func(t *testing.T, res *loop.Result, b built) {
		if res.ToolCalls != 2 || len(b.tools["main"].calls) != 2 {
			t.Errorf("%d tool calls, the toolset ran %q; want 2, the third refused by max_calls_per_step", res.ToolCalls, b.tools["main"].calls)
		}
	}},
	{name: "doom_loop", build: func() built {
		same := calls(tc("", "read", `{"b":1,"a":2}`))
		m := &scriptModel{script: []reply{same, same, same, text("I was looping")}}
		return one("main", m, newTools("read"), 10, func(a *loop.Agent) { a.DoomThreshold = 3; a.DoomAction = loop.DoomStop })
	}, check: func(t *testing.T, res *loop.Result, b built) {
		if res.StopReason != loop.StopDoomLoop || len(b.tools["main"].calls) != 2 || res.Output != "I was looping" {
			t.Errorf("stop %s after %d calls; want doom_loop after 2", res.StopReason, len(b.tools["main"].calls))
		}
	}},
	{name: "retries", build: func() built {
		m := &scriptModel{script: []reply{fail(429, true, 2*time.Second), fail(503, true, time.Second), calls(tc("c1", "crash", `{}`)), fail(429, true, time.Minute)}}
		return one("main", m, newTools("crash"), 5, nil)
	}, check: func(t *testing.T, res *loop.Result, b built) {
		if res.StopReason != loop.StopProviderError || len(b.models["main"].reqs) != 4 || len(res.Errors) != 2 || !strings.Contains(res.Errors[1], "more than max_delay") {
			t.Errorf("stop %s after %d requests, errors %q; want 2 retries, a plugin failure, then provider_error (Retry-After above max_delay)", res.StopReason, len(b.models["main"].reqs), res.Errors)
		}
	}},
	{name: "output_schema", build: func() built {
		m := &scriptModel{script: []reply{calls(tc("c1", "read", `{}`)), text("not json"), text(`{"answer": "ok"}`)}}
		return one("main", m, newTools("read"), 5, func(a *loop.Agent) {
			a.OutputSchema, a.OutputMode = []byte(`{"type":"object","required":["answer"]}`), loop.OutputJSONObject
			a.ValidateOutput = host.OutputValidator(a.OutputSchema)
		})
	}, check: func(t *testing.T, res *loop.Result, b built) {
		reqs := b.models["main"].reqs
		if res.StopReason != loop.StopCompleted || string(res.OutputJSON) != `{"answer":"ok"}` || len(reqs) != 3 || reqs[2].ResponseFormat == nil || reqs[2].ResponseFormat.Type != "json_object" {
			t.Errorf("stop %s, output_json %s, %d requests; want completed after a repair request asking for a JSON object", res.StopReason, res.OutputJSON, len(reqs))
		}
	}},
	{name: "schema_check", build: func() built {
		m := &scriptModel{script: []reply{calls(tc("c1", "write", `{}`), tc("c2", "read", `{}`)), text("done")}}
		ts := newTools("read", "write")
		ts.bad = "write"
		return one("main", m, ts, 5, nil)
	}, check: func(t *testing.T, res *loop.Result, b built) {
		if res.ToolCalls != 1 || len(b.tools["main"].calls) != 1 {
			t.Errorf("%d calls counted, %d made; want the refused one neither counted nor made", res.ToolCalls, len(b.tools["main"].calls))
		}
	}},
	{name: "subagents", build: func() built {
		cm := &scriptModel{script: []reply{calls(tc("k1", "list", `{}`)), text("child found 3 files"), calls(tc("k2", "list", `{"again":true}`)), text("child summary")}}
		ct := newTools("list")
		child := agent("explore", cm, ct, 3)
		child.Description = "explores"
		grand := agent("deep", &scriptModel{}, nil, 2)
		child.Subagents = []*loop.Agent{grand}
		m := &scriptModel{script: []reply{
			calls(tc("p1", "explore", `{"prompt":"look around"}`)),
			calls(tc("p2", "explore", `{"prompt":"again"}`)),
			text("parent done"),
		}}
		ts := newTools("read")
		a := agent("main", m, ts, 5)
		a.Subagents = []*loop.Agent{child}
		// 440 tokens used when the second child starts; its second step
		// would pass the parent's limit: it is its final step.
		a.Tokens = 500
		return built{top: a, models: map[string]*scriptModel{"main": m, "explore": cm}, tools: map[string]*tools{"main": ts, "explore": ct}}
	}, check: func(t *testing.T, res *loop.Result, b built) {
		creqs := b.models["explore"].reqs
		if res.ToolCalls != 2 || len(creqs) != 4 || res.StopReason != loop.StopTokenLimit || creqs[3].Messages[len(creqs[3].Messages)-1].Content != prompts.Tokens {
			t.Errorf("parent: %d calls, stop %s, child requests %d; want 2 subagent calls and the parent's token limit", res.ToolCalls, res.StopReason, len(b.models["explore"].reqs))
		}
	}},
	{name: "compaction", build: func() built {
		big := calls(tc("3", "read", `{"n":3}`), tc("4", "read", `{"n":4}`))
		big.resp.Usage.PromptTokens = 900
		m := &scriptModel{script: []reply{calls(tc("1", "read", `{"n":1}`)), calls(tc("2", "read", `{"n":2}`)), big, text("the summary"), text("done")}}
		return one("main", m, newTools("read"), 10, func(a *loop.Agent) { a.ContextWindow = 1000 })
	}, check: func(t *testing.T, res *loop.Result, b built) {
		reqs := b.models["main"].reqs
		if res.Steps != 4 || len(reqs) != 5 || reqs[4].Messages[1].Content != "Summary of earlier conversation: the summary" {
			t.Errorf("%d steps, %d requests; want 4 steps and a compaction request before the last", res.Steps, len(reqs))
		}
	}},
	{name: "cost_limit", build: func() built {
		m := &scriptModel{script: []reply{calls(tc("1", "read", `{"n":1}`)), calls(tc("2", "read", `{"n":2}`)), text("")}}
		return one("main", m, newTools("read"), 10, func(a *loop.Agent) {
			a.Price = &loop.Price{Input: 1000, Output: 1000, CachedInput: 1000} // $0.11 a request
			a.Cost = 0.3
		})
	}, check: func(t *testing.T, res *loop.Result, b built) {
		if res.StopReason != loop.StopCostLimit || res.Cost == nil || !strings.Contains(res.Output, "cost limit reached") {
			t.Errorf("stop %s, cost %v, output %q; want cost_limit with the sentinel", res.StopReason, res.Cost, res.Output)
		}
	}},
	{name: "large_requests", build: func() built {
		// Requests above InlineRequestBytes are fetched by the activity
		// from the workflow (QueryRequest).
		m := &scriptModel{script: []reply{calls(tc("1", "read", `{"n":1}`)), calls(tc("2", "read", `{"n":2}`)), text("done")}}
		b := one("main", m, nil, 10, nil)
		b.top.Tools = &bigTools{newTools("read"), 100 << 10}
		return b
	}, check: func(t *testing.T, res *loop.Result, b built) {
		reqs := b.models["main"].reqs
		if res.StopReason != loop.StopCompleted || len(reqs) != 3 || len(reqs[2].Messages[len(reqs[2].Messages)-1].Content) != 100<<10 {
			t.Errorf("stop %s after %d requests; want completed after 3, the last with a 100 KiB tool result", res.StopReason, len(reqs))
		}
	}},
	{name: "cancel", cancel: true, build: func() built {
		m := &scriptModel{script: []reply{calls(tc("c1", "read", `{}`), tc("c2", "slow", `{}`), tc("c3", "read", `{"x":1}`))}}
		ts := newTools("read", "slow")
		ts.block = "slow"
		return one("main", m, ts, 5, nil)
	}, check: func(t *testing.T, res *loop.Result, b built) {
		if res.StopReason != loop.StopAborted || len(b.tools["main"].calls) != 2 {
			t.Errorf("stop %s after calls %q; want aborted during the second", res.StopReason, b.tools["main"].calls)
		}
	}},
}

// runLocal runs sc in-process.
func runLocal(t *testing.T, sc scenario) (*loop.Result, []loop.Event, built) {
	b := sc.build()
	var events []loop.Event
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ts := range b.tools {
		if ts != nil {
			ts.onBlock = cancel
		}
	}
	r := &loop.Runner{
		Sink:   loop.SinkFunc(func(e loop.Event) { events = append(events, e) }),
		Sleep:  func(ctx context.Context, d time.Duration) error { return ctx.Err() },
		Jitter: func() float64 { return 0.5 },
		// The workflow runs parallel calls in call order; so does this
		// run, for events in the same order.
		Sequential: true,
	}
	res := r.Run(ctx, b.top, loop.Input{Prompt: "task"})
	return res, events, b
}

// runWorkflow runs sc as a workflow in the SDK's test environment.
func runWorkflow(t *testing.T, sc scenario) (*loop.Result, []loop.Event, built) {
	b := sc.build()
	env := newTestEnv()
	agents := fakeAgents{}
	var add func(a *loop.Agent)
	add = func(a *loop.Agent) {
		agents[a.Name] = a
		for _, s := range a.Subagents {
			add(s)
		}
	}
	add(b.top)
	for _, ts := range b.tools {
		if ts != nil {
			ts.onBlock = env.CancelWorkflow
		}
	}
	Register(env, testActivities(env, agents))
	env.ExecuteWorkflow(WorkflowRun, RunInput{Agent: b.top.Name, Prompt: "task"})
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow failed: %v", err)
	}
	var res loop.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	events, _ := pages(t, env)
	return &res, events, b
}

// testActivities are the activities over agents in env, fetching large
// model requests with env's queries (a worker uses its client).
func testActivities(env *testsuite.TestWorkflowEnvironment, agents Agents) *Activities {
	return &Activities{Agents: agents, Request: func(ctx context.Context, _, _ string, seq int) (loop.Request, error) {
		var req loop.Request
		v, err := env.QueryWorkflow(QueryRequest, seq)
		if err == nil {
			err = v.Get(&req)
		}
		return req, err
	}}
}

// pages reads every event of the workflow of env, a page at a time, and
// returns them with the number of pages.
func pages(t *testing.T, env *testsuite.TestWorkflowEnvironment) ([]loop.Event, int) {
	var events []loop.Event
	for n := 1; ; n++ {
		v, err := env.QueryWorkflow(QueryEvents, len(events))
		if err != nil {
			t.Fatalf("query events: %v", err)
		}
		var p Page
		if err := v.Get(&p); err != nil {
			t.Fatal(err)
		}
		events = append(events, p.Events...)
		if p.Next != len(events) {
			t.Fatalf("page %d: next %d after %d events", n, p.Next, len(events))
		}
		if p.Next == p.Total {
			if !p.Done {
				t.Errorf("events page not done after the run ended")
			}
			return events, n
		}
	}
}

// wire is an event's wire form without the fields that differ by nature
// between two runs: time and durations.
func wire(t *testing.T, events []loop.Event) []string {
	var out []string
	for _, e := range events {
		if e.Type == loop.EventMessage && e.Depth > 0 {
			continue // not carried out of a child workflow
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		delete(m, "time")
		delete(m, "duration_ms")
		b, _ = json.Marshal(m)
		out = append(out, string(b))
	}
	return out
}

func resultJSON(res *loop.Result) string {
	b, _ := json.MarshalIndent(res, "", " ")
	return string(b)
}

func TestScenariosSameAsLocal(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			lres, levents, lb := runLocal(t, sc)
			sc.check(t, lres, lb) // the scenario shows what it means to
			wres, wevents, wb := runWorkflow(t, sc)
			sc.check(t, wres, wb)
			for name, m := range lb.models {
				if diff := cmp.Diff(m.reqs, wb.models[name].reqs); diff != "" {
					t.Errorf("requests to %s differ (-local +workflow):\n%s", name, diff)
				}
			}
			for name, ts := range lb.tools {
				if ts == nil {
					continue
				}
				if diff := cmp.Diff(ts.calls, wb.tools[name].calls); diff != "" {
					t.Errorf("calls of %s's tools differ (-local +workflow):\n%s", name, diff)
				}
			}
			if diff := cmp.Diff(resultJSON(lres), resultJSON(wres)); diff != "" {
				t.Errorf("results differ (-local +workflow):\n%s", diff)
			}
			if diff := cmp.Diff(wire(t, levents), wire(t, wevents)); diff != "" {
				t.Errorf("events differ (-local +workflow):\n%s", diff)
			}
		})
	}
}

// newTestEnv is the SDK's test environment with its log discarded. Its idle
// timeout (how long it waits for an activity before failing the workflow)
// is raised from 3s to a minute: it detects deadlocks, and a loaded machine
// under the race detector can take seconds over one activity.
func newTestEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	return s.NewTestWorkflowEnvironment().SetTestTimeout(time.Minute)
}
