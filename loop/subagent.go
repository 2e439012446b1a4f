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

// offerSubagents registers one tool per subagent, after the plugin tools. A
// subagent whose name is taken by a plugin tool is not offered.
func (ru *run) offerSubagents() {
	for _, s := range ru.a.Subagents {
		if s == nil || ru.plugin[s.Name] {
			continue
		}
		ru.tools = append(ru.tools, ToolSpec{Name: s.Name, Description: s.Description, InputSchema: subagentSchema})
		ru.names = append(ru.names, s.Name)
		ru.subagents[s.Name] = s
	}
}

// admitSubagent checks a call of subagent sub: its arguments and the
// nesting depth.
func (ru *run) admitSubagent(c ToolCall, sub *Agent) (string, bool) {
	if _, err := subagentPrompt(c); err != "" {
		return fmt.Sprintf(`invalid arguments for subagent %s: want {"prompt": string}: %s`, c.Name, err), false
	}
	if ru.depth+1 > ru.a.MaxDepth {
		ru.log.Warn().Str("subagent", sub.Name).Int("max_depth", ru.a.MaxDepth).Msg("subagent refused: too deep")
		return fmt.Sprintf("subagent nesting deeper than max_depth %d refused: %s was not run", ru.a.MaxDepth, sub.Name), false
	}
	return "", true
}

// subagentPrompt is the prompt of a subagent call, or why there is none.
func subagentPrompt(c ToolCall) (string, string) {
	var args struct {
		Prompt *string `json:"prompt"`
	}
	d := json.NewDecoder(bytes.NewReader([]byte(c.Arguments)))
	if err := d.Decode(&args); err != nil {
		return "", err.Error()
	}
	if args.Prompt == nil {
		return "", "missing \"prompt\""
	}
	return *args.Prompt, ""
}

// callSubagent runs sub, for the admitted call c, as a nested loop and
// returns its result as the tool message content (see the package
// documentation for the format).
func (ru *run) callSubagent(ctx context.Context, c ToolCall, sub *Agent) (string, bool) {
	prompt, _ := subagentPrompt(c)
	ru.res.ToolCalls++
	ru.emit(Event{Type: EventSubagentStart, Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: sub.Name, Arguments: c.Arguments})
	ru.log.Info().Str("subagent", sub.Name).Str("call_id", c.ID).Msg("subagent start")
	start := time.Now()
	child := ru.r.run(ctx, sub, Input{Prompt: prompt}, ru.depth+1, ru)
	dur := time.Since(start)

	// The child's usage and cost were charged to this run as they happened
	// (run.account).
	for _, e := range child.Errors {
		ru.res.Errors = append(ru.res.Errors, "subagent "+sub.Name+": "+e)
	}
	isErr := child.StopReason == StopProviderError || child.StopReason == StopError || child.StopReason == StopAborted
	ru.log.Info().Str("subagent", sub.Name).Str("call_id", c.ID).Str("stop_reason", string(child.StopReason)).
		Int("steps", child.Steps).Dur("duration", dur).Msg("subagent end")
	ru.emit(Event{Type: EventSubagentEnd, Step: ru.res.Steps, StepsMax: ru.stepsMax, CallID: c.ID, Tool: sub.Name,
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
