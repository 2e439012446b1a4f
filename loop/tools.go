package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// subagentSchema is the input schema of every subagent tool.
var subagentSchema = json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`)

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
			ru.answer(c, "aborted: the run was cancelled before this call ran", true)
			continue
		case refuse != "":
			ru.answer(c, refuse, true)
			continue
		case ru.a.Budget > 0 && ru.used >= ru.a.Budget:
			refuse = fmt.Sprintf("tool budget exhausted: call not executed (%d of %d tool calls used)", ru.used, ru.a.Budget)
			ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Int("budget", ru.a.Budget).Msg("tool budget exhausted: call refused")
			ru.answer(c, refuse, true)
			continue
		}
		if run, content, stop := ru.doom(ctx, c); !run {
			ru.answer(c, content, true)
			if stop {
				refuse = fmt.Sprintf("not executed: the run is stopping because the tool call %s was repeated (doom loop)", c.Name)
			}
			continue
		}
		content, isErr := ru.call(ctx, c)
		ru.answer(c, content, isErr)
	}
	if ru.a.Budget > 0 && ru.used >= ru.a.Budget && !ru.budgetEmitted {
		ru.budgetEmitted = true
		ru.log.Warn().Int("budget", ru.a.Budget).Int("used", ru.used).Msg("tool budget exhausted: next request is the final step")
		ru.emit(Event{Type: EventBudgetExhausted, Step: ru.res.Steps, StepsMax: ru.cap,
			Message: fmt.Sprintf("%d of %d tool calls used", ru.used, ru.a.Budget)})
		if ru.final == "" {
			ru.final = StopBudget
		}
	}
	return ctx.Err() == nil
}

// answer appends the tool message for call c.
func (ru *run) answer(c ToolCall, content string, isErr bool) {
	ru.append(Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: content, IsError: isErr})
}

// doom tracks consecutive identical calls. It says whether c may run and,
// when not, the error result to give it and whether the run is stopping.
func (ru *run) doom(ctx context.Context, c ToolCall) (run bool, content string, stop bool) {
	sig := c.Name + "\x00" + canonicalJSON(c.Arguments)
	if sig == ru.doomSig {
		ru.doomCount++
	} else {
		ru.doomSig, ru.doomCount = sig, 1
	}
	threshold := ru.a.DoomThreshold
	if threshold <= 0 {
		threshold = defaultDoomThreshold
	}
	if ru.doomOff || ru.doomCount < threshold {
		return true, "", false
	}

	action := ru.a.DoomAction
	if action == "" {
		action = DoomWarn
	}
	ev := Event{Type: EventDoomLoop, Step: ru.res.Steps, StepsMax: ru.cap, CallID: c.ID, Tool: c.Name, Arguments: c.Arguments}
	log := ru.log.Warn().Str("tool", c.Name).Str("call_id", c.ID).Int("count", ru.doomCount).Str("action", action)
	switch {
	case action == DoomWarn && !ru.doomWarned:
		ru.doomWarned = true
		ev.Message = fmt.Sprintf("warn: call %d in a row with the same arguments not executed", ru.doomCount)
		ru.emit(ev)
		log.Msg("doom loop: call not executed, model warned")
		return false, orDefault(ru.a.Prompts.DoomWarn, fallbackDoomWarn), false
	case action == DoomAsk && ru.r.Asker != nil:
		switch ru.r.Asker.AskDoomLoop(ctx, ru.a.Name, c, ru.doomCount) {
		case AnswerOnce:
			ev.Message = fmt.Sprintf("ask: continue once (call %d in a row)", ru.doomCount)
			ru.emit(ev)
			log.Msg("doom loop: user let the call run once")
			return true, "", false
		case AnswerAlways:
			ru.doomOff = true
			ev.Message = fmt.Sprintf("ask: continue always (call %d in a row); detection off for this run", ru.doomCount)
			ru.emit(ev)
			log.Msg("doom loop: user turned detection off")
			return true, "", false
		}
		ev.Message = fmt.Sprintf("ask: stop (call %d in a row)", ru.doomCount)
	default:
		ev.Message = fmt.Sprintf("stop: call %d in a row with the same arguments", ru.doomCount)
		if action == DoomWarn {
			ev.Message += " (second doom loop after a warning)"
		}
	}
	ru.emit(ev)
	log.Msg("doom loop: run stops, next request is the final step")
	if ru.final == "" {
		ru.final = StopDoomLoop
	}
	return false, fmt.Sprintf("not executed: this is call %d in a row to %s with the same arguments (doom loop); the run is stopping", ru.doomCount, c.Name), true
}

// canonicalJSON returns s re-marshalled with object keys sorted, or s itself
// when it is not valid JSON.
func canonicalJSON(s string) string {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return s
	}
	return string(b)
}

// call checks and executes one call, returning the tool message content.
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

	ru.used++
	ru.res.ToolCalls++
	ru.emit(Event{Type: EventToolStart, Step: ru.res.Steps, StepsMax: ru.cap, CallID: c.ID, Tool: c.Name, Arguments: c.Arguments})
	start := time.Now()
	res, err := ru.a.Tools.Call(ctx, c)
	dur := time.Since(start)
	content, isErr := res.Content, res.IsError
	if err != nil {
		isErr = true
		if ctx.Err() != nil {
			content = "aborted: the run was cancelled while this call ran"
		} else {
			content = "plugin failure: " + err.Error()
			ru.res.Errors = append(ru.res.Errors, fmt.Sprintf("tool %s (call %s): plugin failure: %v", c.Name, c.ID, err))
			ru.log.Error().Err(err).Str("tool", c.Name).Str("call_id", c.ID).Dur("duration", dur).Msg("plugin failure")
		}
	}
	ru.log.Debug().Str("tool", c.Name).Str("call_id", c.ID).Bool("is_error", isErr).Dur("duration", dur).Msg("tool call")
	ru.emit(Event{Type: EventToolEnd, Step: ru.res.Steps, StepsMax: ru.cap, CallID: c.ID, Tool: c.Name,
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

// callSubagent runs sub as a nested loop and returns its result as the tool
// message content (see the package documentation for the format).
func (ru *run) callSubagent(ctx context.Context, c ToolCall, sub *Agent) (string, bool) {
	var args struct {
		Prompt *string `json:"prompt"`
	}
	d := json.NewDecoder(bytes.NewReader([]byte(c.Arguments)))
	if err := d.Decode(&args); err != nil || args.Prompt == nil {
		why := "missing \"prompt\""
		if err != nil {
			why = err.Error()
		}
		return fmt.Sprintf(`invalid arguments for subagent %s: want {"prompt": string}: %s`, c.Name, why), true
	}
	if ru.depth+1 > ru.a.MaxDepth {
		ru.log.Warn().Str("subagent", sub.Name).Int("max_depth", ru.a.MaxDepth).Msg("subagent refused: too deep")
		return fmt.Sprintf("subagent nesting deeper than max_depth %d refused: %s was not run", ru.a.MaxDepth, sub.Name), true
	}

	ru.used++
	ru.res.ToolCalls++
	ru.emit(Event{Type: EventSubagentStart, Step: ru.res.Steps, StepsMax: ru.cap, CallID: c.ID, Tool: sub.Name, Arguments: c.Arguments})
	ru.log.Info().Str("subagent", sub.Name).Str("call_id", c.ID).Msg("subagent start")
	start := time.Now()
	child := ru.r.run(ctx, sub, Input{Prompt: *args.Prompt}, ru.depth+1)
	dur := time.Since(start)

	ru.res.Usage = ru.res.Usage.Add(child.Usage)
	for _, e := range child.Errors {
		ru.res.Errors = append(ru.res.Errors, "subagent "+sub.Name+": "+e)
	}
	isErr := child.StopReason == StopProviderError || child.StopReason == StopError || child.StopReason == StopAborted
	ru.log.Info().Str("subagent", sub.Name).Str("call_id", c.ID).Str("stop_reason", string(child.StopReason)).
		Int("steps", child.Steps).Dur("duration", dur).Msg("subagent end")
	ru.emit(Event{Type: EventSubagentEnd, Step: ru.res.Steps, StepsMax: ru.cap, CallID: c.ID, Tool: sub.Name,
		IsError: Bool(isErr), DurationMS: Int64(dur.Milliseconds()), Result: child})
	return SubagentContent(child), isErr
}

// SubagentContent formats a subagent's result as the content of the tool
// message its parent receives: the subagent's output, a blank line, then one
// line holding the JSON object {"stop_reason", "steps", "steps_max"}. With no
// output the content is that line alone.
func SubagentContent(res *Result) string {
	meta, _ := json.Marshal(struct {
		StopReason StopReason `json:"stop_reason"`
		Steps      int        `json:"steps"`
		StepsMax   int        `json:"steps_max"`
	}{res.StopReason, res.Steps, res.StepsMax})
	out := strings.TrimRight(res.Output, "\n")
	if out == "" {
		return string(meta)
	}
	return out + "\n\n" + string(meta)
}
