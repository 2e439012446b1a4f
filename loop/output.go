package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/internal/jsonscan"
)

// OutputMode is how a request asks the model for the output schema.
type OutputMode string

const (
	// OutputJSONSchema (the default, "") sends response_format
	// {"type":"json_schema"} carrying the schema.
	OutputJSONSchema OutputMode = "json_schema"
	// OutputJSONObject sends response_format {"type":"json_object"}: any
	// JSON object; the schema is in the prompt only.
	OutputJSONObject OutputMode = "json_object"
	// OutputPrompt sends no response_format: the schema is in the prompt
	// only, for servers that accept neither.
	OutputPrompt OutputMode = "prompt"
)

// Structured output: Policy.OutputSchema is the JSON Schema an agent's
// final answer must satisfy. The schema is given to the model in the
// system message; the requests that offer no tools (the final step of a
// limit, a text-only agent's step, the repair request) also carry it as
// their ResponseFormat, as Policy.OutputMode says. Steps that offer tools
// do not: several servers constrain the whole response to a
// response_format, which would rule out tool calls.
//
// The run's last answer is then checked: it must be one JSON value
// (optionally inside a ``` fence) that Agent.ValidateOutput accepts. An
// answer that is not gets one repair request, carrying the errors, as one
// more step (past the step cap if need be; not made when it would pass the
// token or cost limit); an answer still invalid ends a completed run with
// StopInvalidOutput, the text kept as Output. A run stopped by a limit
// keeps its stop reason, with the failure listed in Result.Errors. A valid
// answer is Result.OutputJSON.

// hasOutput says whether the agent has an output schema.
func (a *Agent) hasOutput() bool { return len(a.OutputSchema) > 0 }

// ResponseFormat asks a model for JSON (Request.ResponseFormat): Type is
// "json_schema" (Schema, named Name, given) or "json_object".
type ResponseFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
}

// maxOutputErrors is the most of the validation errors a repair request
// shows the model, in bytes.
const maxOutputErrors = 4 << 10

// Prompts of structured output.
const (
	outputInstruction = "Your final answer must be one JSON value, with no other text around it, that satisfies this JSON Schema:\n"
	outputSummary     = "\n\nGive this summary as the JSON value the output schema asks for."
	outputRepair      = "Your answer does not satisfy the required JSON Schema:\n%s\n\nAnswer again with only the corrected JSON value."
)

// outputSystem is the system message of an agent with an output schema:
// its prompt, then the schema.
func (a *Agent) outputSystem() string {
	if !a.hasOutput() {
		return a.System
	}
	s := outputInstruction + string(a.OutputSchema)
	if strings.TrimSpace(a.System) != "" {
		s = a.System + "\n\n" + s
	}
	return s
}

// responseFormat is what a request offering no tools carries for the
// agent's output schema; nil without one, or in OutputPrompt mode.
func (ru *run) responseFormat() *ResponseFormat {
	if !ru.a.hasOutput() {
		return nil
	}
	switch ru.a.OutputMode {
	case OutputPrompt:
		return nil
	case OutputJSONObject:
		return &ResponseFormat{Type: string(OutputJSONObject)}
	}
	return &ResponseFormat{Type: string(OutputJSONSchema), Name: ru.a.Name, Schema: ru.a.OutputSchema}
}

// checkOutput checks the output of a run that ended with reason against
// the agent's schema, repairing it once (see Output), and returns the
// run's stop reason.
func (ru *run) checkOutput(ctx context.Context, reason StopReason) StopReason {
	if !ru.a.hasOutput() || ru.a.Model == nil || !reason.EndsWithAnswer() {
		return reason
	}
	js, err := ru.parseOutput(ru.lastText)
	if err != nil && ctx.Err() == nil {
		ru.log.Warn().Err(err).Msg("output does not satisfy output_schema: repair request")
		if failed := ru.repair(ctx, err); failed != "" {
			if failed == StopAborted {
				return StopAborted
			}
			err = fmt.Errorf("%w (the repair request failed)", err)
		} else {
			js, err = ru.parseOutput(ru.lastText)
		}
	}
	if err == nil {
		ru.res.OutputJSON = js
		return reason
	}
	if ctx.Err() != nil {
		return StopAborted
	}
	ru.res.Errors = append(ru.res.Errors, "output does not satisfy output_schema: "+clipText(err.Error(), maxOutputErrors))
	if reason == StopCompleted {
		return StopInvalidOutput
	}
	return reason
}

// parseOutput decodes text as the agent's output and validates it: it
// returns the value as compact JSON.
func (ru *run) parseOutput(text string) (json.RawMessage, error) {
	s := strings.TrimSpace(text)
	if s == "" {
		return nil, fmt.Errorf("the answer is empty; a JSON value is required")
	}
	s = stripFence(s)
	v, err := jsonscan.DecodeOne(strings.NewReader(s))
	if err == jsonscan.ErrMore {
		return nil, fmt.Errorf("the answer has text after its JSON value; give one JSON value only")
	} else if err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %v", err)
	}
	if validate := ru.a.ValidateOutput; validate != nil {
		if err := validate(v); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %v", err)
	}
	return b.Bytes(), nil
}

// stripFence returns s without a Markdown code fence around it
// ("```json\n...\n```"), or s.
func stripFence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	body := s[3 : len(s)-3]
	if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[\"") {
		body = body[nl+1:] // the fence's info string ("json")
	}
	return strings.TrimSpace(body)
}

// repair makes the one repair request: a step offering no tools, opened by
// a user message with the validation errors, asking for the schema. It
// returns the stop reason of a failed request, or "".
func (ru *run) repair(ctx context.Context, invalid error) StopReason {
	req := Request{ResponseFormat: ru.responseFormat()}
	msg := Message{Role: RoleUser, Content: fmt.Sprintf(outputRepair, clipText(invalid.Error(), maxOutputErrors))}
	if ru.limited() {
		probe := req
		probe.Messages = append(ru.history[:len(ru.history):len(ru.history)], msg)
		if reason, why := ru.spendLimit(probe); reason != "" {
			ru.log.Warn().Str("reason", string(reason)).Msg("no repair request: " + why)
			return reason
		}
	}
	step := ru.res.Steps + 1
	ru.res.Steps = step
	ru.emit(Event{Type: EventStepStart, Step: step, StepsMax: ru.stepsMax, Final: Bool(true)})
	ru.append(msg)
	req.Messages = ru.history[:len(ru.history):len(ru.history)]
	resp, failed, err := ru.stream(ctx, req, true)
	if failed != "" {
		if failed != StopAborted {
			ru.res.Errors = append(ru.res.Errors, err.Error())
		}
		ru.emit(Event{Type: EventStepEnd, Step: step, StepsMax: ru.stepsMax, Final: Bool(true), Message: string(failed)})
		return failed
	}
	out, stepEnd := ru.answered(req, &resp, step, true)
	out.ToolCalls = nil
	if strings.TrimSpace(out.Content) != "" || out.Reasoning != "" {
		ru.append(out)
	}
	ru.emit(stepEnd)
	if strings.TrimSpace(out.Content) == "" {
		ru.lastText = ""
	}
	return ""
}

// clipText returns s cut to at most n bytes (on a rune boundary), marked
// when cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	return s[:i] + " …(cut)"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
