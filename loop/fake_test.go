package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// reply is one scripted answer of fakeModel.
type reply struct {
	resp Response
	err  error
	// before, when set, runs before the reply is returned (e.g. to cancel).
	before func()
}

// fakeModel answers requests from a script, in order, and records them.
type fakeModel struct {
	mu      sync.Mutex
	script  []reply
	reqs    []Request
	texts   []func(string) // onText of each request
	blockOn int            // 1-based request number that blocks until ctx is done; 0: none
}

func (m *fakeModel) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	m.mu.Lock()
	n := len(m.reqs)
	cp := req
	cp.Messages = append([]Message(nil), req.Messages...)
	cp.Tools = append([]ToolSpec(nil), req.Tools...)
	m.reqs = append(m.reqs, cp)
	m.texts = append(m.texts, onText)
	block := m.blockOn == n+1
	m.mu.Unlock()
	if block {
		<-ctx.Done()
		return Response{}, fmt.Errorf("stream: %w", ctx.Err())
	}
	if n >= len(m.script) {
		return Response{}, &ProviderError{Status: 400, Message: fmt.Sprintf("fake model: no scripted reply for request %d", n+1)}
	}
	r := m.script[n]
	if r.before != nil {
		r.before()
	}
	if r.err == nil && onText != nil && r.resp.Message.Content != "" {
		onText(r.resp.Message.Content)
	}
	return r.resp, r.err
}

func text(s string) reply {
	return reply{resp: Response{Message: Message{Role: RoleAssistant, Content: s}, FinishReason: "stop",
		Usage: Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}}}
}

func calls(content string, cs ...ToolCall) reply {
	return reply{resp: Response{Message: Message{Role: RoleAssistant, Content: content, ToolCalls: cs}, FinishReason: "tool_calls",
		Usage: Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}}}
}

func tc(id, name, args string) ToolCall { return ToolCall{ID: id, Name: name, Arguments: args} }

func failure(status int, retryable bool, after time.Duration) reply {
	return reply{err: &ProviderError{Status: status, Message: fmt.Sprintf("status %d", status), Retryable: retryable, RetryAfter: after}}
}

// fakeTools is an in-memory Toolset recording its calls.
type fakeTools struct {
	mu    sync.Mutex
	specs []ToolSpec
	fn    map[string]func(context.Context, ToolCall) (ToolResult, error)
	calls []ToolCall
}

func newTools(names ...string) *fakeTools {
	ft := &fakeTools{fn: map[string]func(context.Context, ToolCall) (ToolResult, error){}}
	for _, n := range names {
		ft.specs = append(ft.specs, ToolSpec{Name: n, Description: "the " + n + " tool", InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	return ft
}

func (f *fakeTools) Tools() []ToolSpec { return f.specs }

func (f *fakeTools) Call(ctx context.Context, c ToolCall) (ToolResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	fn := f.fn[c.Name]
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, c)
	}
	return ToolResult{Content: "ok " + c.Name + " " + c.Arguments}, nil
}

// calledSorted is called, sorted: the calls of one step run concurrently,
// in no set order.
func (f *fakeTools) calledSorted() []string {
	out := f.called()
	slices.Sort(out)
	return out
}

// sorted returns a sorted copy of ids.
func sorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func (f *fakeTools) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.ID)
	}
	return out
}

var testPrompts = Prompts{
	MaxSteps:   "PROMPT max_steps",
	Budget:     "PROMPT budget",
	Tokens:     "PROMPT tokens",
	Cost:       "PROMPT cost",
	DoomLoop:   "PROMPT doom_loop",
	DoomWarn:   "PROMPT doom_warn",
	Compaction: "PROMPT compaction",
}

