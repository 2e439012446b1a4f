package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

// execute answers every call, in order, with exactly one tool message. It
// returns false when the run was aborted.
func (ru *run) execute(ctx context.Context, calls []ToolCall) bool {
	refuse := "" // when set, the remaining calls are answered with it
	for _, c := range calls {
		switch {
		case ctx.Err() != nil:
			ru.append(AbortedAnswer(c))
			continue
		case refuse != "":
			ru.answer(c, refuse, true)
			continue
		case ru.budgetSpent():
			refuse = ru.budgetRefusal(c)
			ru.answer(c, refuse, true)
			continue
		}
		if run, content, stop := ru.checkDoom(ctx, c); !run {
			ru.answer(c, content, true)
			if stop {
				refuse = doomStopping(c)
			}
			continue
		}
		content, isErr := ru.call(ctx, c)
		ru.answer(c, content, isErr)
	}
	ru.checkBudget()
	return ctx.Err() == nil
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

// call checks and executes one call, returning the tool message content and
// whether it is an error result.
func (ru *run) call(ctx context.Context, c ToolCall) (string, bool) {
	if sub := ru.subagents[c.Name]; sub != nil {
		return ru.callSubagent(ctx, c, sub)
	}
	if !ru.plugin[c.Name] {
		ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Msg("unknown tool")
		if len(ru.names) == 0 {
			return fmt.Sprintf("unknown tool %q: no tools are available", c.Name), true
		}
		return fmt.Sprintf("unknown tool %q; available tools: %s", c.Name, strings.Join(ru.names, ", ")), true
	}
	if msg := checkArguments(c); msg != "" {
		ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Msg(msg)
		return msg, true
	}
	if ck, ok := ru.a.Tools.(ArgumentChecker); ok {
		if msg := ck.Check(c); msg != "" {
			ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Str("reason", msg).Msg("arguments refused by the tool's schema")
			return msg, true
		}
	}

	ru.count()
	ru.emit(Event{Type: EventToolStart, Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: c.Name, Arguments: c.Arguments})
	start := ru.r.now()
	res, err := ru.a.Tools.Call(ctx, c)
	dur := ru.r.now().Sub(start)
	content, isErr := res.Content, res.IsError
	if err != nil {
		isErr = true
		if ctx.Err() != nil {
			content = abortedResult
		} else {
			content = "plugin failure: " + err.Error()
			ru.res.Errors = append(ru.res.Errors, fmt.Sprintf("tool %s (call %s): plugin failure: %v", c.Name, c.ID, err))
			ru.log.Error().Err(err).Str("tool", c.Name).Str("call_id", c.ID).Dur("duration", dur).Msg("plugin failure")
		}
	}
	ru.log.Debug().Str("tool", c.Name).Str("call_id", c.ID).Bool("is_error", isErr).Dur("duration", dur).Msg("tool call")
	ru.emit(Event{Type: EventToolEnd, Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: c.Name,
		IsError: Bool(isErr), DurationMS: Int64(dur.Milliseconds())})
	return content, isErr
}

// checkArguments returns the error result for arguments that are not a JSON
// object, or "".
func checkArguments(c ToolCall) string {
	var v any
	if err := json.Unmarshal([]byte(c.Arguments), &v); err != nil {
		return fmt.Sprintf("invalid arguments for tool %s: not valid JSON: %v", c.Name, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Sprintf("invalid arguments for tool %s: want a JSON object, got %s", c.Name, jsonKind(v))
	}
	return ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}
