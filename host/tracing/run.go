package tracing

import (
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agenthost/agenthost/loop"
)

// Attribute keys: the GenAI semantic conventions', then agenthost's own
// (namespaced agenthost.*).
const (
	keyOperation      = "gen_ai.operation.name"
	keyProvider       = "gen_ai.provider.name"
	keySystem         = "gen_ai.system" // the older name of gen_ai.provider.name
	keyAgentName      = "gen_ai.agent.name"
	keyAgentDesc      = "gen_ai.agent.description"
	keyConversation   = "gen_ai.conversation.id"
	keyRequestModel   = "gen_ai.request.model"
	keyFinishReasons  = "gen_ai.response.finish_reasons"
	keyInputTokens    = "gen_ai.usage.input_tokens"
	keyOutputTokens   = "gen_ai.usage.output_tokens"
	keyCachedTokens   = "gen_ai.usage.cache_read.input_tokens"
	keyToolName       = "gen_ai.tool.name"
	keyToolCallID     = "gen_ai.tool.call.id"
	keyToolType       = "gen_ai.tool.type"
	keyToolArgs       = "gen_ai.tool.call.arguments"
	keyToolResult     = "gen_ai.tool.call.result"
	keyInputMessages  = "gen_ai.input.messages"
	keyOutputMessages = "gen_ai.output.messages"
	keySystemInstr    = "gen_ai.system_instructions"
	keyErrorType      = "error.type"
	keyServerAddress  = "server.address"
	keyServerPort     = "server.port"
	keyHTTPStatus     = "http.response.status_code"

	keyProviderBlock  = "agenthost.provider"
	keyDepth          = "agenthost.depth"
	keyStep           = "agenthost.step"
	keyStepsMax       = "agenthost.steps_max"
	keyFinal          = "agenthost.final_step"
	keySteps          = "agenthost.steps"
	keyToolCalls      = "agenthost.tool_calls"
	keyBudget         = "agenthost.budget"
	keyStopReason     = "agenthost.stop_reason"
	keyLimitsHit      = "agenthost.limits_hit"
	keyCost           = "agenthost.cost_usd"
	keyEstimated      = "agenthost.usage.estimated"
	keyErrors         = "agenthost.errors"
	keyPlugin         = "agenthost.plugin"
	keyPluginKind     = "agenthost.plugin.kind"
	keyToolError      = "agenthost.tool.is_error"
	keyRetryAttempt   = "agenthost.retry.attempt"
	keyRetryDelayMS   = "agenthost.retry.delay_ms"
	keyRetryError     = "agenthost.retry.error"
	keyMessage        = "agenthost.message"
	keyReplaced       = "agenthost.compaction.replaced"
	keyKept           = "agenthost.compaction.kept"
	providerName      = "openai" // the API every provider block speaks
	toolTypeFunction  = "function"
	errToolError      = "tool_error"
	kindSubagent      = "subagent"
	eventRetry        = "agenthost.retry"
	eventDoomLoop     = "agenthost.doom_loop"
	eventBudget       = "agenthost.budget_exhausted"
	eventToolDropped  = "agenthost.tool_dropped"
	eventCompaction   = "agenthost.compaction"
	eventApprovalReq  = "agenthost.approval.request"
	eventApprovalDec  = "agenthost.approval.decision"
	keyDecision       = "agenthost.approval.decision"
	keyDecidedBy      = "agenthost.approval.by"
	limitBudget       = "budget"
	limitDoomLoop     = "doom_loop"
	operationChat     = "chat"
	operationInvoke   = "invoke_agent"
	operationExecTool = "execute_tool"
)

// Run turns one run's events into spans. It is a loop.Sink; Emit must be
// called with the run's events in order, from one goroutine at a time.
type Run struct {
	t       *Tracer
	session string
	// frames are the agents running, the top-level one first: a subagent
	// runs inside its parent's tool call.
	frames []*frame
	// history seeds the top-level agent's conversation (content capture).
	history []loop.Message
	// agents describe the agents: the tracer's, but for one set for this
	// run only (SetAgent).
	agents map[string]Agent
}