func testAgent(m Model, ts Toolset, steps int) *Agent {
	a := &Agent{Name: "main", ModelID: "fake", Model: m, Policy: Policy{System: "SYSTEM", StepsMax: steps, Prompts: testPrompts, MaxDepth: 3}}
	if ts != nil {
		a.Tools = ts
	}
	return a
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Emit(e Event) {
	checkWire(e) // every event a test emits checks the wire encoder
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// of returns the events of type typ, in order.
func (r *recorder) of(typ string) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// testRunner returns a runner that records events and sleeps, never sleeping.
func testRunner() (*Runner, *recorder, *[]time.Duration) {
	rec := &recorder{}
	var slept []time.Duration
	r := &Runner{
		Sink:   rec,
		Jitter: func() float64 { return 0.5 },
		Sleep: func(ctx context.Context, d time.Duration) error {
			slept = append(slept, d)
			return ctx.Err()
		},
	}
	return r, rec, &slept
}

// runChecked runs a and checks the invariants every run must keep: a valid
// history, events that frame the run, and message events that replay the
// history of the top-level agent (when no compaction rewrote it).
func runChecked(t *testing.T, ctx context.Context, r *Runner, rec *recorder, a *Agent, in Input) *Result {
	t.Helper()
	res := r.Run(ctx, a, in)
	if res == nil {
		t.Fatal("Run returned nil")
	}
	checkHistory(t, res.Messages)
	if res.StepsMax != max(a.StepsMax, 1) {
		t.Errorf("StepsMax = %d, want %d", res.StepsMax, max(a.StepsMax, 1))
	}
	// The repair request of an output schema may go one step past the cap.
	if extra := btoi(a.hasOutput()); res.Steps > res.StepsMax+extra {
		t.Errorf("Steps = %d > StepsMax %d", res.Steps, res.StepsMax)
	}
	if res.Errors == nil {
		t.Errorf("Errors is nil, want a non-nil slice")
	}
	if rec == nil {
		return res
	}
	var top []Event
	for _, e := range rec.events {
		if e.Time.IsZero() || e.Agent == "" {
			t.Errorf("event %s lacks time or agent: %+v", e.Type, e)
		}
		if e.Depth == 0 {
			top = append(top, e)
		}
	}
	if len(top) == 0 || top[0].Type != EventRunStart || top[len(top)-1].Type != EventRunEnd {
		t.Fatalf("top-level events do not start with run.start and end with run.end: %v", types(top))
	}
	if top[len(top)-1].Result != res {
		t.Errorf("run.end carries %p, want the returned result %p", top[len(top)-1].Result, res)
	}
	if len(rec.of(EventCompaction)) > 0 {
		return res
	}
	var msgs []Message
	for _, e := range top {
		if e.Type == EventMessage {
			msgs = append(msgs, *e.Msg)
		}
	}
	s := 0
	if a.System != "" {
		s = 1
	}
	// The continued history (in.History) is not re-emitted.
	want := append(append([]Message(nil), res.Messages[:s]...), res.Messages[s+len(in.History):]...)
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("message events do not replay the history (-history +events):\n%s", diff)
	}
	return res
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func types(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkHistory asserts the history invariant: every assistant tool call id is
// unique in the run and answered by exactly one tool message; the answers
// follow their assistant message directly, in the order of the calls; no tool
// message answers anything else; no assistant message is empty.
func checkHistory(t *testing.T, msgs []Message) {
	t.Helper()
	seen := map[string]bool{}
	var pending []ToolCall
	for i, m := range msgs {
		if m.Role == RoleSystem && i != 0 {
			t.Errorf("message %d: system message not first", i)
		}
		if m.Role == RoleTool {
			if len(pending) == 0 {
				t.Errorf("message %d: tool message for %q answers no pending call", i, m.ToolCallID)
				continue
			}
			if m.ToolCallID != pending[0].ID {
				t.Errorf("message %d: tool message answers %q, want %q (calls answered in order)", i, m.ToolCallID, pending[0].ID)
			}
			pending = pending[1:]
			continue
		}
		if len(pending) > 0 {
			t.Errorf("message %d (%s): calls %v left unanswered", i, m.Role, pending)
			pending = nil
		}
		if m.Role == RoleAssistant {
			if strings.TrimSpace(m.Content) == "" && m.Reasoning == "" && len(m.ToolCalls) == 0 {
				t.Errorf("message %d: empty assistant message", i)
			}
			for _, c := range m.ToolCalls {
				if c.ID == "" || seen[c.ID] {
					t.Errorf("message %d: tool call id %q empty or repeated", i, c.ID)
				}
				seen[c.ID] = true
			}
			pending = append(pending, m.ToolCalls...)
		}
	}
	if len(pending) > 0 {
		t.Errorf("history ends with unanswered calls %v", pending)
	}
}

// toolMsgs returns the tool messages of a history.
func toolMsgs(msgs []Message) []Message {
	var out []Message
	for _, m := range msgs {
		if m.Role == RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func last(msgs []Message) Message {
	if len(msgs) == 0 {
		return Message{}
	}
	return msgs[len(msgs)-1]
}

func toolNames(specs []ToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}
