package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agenthost/agenthost/internal/defaults"
)

// offerTools registers the agent's plugin tools, offered on non-final steps.
func (ru *run) offerTools() {
	if ru.a.Tools == nil {
		return
	}
	for _, t := range ru.a.Tools.Tools() {
		ru.tools = append(ru.tools, t)
		ru.names = append(ru.names, t.Name)
		ru.plugin[t.Name] = true
	}
}

// refreshTools brings the offered tools up to date before a step when the
// Toolset is a RefreshingToolset whose tools changed since the run last
// read them: the tools are read again (the subagents stay), and the change
// is logged. The step's request, its step.start event and the calls it
// returns then see the new list.
func (ru *run) refreshTools(ctx context.Context) {
	rt, ok := ru.a.Tools.(RefreshingToolset)
	if !ok {
		return
	}
	v := rt.Refresh(ctx)
	if v == ru.toolsVersion {
		return
	}
	ru.toolsVersion = v
	before := ru.plugin
	ru.tools, ru.names, ru.plugin = nil, nil, map[string]bool{}
	clear(ru.subagents)
	ru.offerTools()
	ru.offerSubagents()
	var added, removed []string
	for n := range ru.plugin {
		if !before[n] {
			added = append(added, n)
		}
	}
	for n := range before {
		if !ru.plugin[n] {
			removed = append(removed, n)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	ru.log.Info().Strs("added", added).Strs("removed", removed).Strs("tools", ru.names).Msg("tools changed: the next request offers the new list")
}

// prepare repairs the tool calls of an assistant message before it enters
// the history: missing or repeated ids get a fresh one, a name that matches
// exactly one tool case-insensitively is replaced by that tool's name, and
// empty arguments become "{}".
func (ru *run) prepare(msg *Message) {
	calls := make([]ToolCall, len(msg.ToolCalls))
	copy(calls, msg.ToolCalls)
	for i := range calls {
		c := &calls[i]
		if c.ID == "" || ru.ids[c.ID] {
			old := c.ID
			for {
				ru.nextID++
				c.ID = fmt.Sprintf("ah%07d", ru.nextID)
				if !ru.ids[c.ID] {
					break
				}
			}
			ru.log.Warn().Str("call_id", old).Str("new_id", c.ID).Str("tool", c.Name).Msg("tool call id missing or repeated: replaced")
		}
		ru.ids[c.ID] = true
		if name, ok := ru.resolve(c.Name); ok && name != c.Name {
			ru.log.Warn().Str("call_id", c.ID).Str("tool", c.Name).Str("repaired", name).Msg("tool name repaired (case-insensitive match)")
			c.Name = name
		}
		if strings.TrimSpace(c.Arguments) == "" {
			c.Arguments = "{}"
		}
	}
	msg.ToolCalls = calls
}

// resolve finds the tool called name: an exact match, else the only
// case-insensitive match.
func (ru *run) resolve(name string) (string, bool) {
	if ru.plugin[name] || ru.subagents[name] != nil {
		return name, true
	}
	found := ""
	for _, n := range ru.names {
		if strings.EqualFold(n, name) {
			if found != "" {
				return "", false
			}
			found = n
		}
	}
	return found, found != ""
}

// execute answers every call with exactly one tool message, in the order
// of the calls. It returns false when the run was aborted.
//
// The calls past the first Agent.MaxCallsPerStep are refused. What depends
// on the calls before (an abort, the budget, the doom loop) and what
// refuses a call without running it (an unknown tool, bad arguments) is
// decided next, one call after the other; a call that needs approval is
// asked last, once nothing else refuses it (approve.go), so the calls
// that need approval are asked one after the other in call order. The
// calls that pass then run:
// the Toolset's calls concurrently, as many at once as the slots allow (the
// model sent them as parallel calls of one response, so none waits for
// another's result), then the subagents one after the other. The answers
// are appended once all have ended.
func (ru *run) execute(ctx context.Context, calls []ToolCall) bool {
	answers := make([]Message, len(calls))
	var tools, subs []int     // the calls that run: Toolset calls, subagent calls
	var checked []CheckedCall // the checked Toolset calls, by index in calls
	if _, ok := ru.a.Tools.(ArgumentChecker); ok {
		checked = make([]CheckedCall, len(calls))
	}
	refuse := "" // when set, the remaining calls are answered with it
	limit := defaults.Or(ru.a.MaxCallsPerStep, defaults.MaxCallsPerStep)
	if len(calls) > limit {
		ru.log.Warn().Int("calls", len(calls)).Int("max_calls_per_step", limit).Msg("too many tool calls in one response: the calls past max_calls_per_step are refused")
	}
	for i, c := range calls {
		switch {
		case i >= limit:
			answers[i] = toolMessage(c, tooManyCalls(c, i, len(calls), limit), true)
			continue
		case ctx.Err() != nil:
			answers[i] = AbortedAnswer(c)
			continue
		case refuse != "":
			answers[i] = toolMessage(c, refuse, true)
			continue
		case ru.budgetSpent():
			refuse = ru.budgetRefusal(c)
			answers[i] = toolMessage(c, refuse, true)
			continue
		}
		args := readArguments(c)
		if run, content, stop := ru.checkDoom(ctx, c, args.canon); !run {
			answers[i] = toolMessage(c, content, true)
			if stop {
				refuse = doomStopping(c)
			}
			continue
		}
		cc, content, ok := ru.admit(c, args)
		if !ok {
			answers[i] = toolMessage(c, content, true)
			continue
		}
		if checked != nil {
			checked[i] = cc
		}
		if content, ok := ru.approve(ctx, c); !ok {
			answers[i] = toolMessage(c, content, true)
			continue
		}
		ru.used++ // counted toward the budget of the calls after it
		if ru.subagents[c.Name] != nil {
			subs = append(subs, i)
		} else {
			tools = append(tools, i)
		}
	}
	ru.callTools(ctx, calls, checked, tools, answers)
	for _, i := range subs {
		c := calls[i]
		if ctx.Err() != nil {
			answers[i] = AbortedAnswer(c)
			continue
		}
		content, isErr := ru.callSubagent(ctx, c, ru.subagents[c.Name])
		answers[i] = toolMessage(c, content, isErr)
	}
	for _, m := range answers {
		ru.append(m)
	}
	ru.checkBudget()
	return ctx.Err() == nil
}

// tooManyCalls is the error result of call c, the i-th (from 0) of the n
// calls of a response, past the limit of calls one response may make.
func tooManyCalls(c ToolCall, i, n, limit int) string {
	return fmt.Sprintf("tool call %s not executed: this response made %d tool calls and at most %d of one response run "+
		"(host.max_calls_per_step in agents.hcl; raise it to allow more); this was call %d. Send the calls that matter in your next response.",
		c.Name, n, limit, i+1)
}

// answer appends the tool message for call c.
func (ru *run) answer(c ToolCall, content string, isErr bool) {
	ru.append(toolMessage(c, content, isErr))
}

func toolMessage(c ToolCall, content string, isErr bool) Message {
	return Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: content, IsError: isErr}
}

// abortedResult is the content of AbortedAnswer.
const abortedResult = "aborted: the run was interrupted before this call finished"

// AbortedAnswer is the tool message answering call c when an abort kept it
// from finishing: the run was cancelled before c started or while it ran
// (and it returned no result), or the process died with c unanswered. It is
// an error result. Every "aborted" answer in a history is this one.
func AbortedAnswer(c ToolCall) Message {
	return toolMessage(c, abortedResult, true)
}

// admit checks call c, whose arguments are args, before it runs: a
// subagent's arguments and depth, a tool the agent has, arguments that are
// a JSON object and pass the tool's schema (ArgumentChecker). A refused
// call gets the returned error result; it emits no tool event and does not
// count toward the budget. An admitted call of an ArgumentChecker's tool
// comes back checked, to run with CallChecked.
func (ru *run) admit(c ToolCall, args arguments) (CheckedCall, string, bool) {
	if sub := ru.subagents[c.Name]; sub != nil {
		content, ok := ru.admitSubagent(c, sub)
		return CheckedCall{}, content, ok
	}
	if !ru.plugin[c.Name] {
		ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Msg("unknown tool")
		return CheckedCall{}, UnknownTool(c.Name, ru.names), false
	}
	if args.msg != "" {
		ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Msg(args.msg)
		return CheckedCall{}, args.msg, false
	}
	ck, ok := ru.a.Tools.(ArgumentChecker)
	if !ok {
		return CheckedCall{ToolCall: c}, "", true
	}
	cc, msg := ck.Check(c, args.obj)
	if msg != "" {
		ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Str("reason", msg).Msg("arguments refused by the tool's schema")
		return CheckedCall{}, msg, false
	}
	return cc, "", true
}

// callTools runs the admitted Toolset calls calls[i], i in idx, and sets
// their answers: with ArgumentChecker.CallChecked of checked[i] when the
// Toolset checks its calls (checked is not nil), else with Toolset.Call.
// A call starts once it holds one of the slots (Runner.Slots, else the
// run's own), in call order, on a goroutine of its own; one call alone,
// or every call with Runner.Sequential, runs on this goroutine instead
// (one at a time needs no slot of the run's own).
// Once ctx ends, the calls not started are answered AbortedAnswer without
// running.
//
// The tool events and the log lines are written from this goroutine: a
// call's tool.start as it starts, its tool.end as it ends. The events are
// flushed before this goroutine waits (for a slot or a call's end) and
// before the calls it starts begin.
func (ru *run) callTools(ctx context.Context, calls []ToolCall, checked []CheckedCall, idx []int, answers []Message) {
	if len(idx) == 0 {
		return
	}
	slots := ru.r.Slots
	inline := len(idx) == 1 || ru.r.Sequential
	if slots == nil && !inline {
		if ru.slots == nil {
			ru.slots = NewSlots(0)
		}
		slots = ru.slots
	}
	type done struct {
		i   int
		res ToolResult
		err error
		dur time.Duration
	}
	// Each call's reports (CallReport); notes carries those of the calls
	// running beside others to this goroutine.
	reports := make([]*report, len(calls))
	var notes chan Event
	if !inline {
		notes = make(chan Event, 16)
	}
	start := func(i int) {
		c := calls[i]
		ru.res.ToolCalls++
		ru.emit(Event{Type: EventToolStart, Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: c.Name, Arguments: c.Arguments})
		reports[i] = &report{ru: ru, ev: Event{Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: c.Name},
			inline: inline, notes: notes, stop: make(chan struct{})}
	}
	call := func(i int) done {
		if slots != nil {
			defer slots.Release()
		}
		t0 := ru.r.now()
		cctx := context.WithValue(context.WithValue(ctx, runKey{}, ru), callReportKey{}, CallReport(reports[i]))
		var res ToolResult
		var err error
		if checked != nil {
			res, err = ru.a.Tools.(ArgumentChecker).CallChecked(cctx, checked[i])
		} else {
			res, err = ru.a.Tools.Call(cctx, calls[i])
		}
		return done{i, res, err, ru.r.now().Sub(t0)}
	}
	end := func(d done) {
		c := calls[d.i]
		content, isErr := d.res.Content, d.res.IsError
		if d.err != nil {
			isErr = true
			if ctx.Err() != nil {
				content = abortedResult
			} else {
				content = "plugin failure: " + d.err.Error()
				ru.res.Errors = append(ru.res.Errors, fmt.Sprintf("tool %s (call %s): plugin failure: %v", c.Name, c.ID, d.err))
				// Reported once: in Result.Errors, which the front end
				// prints, and in the plugin's own log record; this one,
				// with the call id, is for debugging.
				ru.log.Debug().Err(d.err).Str("tool", c.Name).Str("call_id", c.ID).Dur("duration", d.dur).Msg("plugin failure")
			}
		}
		dropped := reports[d.i].end()
		if dropped != "" {
			ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Msg(dropped)
		}
		ru.log.Debug().Str("tool", c.Name).Str("call_id", c.ID).Bool("is_error", isErr).Dur("duration", d.dur).Msg("tool call")
		ru.emit(Event{Type: EventToolEnd, Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: c.Name,
			IsError: Bool(isErr), DurationMS: Int64(d.dur.Milliseconds()), Message: dropped})
		answers[d.i] = toolMessage(c, content, isErr)
	}

	if inline {
		for _, i := range idx {
			if slots != nil && !slots.TryAcquire() {
				ru.r.flush()
				if slots.Acquire(ctx) != nil {
					answers[i] = AbortedAnswer(calls[i]) // aborted before its turn: not run
					continue
				}
			}
			if ctx.Err() != nil {
				if slots != nil {
					slots.Release()
				}
				answers[i] = AbortedAnswer(calls[i])
				continue
			}
			start(i)
			ru.r.flush()
			end(call(i))
		}
		return
	}

	// Every goroutine sends once; the buffer spares them waiting on this
	// one, which may be waiting for a slot.
	ch := make(chan done, len(idx))
	next, running := 0, 0 // idx[next] is the next call to start
	launch := func(from int) {
		for _, i := range idx[from:next] {
			start(i)
		}
		ru.r.flush() // the calls' tool.start, before they run
		for _, i := range idx[from:next] {
			go func() { ch <- call(i) }()
		}
		running += next - from
	}
	for next < len(idx) || running > 0 {
		if next < len(idx) && ctx.Err() != nil {
			for _, i := range idx[next:] {
				answers[i] = AbortedAnswer(calls[i]) // aborted before its turn: not run
			}
			next = len(idx)
			continue
		}
		from := next
		for next < len(idx) && slots.TryAcquire() {
			next++
		}
		if next > from {
			launch(from)
			continue
		}
		// Wait for a call to end, a slot to free up or the abort.
		var free chan<- struct{}
		var abort <-chan struct{}
		if next < len(idx) {
			free, abort = slots.c, ctx.Done()
		}
		ru.r.flush() // what the calls that ended answered, before waiting on the rest
		select {
		case e := <-notes:
			ru.emit(e)
		case d := <-ch:
			running--
			// The call's reports, sent before its end, come first.
			for drained := false; !drained; {
				select {
				case e := <-notes:
					ru.emit(e)
				default:
					drained = true
				}
			}
			end(d)
		case free <- struct{}{}:
			if ctx.Err() != nil {
				slots.Release() // the abort came too: the call does not start
				continue
			}
			next++
			launch(next - 1)
		case <-abort:
		}
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}
