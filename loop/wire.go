package loop

import (
	"encoding/json"
	"time"
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
// UnmarshalJSON also reads the form sessions were written in before the
// wire form was the same for both: the Event's fields as tagged, with the
// result nested under "result".

// eventFields is Event without its JSON methods: its fields, as tagged.
type eventFields Event

// MarshalJSON writes the wire form of e.
func (e Event) MarshalJSON() ([]byte, error) {
	switch {
	case e.Type == EventStepStart:
		offered := e.Offered
		if offered == nil {
			offered = []string{}
		}
		return json.Marshal(struct {
			eventFields
			Offered []string `json:"tools_offered"`
		}{eventFields(e), offered})
	case e.Type == EventStepEnd:
		return json.Marshal(struct {
			eventFields
			Cost    *float64 `json:"cost"`
			RunCost *float64 `json:"run_cost"`
		}{eventFields(e), e.Cost, e.RunCost})
	case e.Type == EventRetry:
		return json.Marshal(retryWire{e.Type, e.Time, e.Agent, e.Depth, e.Step, e.StepsMax, e.Attempt, e.DelayMS, e.Status, e.Message})
	case e.Result != nil:
		res := *e.Result
		if res.Errors == nil {
			res.Errors = []string{}
		}
		return json.Marshal(resultWire{e.Type, e.Time, e.Agent, e.Depth, e.Step, e.CallID, e.Tool, e.IsError, e.DurationMS, res})
	}
	return json.Marshal(eventFields(e))
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