// SetAgent describes agent name as a for this run only: its model when
// the run picked another (run -m). Call it before the first event.
func (r *Run) SetAgent(name string, a Agent) {
	m := make(map[string]Agent, len(r.agents)+1)
	for k, v := range r.agents {
		m[k] = v
	}
	m[name] = a
	r.agents = m
}

// frame is one agent's run in progress.
type frame struct {
	agent string
	info  Agent
	span  trace.Span
	ctx   context.Context // carries span
	chat  *chatSpan
	// tools are the tool spans started and not yet ended, by call id;
	// subagent is the subagent call in progress, the parent of the next
	// run.start one level down.
	tools    map[string]*toolSpan
	subagent *toolSpan
	limits   []string
	// history is the conversation as the next request sends it; kept only
	// when content is captured.
	history []loop.Message
}

type chatSpan struct {
	span trace.Span
	// answered is when the response was complete: the first event after
	// the request (the assistant message, a dropped or started call). The
	// span ends then, once step.end has brought its usage.
	answered time.Time
	// output is the response, kept to be recorded with its finish reason
	// (content capture only).
	output *loop.Message
}

type toolSpan struct {
	span trace.Span
	// ended is when tool.end came; with content captured the span stays
	// open until the tool message brings the result.
	ended time.Time
}

