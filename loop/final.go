package loop

import (
	"fmt"
	"strings"
)

// FinalTools is what the request of a final step offers the model.
type FinalTools string

// Final-step tool modes; any other value, "" included, acts as
// FinalToolsOmit.
const (
	FinalToolsOmit FinalTools = "omit" // the final request carries no tools
	FinalToolsNone FinalTools = "none" // tools listed with tool_choice "none"
)

// textOnly says whether the agent is text-only (a step cap of 1): its one
// step offers no tools and gets no final prompt.
func (ru *run) textOnly() bool { return ru.stepsMax == 1 }

// finalStep says whether step is the final step and, when it is, the limit
// that made it so: a budget or doom-loop stop hit earlier, else the first
// limit of the stops table whose check says so (the token or cost limit
// the next request could pass, then the step cap).
func (ru *run) finalStep(step int) (bool, StopReason) {
	if ru.final != "" {
		return true, ru.final
	}
	for _, s := range stops {
		if s.check == nil {
			continue
		}
		if reason, why := s.check(ru, step); reason != "" {
			if why != "" {
				ru.log.Warn().Int("step", step).Str("reason", string(reason)).Msg("final step: " + why)
				ru.final = reason
			}
			return true, reason
		}
	}
	return false, ""
}

// spendCheck is the check of the token and cost limits (stops): whether
// the next step request could pass one (spendLimit).
func (ru *run) spendCheck(int) (StopReason, string) {
	if !ru.limited() {
		return "", ""
	}
	return ru.spendLimit(Request{Messages: ru.history, Tools: ru.tools})
}

// stepTools returns the tools and tool choice of a step's request, and the
// tool names step.start lists as offered. A non-final step offers every tool.
// A final step offers none: its request carries no tools, or, under
// FinalToolsNone, all of them with tool_choice "none" (never for a text-only
// agent).
func (ru *run) stepTools(final bool) (tools []ToolSpec, choice string, offered []string) {
	switch {
	case !final:
		return ru.tools, ToolChoiceAuto, ru.names
	case !ru.textOnly() && ru.a.FinalStepTools == FinalToolsNone && len(ru.tools) > 0:
		return ru.tools, ToolChoiceNone, nil
	}
	return nil, ToolChoiceAuto, nil
}

// finalPrompt is the user message that opens a final step stopped by
// reason; an agent with an output schema is asked for the summary in it.
func (ru *run) finalPrompt(reason StopReason) string {
	s := ru.limitPrompt(reason)
	if ru.a.hasOutput() {
		s += outputSummary
	}
	return s
}

// limitPrompt is the agent's prompt for a final step stopped by reason
// (the stops table); a reason without one gets the step cap's.
func (ru *run) limitPrompt(reason StopReason) string {
	pick := reason.lookup().prompt
	if pick == nil {
		pick = StopMaxSteps.lookup().prompt
	}
	return orDefault(pick(&ru.a.Prompts), pick(&defaultPrompts))
}

// finish ends the run with the response to a final step and returns the stop
// reason: its tool calls are dropped, and an empty text is replaced by a
// sentinel. A text-only agent answering without tool calls completed.
func (ru *run) finish(msg Message, step int, reason StopReason) StopReason {
	if ru.textOnly() && len(msg.ToolCalls) == 0 {
		reason = StopCompleted
	}
	dropped := msg.ToolCalls
	msg.ToolCalls = nil
	var names []string
	for _, c := range dropped {
		names = append(names, c.Name)
		why := fmt.Sprintf("final step %d of %d (%s): tools are disabled, the call was not executed", step, ru.stepsMax, reason)
		ru.log.Warn().Int("step", step).Str("tool", c.Name).Str("call_id", c.ID).Msg("tool call dropped on the final step")
		ru.emit(Event{Type: EventToolDropped, Step: step, CallID: c.ID, Tool: c.Name, Arguments: c.Arguments, Message: why})
	}
	if strings.TrimSpace(msg.Content) == "" {
		if reason == StopCompleted && msg.Reasoning == "" {
			ru.log.Warn().Int("step", step).Msg("empty response: run ends")
			return reason
		}
		if reason != StopCompleted {
			msg.Content = ru.sentinel(reason, names)
		}
	}
	ru.append(msg)
	return reason
}

// sentinel is the assistant text written by the host when the model returned
// no text on a final step; the stops table says what stopped the run.
func (ru *run) sentinel(reason StopReason, dropped []string) string {
	why := reason.lookup().sentinel
	if why == nil {
		why = StopMaxSteps.lookup().sentinel
	}
	s := "[agenthost] stopped: " + why(ru) + "; the model returned no summary."
	if len(dropped) > 0 {
		s += " Dropped tool calls: " + strings.Join(dropped, ", ") + "."
	}
	return s
}
