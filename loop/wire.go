package loop

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/agenthost/agenthost/internal/jsonenc"
)

// The wire form of events is defined here, once: it is what `agenthost run
// --events` prints, one JSON object per line (message events left out), and
// what a session stores in events.jsonl (message events included).
// Event.MarshalJSON writes it and Event.UnmarshalJSON reads it back.
//
// Every event starts with type, time, agent and depth, then the fields its
// type uses (the JSON tags of Event), omitted when zero, except that:
//   - step.start always has tools_offered ([] on a final step);
//   - step.end always has cost and run_cost (null without prices);
//   - retry always has attempt, delay_ms and status (0 for a network error);
//   - run.end and subagent.end carry the fields of their Result at the top
//     level, like --json (errors [] when none); subagent.end also carries
//     the parent's step and the call's call_id, tool, is_error and
//     duration_ms (steps and steps_max are the subagent's, from its Result).
//
// UnmarshalJSON also reads the form of sessions written by older versions:
// the Event's fields as tagged, with the result nested under "result".

// eventFields is Event without its JSON methods: its fields, as tagged.
type eventFields Event

// MarshalJSON writes the wire form of e.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(make([]byte, 0, 256))
}

// AppendJSON appends the wire form of e to b, the bytes MarshalJSON
// returns: callers that write many events reuse one buffer.
//
// The wire form is written by hand: encoding/json's reflection (struct
// encoders, time.Time.MarshalJSON, a map of the fields per type) would be
// paid for every event of every step. marshalReflect, the reflection
// encoder, is the reference: the tests compare
// the two on every event the loop's tests emit and on fuzzed events, and
// the rare event the hand encoder cannot write as encoding/json would (a
// time or a cost JSON cannot hold, a tool call's provider data) goes
// through it.
func (e *Event) AppendJSON(b []byte) ([]byte, error) {
	n0 := len(b)
	b, ok := e.appendWire(b)
	if ok {
		return b, nil
	}
	w, err := e.marshalReflect()
	if err != nil {
		return b[:n0], err
	}
	return append(b[:n0], w...), nil
}

// marshalReflect writes the wire form of e with encoding/json.
func (e *Event) marshalReflect() ([]byte, error) {
	switch {
	case e.Type == EventStepStart:
		offered := e.Offered
		if offered == nil {
			offered = []string{}
		}
		return json.Marshal(struct {
			eventFields
			Offered []string `json:"tools_offered"`
		}{eventFields(*e), offered})
	case e.Type == EventStepEnd:
		return json.Marshal(struct {
			eventFields
			Cost    *float64 `json:"cost"`
			RunCost *float64 `json:"run_cost"`
		}{eventFields(*e), e.Cost, e.RunCost})
	case e.Type == EventRetry:
		return json.Marshal(retryWire{e.Type, e.Time, e.Agent, e.Depth, e.Step, e.StepsMax, e.Attempt, e.DelayMS, e.Status, e.Message})
	case e.Result != nil:
		res := *e.Result
		if res.Errors == nil {
			res.Errors = []string{}
		}
		return json.Marshal(resultWire{e.Type, e.Time, e.Agent, e.Depth, e.Step, e.CallID, e.Tool, e.IsError, e.DurationMS, res})
	}
	return json.Marshal(eventFields(*e))
}