// Emit implements loop.Sink.
func (r *Run) Emit(ev loop.Event) {
	if ev.Type == loop.EventRunStart {
		r.start(ev)
		return
	}
	f := r.frame(ev.Depth)
	if f == nil {
		if ev.Type == loop.EventRunEnd {
			// A run that ended before it started (no agent).
			r.start(ev)
			r.end(r.frame(ev.Depth), ev)
		}
		return
	}
	switch ev.Type {
	case loop.EventStepStart:
		r.stepStart(f, ev)
	case loop.EventMessage:
		r.message(f, ev)
	case loop.EventRetry:
		attrs := []attribute.KeyValue{
			attribute.Int(keyRetryAttempt, ev.Attempt),
			attribute.String(keyRetryError, ev.Message),
		}
		if ev.DelayMS != nil {
			attrs = append(attrs, attribute.Int64(keyRetryDelayMS, *ev.DelayMS))
		}
		if ev.Status != 0 {
			attrs = append(attrs, attribute.Int(keyHTTPStatus, ev.Status))
		}
		target := f.span // a compaction request's retry
		if f.chat != nil {
			target = f.chat.span
		}
		target.AddEvent(eventRetry, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
	case loop.EventToolStart, loop.EventSubagentStart:
		answered(f, ev.Time)
		r.toolStart(f, ev)
	case loop.EventToolEnd, loop.EventSubagentEnd:
		r.toolEnd(f, ev)
	case loop.EventToolDropped:
		answered(f, ev.Time)
		f.span.AddEvent(eventToolDropped, trace.WithTimestamp(ev.Time), trace.WithAttributes(
			attribute.String(keyToolName, ev.Tool), attribute.String(keyToolCallID, ev.CallID), attribute.String(keyMessage, ev.Message)))
	case loop.EventDoomLoop:
		answered(f, ev.Time)
		f.limit(limitDoomLoop)
		f.span.AddEvent(eventDoomLoop, trace.WithTimestamp(ev.Time), trace.WithAttributes(
			attribute.String(keyToolName, ev.Tool), attribute.String(keyToolCallID, ev.CallID), attribute.String(keyMessage, ev.Message)))
	case loop.EventApprovalRequest:
		answered(f, ev.Time)
		f.span.AddEvent(eventApprovalReq, trace.WithTimestamp(ev.Time), trace.WithAttributes(
			attribute.String(keyToolName, ev.Tool), attribute.String(keyToolCallID, ev.CallID), attribute.String(keyMessage, ev.Message)))
	case loop.EventApprovalDecision:
		// The reason may quote the user: it is content, kept only when
		// content capture is on.
		attrs := []attribute.KeyValue{attribute.String(keyToolName, ev.Tool), attribute.String(keyToolCallID, ev.CallID),
			attribute.String(keyDecision, ev.Decision), attribute.String(keyDecidedBy, ev.By)}
		if r.t.capture && ev.Message != "" {
			attrs = append(attrs, attribute.String(keyMessage, ev.Message))
		}
		f.span.AddEvent(eventApprovalDec, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
	case loop.EventBudgetExhausted:
		f.limit(limitBudget)
		f.span.AddEvent(eventBudget, trace.WithTimestamp(ev.Time), trace.WithAttributes(attribute.String(keyMessage, ev.Message)))
	case loop.EventCompaction:
		attrs := []attribute.KeyValue{attribute.Int(keyReplaced, ev.Replaced), attribute.Int(keyKept, ev.Kept)}
		if ev.Usage != nil {
			attrs = append(attrs, attribute.Int(keyInputTokens, ev.Usage.PromptTokens), attribute.Int(keyOutputTokens, ev.Usage.CompletionTokens))
		}
		f.span.AddEvent(eventCompaction, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
		if r.t.capture && ev.Msg != nil {
			f.history, _ = loop.ApplyCompaction(f.history, *ev.Msg, ev.Kept)
		}
	case loop.EventStepEnd:
		r.stepEnd(f, ev)
	case loop.EventRunEnd:
		r.end(f, ev)
	}
}

// frame returns the agent running at depth, or nil.
func (r *Run) frame(depth int) *frame {
	if depth < 0 || depth >= len(r.frames) {
		return nil
	}
	return r.frames[depth]
}

func (f *frame) limit(l string) {
	if !slices.Contains(f.limits, l) {
		f.limits = append(f.limits, l)
	}
}

// start opens the invoke_agent span of an agent: the trace's root at depth
// 0, else a child of the subagent call that runs it.
func (r *Run) start(ev loop.Event) {
	parent := context.Background()
	opts := []trace.SpanStartOption{trace.WithTimestamp(ev.Time), trace.WithSpanKind(trace.SpanKindInternal)}
	if p := r.frame(ev.Depth - 1); ev.Depth > 0 && p != nil {
		parent = p.ctx
		if p.subagent != nil {
			parent = trace.ContextWithSpan(parent, p.subagent.span)
		}
	} else {
		opts = append(opts, trace.WithNewRoot())
	}
	info := r.agents[ev.Agent]
	attrs := []attribute.KeyValue{
		attribute.String(keyOperation, operationInvoke),
		attribute.String(keyProvider, providerName),
		attribute.String(keySystem, providerName),
		attribute.String(keyAgentName, ev.Agent),
		attribute.Int(keyDepth, ev.Depth),
	}
	if info.Description != "" {
		attrs = append(attrs, attribute.String(keyAgentDesc, info.Description))
	}
	if info.Model != "" {
		attrs = append(attrs, attribute.String(keyRequestModel, info.Model))
	}
	if r.session != "" {
		attrs = append(attrs, attribute.String(keyConversation, r.session))
	}
	if ev.StepsMax > 0 {
		attrs = append(attrs, attribute.Int(keyStepsMax, ev.StepsMax))
	}
	opts = append(opts, trace.WithAttributes(attrs...))
	ctx, span := r.t.tracer.Start(parent, operationInvoke+" "+ev.Agent, opts...)
	f := &frame{agent: ev.Agent, info: info, span: span, ctx: ctx, tools: map[string]*toolSpan{}}
	if r.t.capture && ev.Depth == 0 {
		f.history = slices.Clone(r.history)
	}
	// A run.start at a depth already running replaces what was left there
	// (it cannot happen with the loop's events).
	for len(r.frames) < ev.Depth {
		r.frames = append(r.frames, nil)
	}
	r.frames = append(r.frames[:ev.Depth], f)
}

// end closes an agent's span with its result.
func (r *Run) end(f *frame, ev loop.Event) {
	if f == nil {
		return
	}
	r.closeChat(f, ev.Time)
	r.closeTools(f, ev.Time)
	if res := ev.Result; res != nil {
		attrs := []attribute.KeyValue{
			attribute.String(keyStopReason, string(res.StopReason)),
			attribute.Int(keySteps, res.Steps),
			attribute.Int(keyStepsMax, res.StepsMax),
			attribute.Int(keyToolCalls, res.ToolCalls),
			attribute.Int(keyInputTokens, res.Usage.PromptTokens),
			attribute.Int(keyOutputTokens, res.Usage.CompletionTokens),
		}
		if res.Usage.CachedTokens > 0 {
			attrs = append(attrs, attribute.Int(keyCachedTokens, res.Usage.CachedTokens))
		}
		if res.Usage.Estimated {
			attrs = append(attrs, attribute.Bool(keyEstimated, true))
		}
		if res.Budget != nil {
			attrs = append(attrs, attribute.Int(keyBudget, *res.Budget))
		}
		if res.Cost != nil {
			attrs = append(attrs, attribute.Float64(keyCost, *res.Cost))
		}
		if len(res.Errors) > 0 {
			attrs = append(attrs, attribute.StringSlice(keyErrors, res.Errors))
		}
		if res.StopReason.IsLimit() {
			f.limit(string(res.StopReason))
		}
		if len(f.limits) > 0 {
			attrs = append(attrs, attribute.StringSlice(keyLimitsHit, f.limits))
		}
		f.span.SetAttributes(attrs...)
		if failed(res.StopReason) {
			f.span.SetAttributes(attribute.String(keyErrorType, string(res.StopReason)))
			desc := string(res.StopReason)
			if len(res.Errors) > 0 {
				desc = res.Errors[0]
			}
			f.span.SetStatus(codes.Error, desc)
		}
	}
	f.span.End(trace.WithTimestamp(ev.Time))
	if d := ev.Depth; d < len(r.frames) && r.frames[d] == f {
		r.frames = r.frames[:d]
	}
}

// failed reports the stop reasons with which a run broke off
// (loop.StopReason.Broken): not limits doing their job, nor an answer
// that does not satisfy the output schema.
func failed(s loop.StopReason) bool {
	return s.Broken()
}

// stepStart opens the chat span of a step's request.
func (r *Run) stepStart(f *frame, ev loop.Event) {
	r.closeChat(f, ev.Time)
	attrs := []attribute.KeyValue{
		attribute.String(keyOperation, operationChat),
		attribute.String(keyProvider, providerName),
		attribute.String(keySystem, providerName),
		attribute.String(keyRequestModel, f.info.Model),
		attribute.String(keyAgentName, f.agent),
		attribute.Int(keyStep, ev.Step),
	}
	if f.info.Provider != "" {
		attrs = append(attrs, attribute.String(keyProviderBlock, f.info.Provider))
	}
	if f.info.ServerAddress != "" {
		attrs = append(attrs, attribute.String(keyServerAddress, f.info.ServerAddress))
		if f.info.ServerPort > 0 {
			attrs = append(attrs, attribute.Int(keyServerPort, f.info.ServerPort))
		}
	}
	if ev.Final != nil && *ev.Final {
		attrs = append(attrs, attribute.Bool(keyFinal, true))
	}
	_, span := r.t.tracer.Start(f.ctx, operationChat+" "+f.info.Model, trace.WithTimestamp(ev.Time),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	f.chat = &chatSpan{span: span}
}

// answered marks the step's response as complete at t, once.
func answered(f *frame, t time.Time) {
	if f.chat != nil && f.chat.answered.IsZero() {
		f.chat.answered = t
	}
}

// stepEnd gives the chat span its usage and outcome and ends it when the
// response came.
func (r *Run) stepEnd(f *frame, ev loop.Event) {
	r.closeTools(f, ev.Time)
	c := f.chat
	if c == nil {
		return
	}
	if ev.FinishReason != "" {
		c.span.SetAttributes(attribute.StringSlice(keyFinishReasons, []string{ev.FinishReason}))
	}
	if u := ev.Usage; u != nil {
		c.span.SetAttributes(attribute.Int(keyInputTokens, u.PromptTokens), attribute.Int(keyOutputTokens, u.CompletionTokens))
		if u.CachedTokens > 0 {
			c.span.SetAttributes(attribute.Int(keyCachedTokens, u.CachedTokens))
		}
		if u.Estimated {
			c.span.SetAttributes(attribute.Bool(keyEstimated, true))
		}
	}
	if ev.Cost != nil {
		c.span.SetAttributes(attribute.Float64(keyCost, *ev.Cost))
	}
	if c.output != nil {
		c.span.SetAttributes(attribute.String(keyOutputMessages, outputMessages(*c.output, ev.FinishReason)))
	}
	if ev.Message != "" { // the request failed: Message is the stop reason
		c.span.SetAttributes(attribute.String(keyErrorType, ev.Message))
		c.span.SetStatus(codes.Error, ev.Message)
	}
	r.closeChat(f, ev.Time)
}

// closeChat ends the open chat span, at its response's time when known.
func (r *Run) closeChat(f *frame, t time.Time) {
	if f.chat == nil {
		return
	}
	if !f.chat.answered.IsZero() {
		t = f.chat.answered
	}
	f.chat.span.End(trace.WithTimestamp(t))
	f.chat = nil
}

// message follows the conversation: the assistant's message completes the
// step's response, a tool message brings a captured tool result.
func (r *Run) message(f *frame, ev loop.Event) {
	m := ev.Msg
	if m == nil {
		return
	}
	switch m.Role {
	case loop.RoleAssistant:
		if f.chat != nil && f.chat.answered.IsZero() {
			f.chat.answered = ev.Time
			if r.t.capture {
				f.chat.span.SetAttributes(inputMessages(f.history)...)
				out := *m
				f.chat.output = &out
			}
		}
	case loop.RoleTool:
		if ts := f.tools[m.ToolCallID]; ts != nil && !ts.ended.IsZero() {
			if r.t.capture {
				ts.span.SetAttributes(attribute.String(keyToolResult, m.Content))
			}
			ts.span.End(trace.WithTimestamp(ts.ended))
			delete(f.tools, m.ToolCallID)
		}
	}
	if r.t.capture {
		f.history = append(f.history, *m)
	}
}

// toolStart opens an execute_tool span; a subagent call's span is the
// parent of the subagent's invoke_agent span.
func (r *Run) toolStart(f *frame, ev loop.Event) {
	attrs := []attribute.KeyValue{
		attribute.String(keyOperation, operationExecTool),
		attribute.String(keyToolName, ev.Tool),
		attribute.String(keyToolCallID, ev.CallID),
		attribute.String(keyToolType, toolTypeFunction),
		attribute.String(keyAgentName, f.agent),
		attribute.Int(keyStep, ev.Step),
	}
	if ev.Type == loop.EventSubagentStart {
		attrs = append(attrs, attribute.String(keyPluginKind, kindSubagent))
	} else if t, ok := r.t.tools[ev.Tool]; ok {
		attrs = append(attrs, attribute.String(keyPlugin, t.Plugin), attribute.String(keyPluginKind, t.Kind))
	}
	if r.t.capture {
		attrs = append(attrs, attribute.String(keyToolArgs, ev.Arguments))
	}
	_, span := r.t.tracer.Start(f.ctx, operationExecTool+" "+ev.Tool, trace.WithTimestamp(ev.Time),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	ts := &toolSpan{span: span}
	f.tools[ev.CallID] = ts
	if ev.Type == loop.EventSubagentStart {
		f.subagent = ts
	}
}

// toolEnd records a call's outcome. The span ends at once, or, with content
// captured, when the tool message brings the result (the next event).
func (r *Run) toolEnd(f *frame, ev loop.Event) {
	ts := f.tools[ev.CallID]
	if ts == nil {
		return
	}
	if ev.Type == loop.EventSubagentEnd {
		f.subagent = nil
		if res := ev.Result; res != nil {
			ts.span.SetAttributes(attribute.String(keyStopReason, string(res.StopReason)))
		}
	}
	isErr := ev.IsError != nil && *ev.IsError
	ts.span.SetAttributes(attribute.Bool(keyToolError, isErr))
	if isErr {
		ts.span.SetAttributes(attribute.String(keyErrorType, errToolError))
		ts.span.SetStatus(codes.Error, errToolError)
	}
	ts.ended = ev.Time
	if !r.t.capture {
		ts.span.End(trace.WithTimestamp(ev.Time))
		delete(f.tools, ev.CallID)
	}
}

// closeTools ends the tool spans left open (a call whose tool message did
// not follow), at their end or at t.
func (r *Run) closeTools(f *frame, t time.Time) {
	for id, ts := range f.tools {
		end := ts.ended
		if end.IsZero() {
			end = t
		}
		ts.span.End(trace.WithTimestamp(end))
		delete(f.tools, id)
	}
	f.subagent = nil
}
