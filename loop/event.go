package loop

import (
	"encoding/json"
	"time"
)

// Event types. The JSON form of Event, its wire form (wire.go), is what
// `agenthost run --events` prints, one line per event, and what a session
// stores.
const (
	EventRunStart    = "run.start"
	EventStepStart   = "step.start"
	EventStepEnd     = "step.end"
	EventToolStart   = "tool.start"
	EventToolEnd     = "tool.end"
	EventToolDropped = "tool.dropped"
	// EventToolProgress and EventToolLog: a running call's progress
	// (progress, total when known, message) and log messages (level,
	// logger, data), as its Toolset reported them (CallReport).
	EventToolProgress    = "tool.progress"
	EventToolLog         = "tool.log"
	EventRetry           = "retry"
	EventDoomLoop        = "doom_loop"
	EventBudgetExhausted = "budget.exhausted"
	EventCompaction      = "compaction"
	EventSubagentStart   = "subagent.start"
	EventSubagentEnd     = "subagent.end"
	EventRunEnd          = "run.end"
	// EventApprovalRequest: a call waits for Runner.Approver (call_id,
	// tool, arguments; message says why). EventApprovalDecision: its
	// answer (decision allow, always or deny; by who; message the reason).
	EventApprovalRequest  = "approval.request"
	EventApprovalDecision = "approval.decision"
	// EventApprovalDropped: a durable run's approval signal that decided
	// nothing (it named no call or another call, or arrived while no call
	// waited), emitted by the workflow, not the loop: call_id, decision
	// and by as the signal said, message why.
	EventApprovalDropped = "approval.dropped"
	// EventMessage carries one message appended to an agent's history. It is
	// persisted in sessions; the CLI does not print it with --events.
	EventMessage = "message"
)

// Event is one thing that happened in a run. Fields not relevant to a type
// are left zero and omitted from JSON (wire.go lists the exceptions).
type Event struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Agent is the name of the agent the event belongs to; Depth is 0 for the
	// top-level agent, 1 for its subagents, and so on.
	Agent string `json:"agent"`
	Depth int    `json:"depth"`

	// step.start, step.end and others that happen within a step.
	Step     int      `json:"step,omitempty"`
	StepsMax int      `json:"steps_max,omitempty"`
	Final    *bool    `json:"final,omitempty"`
	Offered  []string `json:"tools_offered,omitempty"`

	// tool.start, tool.end, tool.dropped, subagent.start, subagent.end,
	// doom_loop: the call; its outcome on tool.end and subagent.end.
	CallID     string `json:"call_id,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Arguments  string `json:"arguments,omitempty"`
	IsError    *bool  `json:"is_error,omitempty"`
	DurationMS *int64 `json:"duration_ms,omitempty"`

	// retry.
	Attempt int    `json:"attempt,omitempty"`
	DelayMS *int64 `json:"delay_ms,omitempty"`
	Status  int    `json:"status,omitempty"`

	// step.end; Usage also on compaction (the summary request).
	FinishReason string `json:"finish_reason,omitempty"`
	Usage        *Usage `json:"usage,omitempty"`
	// step.end: the request's cost in USD (null without a price), and
	// the run's usage and cost so far (RunCost null while the run's cost
	// is unknown).
	Cost     *float64 `json:"cost,omitempty"`
	RunUsage *Usage   `json:"run_usage,omitempty"`
	RunCost  *float64 `json:"run_cost,omitempty"`

	// compaction: how many older messages the summary replaced, and how
	// many recent messages (after the system message) were kept verbatim.
	// The history after compaction is [system] + summary (Msg) + the last
	// Kept messages: ApplyCompaction, which session.History uses too.
	Replaced int `json:"replaced,omitempty"`
	Kept     int `json:"kept,omitempty"`

	// approval.decision: the verdict (allow, always, deny) and who gave it
	// (the By* constants).
	Decision string `json:"decision,omitempty"`
	By       string `json:"by,omitempty"`

	// tool.progress: how far the call is (Progress), out of Total when
	// the tool knows it. tool.log: the MCP level (debug … emergency), the
	// logger and the data, JSON of at most MaxReportData bytes.
	Progress *float64        `json:"progress,omitempty"`
	Total    *float64        `json:"total,omitempty"`
	Level    string          `json:"level,omitempty"`
	Logger   string          `json:"logger,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`

	// Free text: why a call was dropped (tool.dropped), the failed request's
	// error (retry), the verdict (doom_loop), the calls used
	// (budget.exhausted), what was replaced (compaction), the stop reason
	// of a step whose request failed (step.end), why a call waits
	// (approval.request) or the reason of a decision (approval.decision).
	Message string `json:"message,omitempty"`

	// run.end and subagent.end: the result (on the wire its fields are at
	// the top level, like --json).
	Result *Result `json:"result,omitempty"`

	// message: the appended message.
	Msg *Message `json:"msg,omitempty"`
}

// Sink receives events in order, one at a time. Emit must not block for
// long: it runs on the loop's goroutine, or, for the tool.progress and
// tool.log of a call the loop waits for alone, on the call's while the
// loop's goroutine waits.
type Sink interface {
	Emit(Event)
}

// Flusher is a Sink that may hold events back until the loop waits: the
// loop calls Flush before each model request, each tool call and each
// retry's sleep, so a sink that writes events to disk in batches (the
// session) has written every event before the loop waits on anything.
type Flusher interface {
	Flush()
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

func (f SinkFunc) Emit(e Event) { f(e) }

// Bool and Int64 make the pointers used by optional event fields.
func Bool(b bool) *bool    { return &b }
func Int64(n int64) *int64 { return &n }