// appendWire appends the wire form of e as marshalReflect writes it, field
// for field in the order encoding/json uses (a field of the outer struct
// after those of the embedded eventFields). It reports false, with b
// holding a partial event, when the event needs marshalReflect.
func (e *Event) appendWire(b []byte) ([]byte, bool) {
	b = append(b, `{"type":`...)
	b = jsonenc.AppendString(b, e.Type)
	b = append(b, `,"time":`...)
	b, ok := jsonenc.AppendTime(b, e.Time)
	if !ok {
		return b, false
	}
	b = append(b, `,"agent":`...)
	b = jsonenc.AppendString(b, e.Agent)
	b = append(b, `,"depth":`...)
	b = strconv.AppendInt(b, int64(e.Depth), 10)
	switch {
	case e.Type == EventStepStart:
		if b, ok = e.appendFields(b, skipOffered); !ok {
			return b, false
		}
		b = append(b, `,"tools_offered":`...)
		b = appendStrings(b, e.Offered)
		return append(b, '}'), true
	case e.Type == EventStepEnd:
		if b, ok = e.appendFields(b, skipCosts); !ok {
			return b, false
		}
		if b, ok = appendCost(b, `,"cost":`, e.Cost); !ok {
			return b, false
		}
		if b, ok = appendCost(b, `,"run_cost":`, e.RunCost); !ok {
			return b, false
		}
		return append(b, '}'), true
	case e.Type == EventRetry:
		b = appendInt(b, `,"step":`, e.Step)
		b = appendInt(b, `,"steps_max":`, e.StepsMax)
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(e.Attempt), 10)
		b = append(b, `,"delay_ms":`...)
		b = appendIntOrNull(b, e.DelayMS)
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(e.Status), 10)
		b = appendStr(b, `,"message":`, e.Message)
		return append(b, '}'), true
	case e.Result != nil:
		b = appendInt(b, `,"step":`, e.Step)
		b = appendStr(b, `,"call_id":`, e.CallID)
		b = appendStr(b, `,"tool":`, e.Tool)
		b = appendBool(b, `,"is_error":`, e.IsError)
		b = appendInt64(b, `,"duration_ms":`, e.DurationMS)
		if b, ok = appendResult(b, e.Result, false); !ok {
			return b, false
		}
		return append(b, '}'), true
	}
	if b, ok = e.appendFields(b, 0); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// What appendFields leaves out: fields the wire form writes after the
// others, and always.
const (
	skipOffered = 1 << iota
	skipCosts
)

