package tracing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agenthost/agenthost/loop"
)

// These tests run the real loop and feed its events to a Run; the model
// and the tools are scripted, and the spans land in the SDK's in-memory
// exporter. The binary's path, with a real OTLP receiver, is tested by the
// script tests otel_trace*.txtar.

// script is a model that answers from a list; an entry with err set fails.
type script struct {
	replies []reply
	n       int
}

type reply struct {
	resp loop.Response
	err  error
}

func (s *script) Stream(ctx context.Context, req loop.Request, onText func(string)) (loop.Response, error) {
	if s.n >= len(s.replies) {
		return loop.Response{}, fmt.Errorf("script: no reply %d", s.n+1)
	}
	r := s.replies[s.n]
	s.n++
	return r.resp, r.err
}

// tools offers echo (answers its arguments) and fail (an error result).
type tools struct{}

func (tools) Tools() []loop.ToolSpec {
	return []loop.ToolSpec{{Name: "echo", InputSchema: []byte(`{"type":"object"}`)}, {Name: "fail", InputSchema: []byte(`{"type":"object"}`)}}
}

func (tools) Call(ctx context.Context, c loop.ToolCall) (loop.ToolResult, error) {
	if c.Name == "fail" {
		return loop.ToolResult{Content: "secret failure text", IsError: true}, nil
	}
	return loop.ToolResult{Content: "echo result " + c.Arguments}, nil
}

func calls(names ...string) loop.Response {
	m := loop.Message{Role: loop.RoleAssistant}
	for i, n := range names {
		m.ToolCalls = append(m.ToolCalls, loop.ToolCall{ID: fmt.Sprintf("c%d-%s", i, n), Name: n, Arguments: `{"secret":"argument text"}`})
	}
	return loop.Response{Message: m, FinishReason: "tool_calls", Usage: loop.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}}
}

func text(s string) loop.Response {
	return loop.Response{Message: loop.Message{Role: loop.RoleAssistant, Content: s}, FinishReason: "stop", Usage: loop.Usage{PromptTokens: 20, CompletionTokens: 3, TotalTokens: 23}}
}

