package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/rs/zerolog"
)

// Run runs agent a on the input until it completes or a limit stops it. It
// never panics on model or tool misbehaviour and always returns a result.
func (r *Runner) Run(ctx context.Context, a *Agent, in Input) *Result {
	return r.run(ctx, a, in, 0, nil)
}

// run is the state of one agent's run. Subagents get their own.
type run struct {
	r     *Runner
	a     *Agent
	depth int
	// parent is the run that called this one as a subagent; nil at the top.
	parent *run
	log    zerolog.Logger
	// stepsMax is the step cap: Agent.StepsMax, or its default. The last step is
	// the final step.
	stepsMax int

	retry  RetryPolicy  // Agent.Retry with the defaults applied
	onText func(string) // Runner.OnText for this agent; nil without one

	history []Message
	res     *Result

	tools     []ToolSpec        // offered on non-final steps: plugin tools, then subagents
	names     []string          // names of tools, in order
	plugin    map[string]bool   // plugin tool names
	subagents map[string]*Agent // subagent tool names
	// toolsVersion is the RefreshingToolset's version the tools were
	// read at.
	toolsVersion uint64
	ids          map[string]bool // tool call ids seen in this run
	nextID       int

	lastText string // last non-empty assistant text

	spent spend // tokens and cost (spend.go)
	// sampleMu, on the top run, makes the tools' Sample requests one at a
	// time (they run beside each other, and charge this run's spend).
	sampleMu sync.Mutex

	// slots bound this run's parallel calls when Runner.Slots is nil; made
	// at the first response with several calls.
	slots *Slots

	used          int  // executed tool calls counted against the budget
	budgetEmitted bool // budget.exhausted was emitted
	doom          doomDetector
	// always are the tools allowed "always" in this run (approve.go).
	always map[string]bool

	// final is the limit that makes the next request the final step; empty
	// while none was hit.
	final   StopReason
	compact bool // summarise before the next request
}

func (r *Runner) run(ctx context.Context, a *Agent, in Input, depth int, parent *run) *Result {
	if a == nil {
		res := &Result{Session: in.Session, StopReason: StopError, Errors: []string{"loop: agent is nil"}}
		r.emit(Event{Type: EventRunEnd, Depth: depth, Time: r.now(), Result: res})
		return res
	}
	ru := &run{
		r:         r,
		a:         a,
		depth:     depth,
		parent:    parent,
		spent:     spend{costKnown: a.Price != nil},
		log:       zerolog.Ctx(ctx).With().Str("agent", a.Name).Int("depth", depth).Logger(),
		stepsMax:  a.stepsMax(),
		plugin:    map[string]bool{},
		subagents: map[string]*Agent{},
		ids:       map[string]bool{},
		retry:     a.Retry.withDefaults(),
		doom:      newDoomDetector(a.DoomThreshold, a.DoomAction),
		res: &Result{
			Session: in.Session,
			Agent:   a.Name,
			Errors:  []string{},
		},
	}
	ru.res.StepsMax = ru.stepsMax
	ru.res.Cost = ru.runCost()
	if r.OnText != nil {
		ru.onText = func(s string) { r.OnText(a.Name, depth, s) }
	}
	if a.Budget > 0 {
		b := a.Budget
		ru.res.Budget = &b
	}
	if rt, ok := a.Tools.(RefreshingToolset); ok {
		ru.toolsVersion = rt.Refresh(ctx)
	}
	ru.offerTools()
	ru.offerSubagents()

	ru.emit(Event{Type: EventRunStart, StepsMax: ru.stepsMax})
	ru.log.Info().Str("model", a.ModelID).Int("cap", ru.stepsMax).Int("budget", a.Budget).Strs("tools", ru.names).Msg("run start")

	if sys := a.outputSystem(); sys != "" {
		ru.append(Message{Role: RoleSystem, Content: sys})
	}
	for _, m := range in.History {
		ru.history = append(ru.history, m)
		for _, c := range m.ToolCalls {
			ru.ids[c.ID] = true
		}
	}
	ru.append(Message{Role: RoleUser, Content: in.Prompt})

	var reason StopReason
	if a.Model == nil {
		reason = StopError
		ru.res.Errors = append(ru.res.Errors, fmt.Sprintf("agent %q has no model", a.Name))
	} else {
		reason = ru.checkOutput(ctx, ru.loop(ctx))
	}

	ru.res.StopReason = reason
	ru.res.Output = ru.lastText
	ru.res.Messages = ru.history
	ev := ru.log.Info()
	if reason != StopCompleted {
		ev = ru.log.Warn()
	}
	ev.Str("stop_reason", string(reason)).Int("steps", ru.res.Steps).Int("cap", ru.stepsMax).
		Int("tool_calls", ru.res.ToolCalls).Int("total_tokens", ru.res.Usage.TotalTokens).Msg(LogRunEnd)
	ru.emit(Event{Type: EventRunEnd, StepsMax: ru.stepsMax, Result: ru.res})
	return ru.res
}