// appendFields appends the fields of eventFields after depth, each omitted
// when zero, but for those skip names.
func (e *Event) appendFields(b []byte, skip int) ([]byte, bool) {
	var ok bool
	b = appendInt(b, `,"step":`, e.Step)
	b = appendInt(b, `,"steps_max":`, e.StepsMax)
	b = appendBool(b, `,"final":`, e.Final)
	if skip&skipOffered == 0 && len(e.Offered) > 0 {
		b = append(b, `,"tools_offered":`...)
		b = appendStrings(b, e.Offered)
	}
	b = appendStr(b, `,"call_id":`, e.CallID)
	b = appendStr(b, `,"tool":`, e.Tool)
	b = appendStr(b, `,"arguments":`, e.Arguments)
	b = appendBool(b, `,"is_error":`, e.IsError)
	b = appendInt64(b, `,"duration_ms":`, e.DurationMS)
	b = appendInt(b, `,"attempt":`, e.Attempt)
	b = appendInt64(b, `,"delay_ms":`, e.DelayMS)
	b = appendInt(b, `,"status":`, e.Status)
	b = appendStr(b, `,"finish_reason":`, e.FinishReason)
	b = appendOptUsage(b, `,"usage":`, e.Usage)
	if skip&skipCosts == 0 {
		if b, ok = appendOptFloat(b, `,"cost":`, e.Cost); !ok {
			return b, false
		}
	}
	b = appendOptUsage(b, `,"run_usage":`, e.RunUsage)
	if skip&skipCosts == 0 {
		if b, ok = appendOptFloat(b, `,"run_cost":`, e.RunCost); !ok {
			return b, false
		}
	}
	b = appendInt(b, `,"replaced":`, e.Replaced)
	b = appendInt(b, `,"kept":`, e.Kept)
	b = appendStr(b, `,"decision":`, e.Decision)
	b = appendStr(b, `,"by":`, e.By)
	if b, ok = appendOptFloat(b, `,"progress":`, e.Progress); !ok {
		return b, false
	}
	if b, ok = appendOptFloat(b, `,"total":`, e.Total); !ok {
		return b, false
	}
	b = appendStr(b, `,"level":`, e.Level)
	b = appendStr(b, `,"logger":`, e.Logger)
	if len(e.Data) > 0 {
		// encoding/json compacts and escapes raw JSON: an event with data
		// goes through marshalReflect.
		return b, false
	}
	b = appendStr(b, `,"message":`, e.Message)
	if e.Result != nil {
		b = append(b, `,"result":{`...)
		if b, ok = appendResult(b, e.Result, true); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if e.Msg != nil {
		b = append(b, `,"msg":`...)
		if b, ok = appendMessage(b, e.Msg); !ok {
			return b, false
		}
	}
	return b, true
}

// appendResult appends the fields of r as Result's tags say, either
// nested (the fields of its own object, whose braces the caller writes;
// errors null when nil) or at the top level of a resultWire (each after a
// comma, agent left out, errors [] when nil).
func appendResult(b []byte, r *Result, nested bool) ([]byte, bool) {
	var ok bool
	sep := `,"`
	if nested {
		sep = `"`
	}
	if r.Session != "" {
		b = append(b, sep...)
		b = append(b, `session":`...)
		b = jsonenc.AppendString(b, r.Session)
		sep = `,"`
	}
	if nested {
		b = append(b, sep...)
		b = append(b, `agent":`...)
		b = jsonenc.AppendString(b, r.Agent)
		sep = `,"`
	}
	b = append(b, sep...)
	b = append(b, `stop_reason":`...)
	b = jsonenc.AppendString(b, string(r.StopReason))
	b = append(b, `,"steps":`...)
	b = strconv.AppendInt(b, int64(r.Steps), 10)
	b = append(b, `,"steps_max":`...)
	b = strconv.AppendInt(b, int64(r.StepsMax), 10)
	b = append(b, `,"tool_calls":`...)
	b = strconv.AppendInt(b, int64(r.ToolCalls), 10)
	b = append(b, `,"budget":`...)
	b = appendIntOrNull(b, r.Budget)
	b = append(b, `,"output":`...)
	b = jsonenc.AppendString(b, r.Output)
	if len(r.OutputJSON) > 0 {
		// encoding/json compacts and escapes raw JSON: the one result of
		// a run that has it goes through marshalReflect.
		return b, false
	}
	b = append(b, `,"usage":`...)
	b = appendUsage(b, &r.Usage)
	if b, ok = appendCost(b, `,"cost":`, r.Cost); !ok {
		return b, false
	}
	b = append(b, `,"errors":`...)
	if r.Errors == nil && nested {
		return append(b, "null"...), true
	}
	return appendStrings(b, r.Errors), true
}

// appendOptUsage appends key and u, nothing for nil (omitempty).
func appendOptUsage(b []byte, key string, u *Usage) []byte {
	if u == nil {
		return b
	}
	return appendUsage(append(b, key...), u)
}

func appendUsage(b []byte, u *Usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.PromptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.CompletionTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.TotalTokens), 10)
	b = appendInt(b, `,"cached_tokens":`, u.CachedTokens)
	if u.Estimated {
		b = append(b, `,"estimated":true`...)
	}
	return append(b, '}')
}

// appendMessage appends m as a JSON object. A tool call's provider data
// (Extra), raw JSON that encoding/json checks and compacts, goes through
// encoding/json.
func appendMessage(b []byte, m *Message) ([]byte, bool) {
	b = append(b, `{"role":`...)
	b = jsonenc.AppendString(b, string(m.Role))
	b = appendStr(b, `,"content":`, m.Content)
	b = appendStr(b, `,"reasoning":`, m.Reasoning)
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i := range m.ToolCalls {
			c := &m.ToolCalls[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = jsonenc.AppendString(b, c.ID)
			b = append(b, `,"name":`...)
			b = jsonenc.AppendString(b, c.Name)
			b = append(b, `,"arguments":`...)
			b = jsonenc.AppendString(b, c.Arguments)
			if len(c.Extra) > 0 {
				x, err := json.Marshal(c.Extra)
				if err != nil {
					return b, false
				}
				b = append(b, `,"extra":`...)
				b = append(b, x...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendStr(b, `,"tool_call_id":`, m.ToolCallID)
	b = appendStr(b, `,"name":`, m.Name)
	if m.IsError {
		b = append(b, `,"is_error":true`...)
	}
	return append(b, '}'), true
}

// appendStrings appends ss as a JSON array ([] when nil).
func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, s)
	}
	return append(b, ']')
}

// The helpers below append `,"key":value` given the key with its comma
// and colon; appendStr, appendInt, appendInt64 and appendBool leave out a
// zero value, as omitempty does.

func appendStr(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, key...)
	return jsonenc.AppendString(b, s)
}