// trace runs agent a on prompt with a Run of a fresh Tracer, and returns
// the result and the spans, in the order they ended.
func traceRun(t *testing.T, a *loop.Agent, env map[string]string, history []loop.Message) (*loop.Result, tracetest.SpanStubs) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tr, err := NewWithExporter(context.Background(), exp, Options{
		Getenv:  func(k string) string { return env[k] },
		Version: "test",
		Agents:  map[string]Agent{a.Name: {Model: a.ModelID, Provider: "p", ServerAddress: "models.example", ServerPort: 443}},
		Tools:   map[string]Tool{"echo": {Plugin: "core", Kind: "agenthost"}, "fail": {Plugin: "core", Kind: "agenthost"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &loop.Runner{
		Sink:  tr.Run("sess-1", history),
		Sleep: func(context.Context, time.Duration) error { return nil },
	}
	res := r.Run(context.Background(), a, loop.Input{Prompt: "secret prompt text", History: history, Session: "sess-1"})
	spans := exp.GetSpans() // each span was exported as it ended; Shutdown empties exp
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return res, spans
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

func named(spans tracetest.SpanStubs, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// TestLimitsAndToolErrors runs an agent whose budget runs out and whose tool
// fails: the tool's span is an error, the budget's exhaustion is an event
// and a limit hit, the stop reason is on the agent's span.
func TestLimitsAndToolErrors(t *testing.T) {
	model := &script{replies: []reply{
		{err: &loop.ProviderError{Status: 503, Message: "busy", Retryable: true}},
		{resp: calls("fail", "echo", "echo")},
		// The final step: its calls are dropped, its text kept.
		{resp: loop.Response{Message: loop.Message{Role: loop.RoleAssistant, Content: "summary",
			ToolCalls: []loop.ToolCall{{ID: "late", Name: "echo", Arguments: "{}"}}}, FinishReason: "tool_calls"}},
	}}
	a := &loop.Agent{Name: "main", ModelID: "m-1", Model: model, Tools: tools{}, Policy: loop.Policy{StepsMax: 5, Budget: 2}}
	res, spans := traceRun(t, a, nil, nil)

	agents := named(spans, "invoke_agent main")
	if len(agents) != 1 {
		t.Fatalf("invoke_agent spans: %d, want 1; spans: %v", len(agents), names(spans))
	}
	root := agents[0]
	if root.Parent.IsValid() {
		t.Errorf("invoke_agent has a parent %v; want the trace's root", root.Parent)
	}
	ra := attrs(root)
	if got := ra["agenthost.stop_reason"].AsString(); got != string(res.StopReason) || got == "" {
		t.Errorf("agenthost.stop_reason = %q, want the result's %q", got, res.StopReason)
	}
	if got := ra["agenthost.limits_hit"].AsStringSlice(); !slices.Contains(got, "budget") {
		t.Errorf("agenthost.limits_hit = %q, want budget among them", got)
	}
	if got := ra["gen_ai.conversation.id"].AsString(); got != "sess-1" {
		t.Errorf("gen_ai.conversation.id = %q", got)
	}
	if got := ra["agenthost.budget"].AsInt64(); got != 2 {
		t.Errorf("agenthost.budget = %d", got)
	}
	if !hasEvent(root, "agenthost.budget_exhausted") {
		t.Errorf("no budget_exhausted event on invoke_agent: %v", root.Events)
	}
	dropped := event(root, "agenthost.tool_dropped")
	if dropped == nil {
		t.Fatalf("no tool_dropped event on invoke_agent: %v", root.Events)
	}

	chats := named(spans, "chat m-1")
	if len(chats) != res.Steps {
		t.Fatalf("%d chat spans for %d steps", len(chats), res.Steps)
	}
	first := chats[0]
	if !hasEvent(first, "agenthost.retry") {
		t.Errorf("first chat span has no retry event: %v", first.Events)
	}
	fa := attrs(first)
	if fa["gen_ai.usage.input_tokens"].AsInt64() != 10 || fa["gen_ai.usage.output_tokens"].AsInt64() != 2 {
		t.Errorf("chat usage = %v/%v", fa["gen_ai.usage.input_tokens"], fa["gen_ai.usage.output_tokens"])
	}
	if got := fa["gen_ai.response.finish_reasons"].AsStringSlice(); !slices.Equal(got, []string{"tool_calls"}) {
		t.Errorf("finish_reasons = %q", got)
	}
	if fa["server.address"].AsString() != "models.example" || fa["server.port"].AsInt64() != 443 {
		t.Errorf("server = %v:%v", fa["server.address"], fa["server.port"])
	}
	for _, c := range chats {
		if c.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("chat span's parent is %v, want the invoke_agent span", c.Parent.SpanID())
		}
	}
	last := chats[len(chats)-1]
	if !attrs(last)["agenthost.final_step"].AsBool() {
		t.Errorf("the last chat span is not marked as the final step: %v", last.Attributes)
	}
	// The final response was complete when its calls were dropped.
	if last.EndTime.After(dropped.Time) {
		t.Errorf("final chat span ends at %v, after its call was dropped at %v", last.EndTime, dropped.Time)
	}

	fails := named(spans, "execute_tool fail")
	if len(fails) != 1 {
		t.Fatalf("execute_tool fail spans: %d", len(fails))
	}
	if fails[0].Status.Code != codes.Error || attrs(fails[0])["error.type"].AsString() != "tool_error" {
		t.Errorf("failed tool's span: status %v, error.type %v", fails[0].Status, attrs(fails[0])["error.type"])
	}
	if k := attrs(fails[0])["agenthost.plugin.kind"].AsString(); k != "agenthost" {
		t.Errorf("plugin kind = %q", k)
	}
	// The chat span ends when its response came, before the tools ran.
	if chats[0].EndTime.Before(chats[0].StartTime) || chats[0].EndTime.After(fails[0].StartTime) {
		t.Errorf("chat span %v–%v overlaps the tool call starting %v", chats[0].StartTime, chats[0].EndTime, fails[0].StartTime)
	}
	echoes := named(spans, "execute_tool echo")
	if len(echoes) != res.ToolCalls-1 {
		t.Errorf("%d echo spans, %d tool calls in all", len(echoes), res.ToolCalls)
	}
	for _, s := range append(echoes, fails...) {
		if s.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("%s's parent is not the invoke_agent span", s.Name)
		}
	}
	noContent(t, spans)
}

// TestDoomLoopWarning: a doom-loop warning in a run that completes is a
// limit hit and an event, the stop reason stays completed.
func TestDoomLoopWarning(t *testing.T) {
	model := &script{replies: []reply{{resp: calls("echo")}, {resp: calls("echo")}, {resp: text("done")}}}
	a := &loop.Agent{Name: "main", ModelID: "m-1", Model: model, Tools: tools{}, Policy: loop.Policy{StepsMax: 6, DoomThreshold: 2, DoomAction: loop.DoomWarn}}
	res, spans := traceRun(t, a, nil, nil)
	if res.StopReason != loop.StopCompleted {
		t.Fatalf("stop reason %s", res.StopReason)
	}
	root := named(spans, "invoke_agent main")[0]
	if got := attrs(root)["agenthost.limits_hit"].AsStringSlice(); !slices.Equal(got, []string{"doom_loop"}) {
		t.Errorf("agenthost.limits_hit = %q, want [doom_loop]", got)
	}
	if !hasEvent(root, "agenthost.doom_loop") {
		t.Errorf("no doom_loop event: %v", root.Events)
	}
	if root.Status.Code == codes.Error {
		t.Errorf("a completed run has an error status")
	}
}

// TestProviderError: a request that fails for good is an error on the chat
// span and on the agent's span.
func TestProviderError(t *testing.T) {
	model := &script{replies: []reply{{err: &loop.ProviderError{Status: 401, Message: "bad key"}}}}
	a := &loop.Agent{Name: "main", ModelID: "m-1", Model: model, Policy: loop.Policy{StepsMax: 3}}
	res, spans := traceRun(t, a, nil, nil)
	if res.StopReason != loop.StopProviderError {
		t.Fatalf("stop reason %s", res.StopReason)
	}
	for _, name := range []string{"invoke_agent main", "chat m-1"} {
		s := named(spans, name)
		if len(s) != 1 || s[0].Status.Code != codes.Error || attrs(s[0])["error.type"].AsString() != "provider_error" {
			t.Errorf("%s: %+v", name, s)
		}
	}
}

// TestSubagentNesting: a subagent's invoke_agent span is the child of the
// execute_tool span of the call that ran it, in the same trace.
func TestSubagentNesting(t *testing.T) {
	sub := &loop.Agent{Name: "helper", ModelID: "m-2", Model: &script{replies: []reply{{resp: calls("echo")}, {resp: text("helped")}}}, Tools: tools{}, Policy: loop.Policy{StepsMax: 3}}
	main := &loop.Agent{
		Name:      "main",
		ModelID:   "m-1",
		Subagents: []*loop.Agent{sub},
		Model: &script{replies: []reply{{resp: loop.Response{Message: loop.Message{Role: loop.RoleAssistant,
			ToolCalls: []loop.ToolCall{{ID: "s1", Name: "helper", Arguments: `{"prompt":"help"}`}}}, FinishReason: "tool_calls"}}, {resp: text("done")}}},
		Policy: loop.Policy{
			StepsMax: 4,
			MaxDepth: 2,
		},
	}
	_, spans := traceRun(t, main, nil, nil)
	root := named(spans, "invoke_agent main")
	call := named(spans, "execute_tool helper")
	child := named(spans, "invoke_agent helper")
	echo := named(spans, "execute_tool echo")
	if len(root) != 1 || len(call) != 1 || len(child) != 1 || len(echo) != 1 {
		t.Fatalf("spans: %v", names(spans))
	}
	if call[0].Parent.SpanID() != root[0].SpanContext.SpanID() {
		t.Error("execute_tool helper is not under invoke_agent main")
	}
	if child[0].Parent.SpanID() != call[0].SpanContext.SpanID() {
		t.Error("invoke_agent helper is not under execute_tool helper")
	}
	if echo[0].Parent.SpanID() != child[0].SpanContext.SpanID() {
		t.Error("the subagent's tool call is not under invoke_agent helper")
	}
	for _, s := range spans {
		if s.SpanContext.TraceID() != root[0].SpanContext.TraceID() {
			t.Errorf("%s is in another trace", s.Name)
		}
	}
	if got := attrs(call[0])["agenthost.plugin.kind"].AsString(); got != "subagent" {
		t.Errorf("subagent call's kind = %q", got)
	}
	if got := attrs(child[0])["agenthost.depth"].AsInt64(); got != 1 {
		t.Errorf("subagent depth = %d", got)
	}
}

// TestContentCapture: nothing of the conversation is recorded by default;
// with the variable set, the messages (the continued session's history
// included), the arguments and the results are.
func TestContentCapture(t *testing.T) {
	history := []loop.Message{{Role: loop.RoleUser, Content: "earlier secret question"}, {Role: loop.RoleAssistant, Content: "earlier secret answer"}}
	run := func(env map[string]string) tracetest.SpanStubs {
		model := &script{replies: []reply{{resp: calls("echo")}, {resp: text("secret final answer")}}}
		a := &loop.Agent{Name: "main", ModelID: "m-1", Model: model, Tools: tools{}, Policy: loop.Policy{StepsMax: 3, System: "secret system prompt"}}
		_, spans := traceRun(t, a, env, history)
		return spans
	}
	noContent(t, run(nil))
	noContent(t, run(map[string]string{EnvCaptureContent: "false"}))

	spans := run(map[string]string{EnvCaptureContent: "true"})
	all := dump(spans)
	for _, want := range []string{"secret system prompt", "earlier secret question", "secret prompt text", "secret final answer", "argument text", "echo result"} {
		if !strings.Contains(all, want) {
			t.Errorf("captured content lacks %q", want)
		}
	}
	chats := named(spans, "chat m-1")
	in := attrs(chats[0])["gen_ai.input.messages"].AsString()
	if !strings.HasPrefix(in, `[{"role":"user","parts":[{"type":"text","content":"earlier secret question"}]},{"role":"assistant"`) {
		t.Errorf("gen_ai.input.messages = %s", in)
	}
	out := attrs(chats[1])["gen_ai.output.messages"].AsString()
	if out != `[{"role":"assistant","parts":[{"type":"text","content":"secret final answer"}],"finish_reason":"stop"}]` {
		t.Errorf("gen_ai.output.messages = %s", out)
	}
	echo := named(spans, "execute_tool echo")
	if got := attrs(echo[0])["gen_ai.tool.call.result"].AsString(); got != `echo result {"secret":"argument text"}` {
		t.Errorf("gen_ai.tool.call.result = %q", got)
	}
}

// TestWanted: traces are on with the config or an endpoint, off with the
// standard variables that turn them off.
func TestWanted(t *testing.T) {
	tests := []struct {
		config bool
		env    map[string]string
		want   bool
	}{
		{false, nil, false},
		{true, nil, true},
		{false, map[string]string{EnvEndpoint: "http://c:4318"}, true},
		{false, map[string]string{EnvTracesEndpoint: "http://c:4318/v1/traces"}, true},
		{true, map[string]string{EnvSDKDisabled: "true"}, false},
		{false, map[string]string{EnvEndpoint: "http://c:4318", EnvTracesExporter: "none"}, false},
		{false, map[string]string{EnvEndpoint: "http://c:4318", EnvSDKDisabled: "false"}, true},
	}
	for _, tc := range tests {
		if got := Wanted(tc.config, func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("Wanted(%v, %v) = %v, want %v", tc.config, tc.env, got, tc.want)
		}
	}
}

// TestUnsupportedProtocol: a protocol the exporter does not speak is an
// error that names the variable and the choices.
func TestUnsupportedProtocol(t *testing.T) {
	_, err := New(context.Background(), Options{Getenv: func(k string) string {
		return map[string]string{EnvProtocol: "udp"}[k]
	}})
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL=\"udp\"") || !strings.Contains(err.Error(), "grpc") {
		t.Errorf("err = %v", err)
	}
}

func hasEvent(s tracetest.SpanStub, name string) bool {
	for _, e := range s.Events {
		if e.Name == name {
			return true
		}
	}
	return false
}

func event(s tracetest.SpanStub, name string) *sdktrace.Event {
	for i := range s.Events {
		if s.Events[i].Name == name {
			return &s.Events[i]
		}
	}
	return nil
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// dump is every attribute and event attribute of spans, as text.
func dump(spans tracetest.SpanStubs) string {
	var b strings.Builder
	for _, s := range spans {
		for _, kv := range s.Attributes {
			fmt.Fprintf(&b, "%s=%s\n", kv.Key, kv.Value.Emit())
		}
		for _, e := range s.Events {
			for _, kv := range e.Attributes {
				fmt.Fprintf(&b, "%s: %s=%s\n", e.Name, kv.Key, kv.Value.Emit())
			}
		}
	}
	return b.String()
}

// noContent checks that no prompt, answer, argument or result is in spans.
func noContent(t *testing.T, spans tracetest.SpanStubs) {
	t.Helper()
	if len(spans) == 0 {
		t.Fatal("no spans")
	}
	if all := dump(spans); strings.Contains(all, "secret") {
		t.Errorf("content recorded without %s:\n%s", EnvCaptureContent, all)
	}
}

var _ sdktrace.SpanExporter = (*tracetest.InMemoryExporter)(nil)

// TestApprovalEvents: a call that waits for approval adds
// approval.request and approval.decision events to the agent's span, with
// the decision and who made it (here nobody could: denied).
func TestApprovalEvents(t *testing.T) {
	model := &script{replies: []reply{{resp: calls("echo")}, {resp: text("done")}}}
	a := &loop.Agent{Name: "main", ModelID: "m-1", Model: model, Tools: tools{}, Policy: loop.Policy{StepsMax: 4, Approve: []string{"ech*"}}}
	res, spans := traceRun(t, a, nil, nil)
	if res.StopReason != loop.StopCompleted || res.ToolCalls != 0 {
		t.Fatalf("stop reason %s, %d calls", res.StopReason, res.ToolCalls)
	}
	root := named(spans, "invoke_agent main")[0]
	if !hasEvent(root, "agenthost.approval.request") {
		t.Errorf("no approval.request event: %v", root.Events)
	}
	e := event(root, "agenthost.approval.decision")
	if e == nil {
		t.Fatalf("no approval.decision event: %v", root.Events)
	}
	got := map[attribute.Key]string{}
	for _, a := range e.Attributes {
		got[a.Key] = a.Value.Emit()
	}
	if got["agenthost.approval.decision"] != "deny" || got["agenthost.approval.by"] != "none" || got["gen_ai.tool.name"] != "echo" {
		t.Errorf("approval.decision attributes %v", got)
	}
	if _, ok := got["agenthost.message"]; ok {
		t.Errorf("the reason was kept without content capture: %v", got)
	}
	if len(named(spans, "execute_tool echo")) != 0 {
		t.Errorf("the denied call has a span")
	}
}