// loop runs steps until the run ends and returns the stop reason.
func (ru *run) loop(ctx context.Context) StopReason {
	for step := 1; ; step++ {
		if ctx.Err() != nil {
			return StopAborted
		}
		if ru.compact {
			if reason := ru.compaction(ctx); reason != "" {
				return reason
			}
		}

		final, reason := ru.finalStep(step)
		if !final && step > 1 {
			ru.refreshTools(ctx)
		}
		var req Request
		var offered []string
		req.Tools, req.ToolChoice, offered = ru.stepTools(final)
		if len(req.Tools) == 0 {
			req.ResponseFormat = ru.responseFormat()
		}

		ru.res.Steps = step
		ru.emit(Event{Type: EventStepStart, Step: step, StepsMax: ru.stepsMax, Final: Bool(final), Offered: offered})
		ru.log.Debug().Int("step", step).Int("cap", ru.stepsMax).Bool("final", final).Strs("tools", offered).Msg("step start")
		if final && !ru.textOnly() {
			ru.log.Warn().Int("step", step).Int("cap", ru.stepsMax).Str("reason", string(reason)).Msg(LogFinalStep)
			ru.append(Message{Role: RoleUser, Content: ru.finalPrompt(reason)})
		}

		req.Messages = ru.history[:len(ru.history):len(ru.history)]
		if step == 1 {
			ru.checkWindow(req)
		}
		resp, failed, err := ru.stream(ctx, req, true)
		if failed != "" {
			if failed != StopAborted {
				ru.res.Errors = append(ru.res.Errors, err.Error())
				ru.res.Err = err
			}
			ru.emit(Event{Type: EventStepEnd, Step: step, StepsMax: ru.stepsMax, Final: Bool(final), Message: string(failed)})
			return failed
		}
		msg, stepEnd := ru.answered(req, &resp, step, final)

		if final {
			reason = ru.finish(msg, step, reason)
			ru.emit(stepEnd)
			return reason
		}

		if strings.TrimSpace(msg.Content) == "" && msg.Reasoning == "" && len(msg.ToolCalls) == 0 {
			// An empty response is not appended: it would be an invalid
			// assistant message for several providers. The run ends.
			ru.log.Warn().Int("step", step).Str("finish_reason", resp.FinishReason).Msg("empty response: run ends")
			ru.emit(stepEnd)
			return StopCompleted
		}
		if len(msg.ToolCalls) == 0 {
			if resp.Truncated {
				ru.log.Warn().Int("step", step).Str("finish_reason", resp.FinishReason).Msg("truncated text response: run ends with the partial text")
			}
			ru.append(msg)
			ru.emit(stepEnd)
			return StopCompleted
		}

		ru.prepare(&msg)
		ru.append(msg)
		if resp.Truncated {
			ru.log.Warn().Int("step", step).Int("calls", len(msg.ToolCalls)).Str("finish_reason", resp.FinishReason).Msg("truncated response: tool calls not executed")
			for _, c := range msg.ToolCalls {
				ru.answer(c, truncatedResult(c, resp.FinishReason), true)
			}
		} else if !ru.execute(ctx, msg.ToolCalls) {
			ru.emit(stepEnd)
			return StopAborted
		}
		ru.emit(stepEnd)

		if needsCompaction(resp.Usage.PromptTokens, ru.a.ContextWindow) {
			ru.compact = true
		}
	}
}

// orDefault returns s, or def when s is blank: a prompt the agent leaves
// blank is the default of package prompts.
func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// append adds m to the history and emits it.
// answered accounts for resp, the response to req in step, and returns
// its message as the assistant's and the step.end event that reports it.
func (ru *run) answered(req Request, resp *Response, step int, final bool) (Message, Event) {
	usage, cost := ru.account(req, resp)
	ru.spent.lastPrompt = usage.PromptTokens
	runUsage := ru.res.Usage
	msg := resp.Message
	msg.Role, msg.ToolCallID, msg.Name, msg.IsError = RoleAssistant, "", "", false
	return msg, Event{Type: EventStepEnd, Step: step, StepsMax: ru.stepsMax, Final: Bool(final), FinishReason: resp.FinishReason,
		Usage: &usage, Cost: cost, RunUsage: &runUsage, RunCost: ru.runCost()}
}

func (ru *run) append(m Message) {
	ru.history = append(ru.history, m)
	if m.Role == RoleAssistant && strings.TrimSpace(m.Content) != "" {
		ru.lastText = m.Content
	}
	ru.emit(Event{Type: EventMessage, Msg: &m})
}

func (ru *run) emit(e Event) {
	e.Agent, e.Depth = ru.a.Name, ru.depth
	ru.r.emit(e)
}

// flush tells a Flusher sink that the loop is about to wait.
func (r *Runner) flush() {
	if f, ok := r.Sink.(Flusher); ok {
		f.Flush()
	}
}

func (r *Runner) emit(e Event) {
	if r.Sink == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = r.now()
	}
	r.Sink.Emit(e)
}

// truncatedResult explains to the model why a call of a truncated response
// was not executed: its own arguments did not parse, or another call's did
// (or the response hit its length limit), so the response may be cut off.
func truncatedResult(c ToolCall, finish string) string {
	var v any
	if err := json.Unmarshal([]byte(c.Arguments), &v); err != nil {
		return fmt.Sprintf("tool call %s not executed: its arguments are not valid JSON (%v), so the response may have been cut off; none of its calls ran. Send the call again with complete JSON arguments.", c.Name, err)
	}
	if finish == "length" {
		return fmt.Sprintf("tool call %s not executed: the response hit its length limit (finish reason \"length\") and may be incomplete; none of its calls ran. Send the call again, with shorter arguments if needed.", c.Name)
	}
	return fmt.Sprintf("tool call %s not executed: another call in the same response had arguments that are not valid JSON, so the response may have been cut off; none of its calls ran. Send the calls again.", c.Name)
}