func appendInt(b []byte, key string, n int) []byte {
	if n == 0 {
		return b
	}
	b = append(b, key...)
	return strconv.AppendInt(b, int64(n), 10)
}

func appendInt64(b []byte, key string, n *int64) []byte {
	if n == nil {
		return b
	}
	b = append(b, key...)
	return strconv.AppendInt(b, *n, 10)
}

// appendIntOrNull appends *n, or null for nil.
func appendIntOrNull[T ~int | ~int64](b []byte, n *T) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*n), 10)
}

func appendBool(b []byte, key string, v *bool) []byte {
	if v == nil {
		return b
	}
	b = append(b, key...)
	return strconv.AppendBool(b, *v)
}

// appendOptFloat is appendCost that appends nothing for nil (omitempty).
func appendOptFloat(b []byte, key string, f *float64) ([]byte, bool) {
	if f == nil {
		return b, true
	}
	return appendCost(b, key, f)
}

// appendCost appends a cost, null for nil (callers that omit a nil cost
// do not call it), and reports false for one JSON cannot hold.
func appendCost(b []byte, key string, f *float64) ([]byte, bool) {
	b = append(b, key...)
	if f == nil {
		return append(b, "null"...), true
	}
	return jsonenc.AppendFloat(b, *f)
}

// retryWire is the wire form of a retry event.
type retryWire struct {
	Type     string    `json:"type"`
	Time     time.Time `json:"time"`
	Agent    string    `json:"agent"`
	Depth    int       `json:"depth"`
	Step     int       `json:"step,omitempty"`
	StepsMax int       `json:"steps_max,omitempty"`
	Attempt  int       `json:"attempt"`
	DelayMS  *int64    `json:"delay_ms"`
	Status   int       `json:"status"`
	Message  string    `json:"message,omitempty"`
}

// resultWire is the wire form of an event with a result: the result's
// fields follow the common ones (Result.Agent is hidden by the event's
// agent, the shallower field). The call fields are set on subagent.end
// only.
type resultWire struct {
	Type       string    `json:"type"`
	Time       time.Time `json:"time"`
	Agent      string    `json:"agent"`
	Depth      int       `json:"depth"`
	Step       int       `json:"step,omitempty"`
	CallID     string    `json:"call_id,omitempty"`
	Tool       string    `json:"tool,omitempty"`
	IsError    *bool     `json:"is_error,omitempty"`
	DurationMS *int64    `json:"duration_ms,omitempty"`
	Result
}

// UnmarshalJSON reads an event in the wire form, or in the older session
// form (see above). A run.end read from the wire form has only Type, Time,
// Agent, Depth and Result set, a subagent.end also its call fields; the
// Result of a subagent.end has no Agent (the wire does not carry it).
func (e *Event) UnmarshalJSON(b []byte) error {
	var f eventFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	if (f.Type == EventRunEnd || f.Type == EventSubagentEnd) && f.Result == nil {
		var res Result
		if err := json.Unmarshal(b, &res); err != nil {
			return err
		}
		if res.StopReason != "" { // the wire form: the result at the top level
			if f.Type == EventSubagentEnd {
				res.Agent = "" // the agent on the wire is the parent
			}
			*e = Event{Type: f.Type, Time: f.Time, Agent: f.Agent, Depth: f.Depth, Step: f.Step,
				CallID: f.CallID, Tool: f.Tool, IsError: f.IsError, DurationMS: f.DurationMS, Result: &res}
			return nil
		}
	}
	*e = Event(f)
	return nil
}
