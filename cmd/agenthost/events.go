package main

import (
	"encoding/json"
	"io"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// The JSON output of run: --events (one line per event) and --json (one
// object at the end).

// eventJSON flattens an event for --events: run.end and subagent.end carry
// the result's fields at the top level, like --json, after the common ones.
//
// The fields DESIGN §6 names for an event type are always present, even when
// zero: step.start's tools_offered is [] on a final step, and retry's status
// is 0 for a network error.
func eventJSON(ev loop.Event) any {
	switch ev.Type {
	case loop.EventStepStart:
		offered := ev.Offered
		if offered == nil {
			offered = []string{}
		}
		return struct {
			loop.Event
			Offered []string `json:"tools_offered"`
		}{ev, offered}
	case loop.EventRetry:
		return struct {
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
		}{ev.Type, ev.Time, ev.Agent, ev.Depth, ev.Step, ev.StepsMax, ev.Attempt, ev.DelayMS, ev.Status, ev.Message}
	}
	if ev.Result == nil {
		return ev
	}
	res := *ev.Result
	if res.Errors == nil {
		res.Errors = []string{}
	}
	return struct {
		Type  string    `json:"type"`
		Time  time.Time `json:"time"`
		Agent string    `json:"agent"`
		Depth int       `json:"depth"`
		loop.Result
	}{ev.Type, ev.Time, ev.Agent, ev.Depth, res}
}

// writeEvent writes one --events line.
func writeEvent(w io.Writer, ev loop.Event) {
	b, err := json.Marshal(eventJSON(ev))
	if err != nil {
		return
	}
	w.Write(append(b, '\n'))
}

// writeResult writes the --json object: the result, indented, with errors
// [] when there are none.
func writeResult(w io.Writer, res *loop.Result) {
	r := *res
	if r.Errors == nil {
		r.Errors = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(r)
}
