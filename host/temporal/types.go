package temporal

import (
	"errors"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// Names registered with Temporal. Workers and clients of different builds
// meet on these, so they never change meaning.
const (
	// WorkflowRun is one agent run; WorkflowSubagent one subagent call of a
	// run (a child workflow).
	WorkflowRun      = "agenthost.run"
	WorkflowSubagent = "agenthost.subagent"
	// ActivityDescribe returns an agent's description (AgentSpec);
	// ActivityModel sends one model request; ActivityTool runs one tool
	// call; ActivityCheck checks a call's arguments (a local activity).
	ActivityDescribe = "agenthost.describe"
	ActivityModel    = "agenthost.model"
	ActivityTool     = "agenthost.tool"
	ActivityCheck    = "agenthost.check"
	// QueryEvents returns the run's events from an index (Page).
	QueryEvents = "events"
	// QueryRequest returns a pending model request by its number
	// (ModelInput.Seq).
	QueryRequest = "request"
	// QueryWaiting returns the call waiting for a decision, if any
	// (Waiting); SignalApproval decides it (Approval).
	QueryWaiting   = "waiting"
	SignalApproval = "approval"
	// DefaultTaskQueue and DefaultNamespace are used when neither the flags
	// nor agents.hcl's temporal block name one.
	DefaultTaskQueue = "agenthost"
	DefaultNamespace = "default"
)

// Limits that keep a run's workflow history within Temporal's defaults (2
// MB per payload, 50 MB of history per workflow): see docs/scale-out.md.
const (
	// MaxRequestBytes is the largest model request (JSON) sent to an
	// activity; a larger one stops the run with error.
	MaxRequestBytes = 1536 << 10
	// MaxToolResultBytes is the most of a tool result kept in a durable
	// run; the rest is cut with a note to the model.
	MaxToolResultBytes = 256 << 10
	// MaxHistoryBytes is the history size past which the run stops with
	// error before its next activity.
	MaxHistoryBytes = 40 << 20
)

// Options tune the activities of a run; they travel in the workflow's
// input so that every worker replays the run with the same ones.
type Options struct {
	// Heartbeat is the heartbeat timeout of model requests and tool calls:
	// how soon an activity on a worker that died is given to another one.
	// 0 means the describing worker's (agenthost worker --heartbeat), else
	// DefaultHeartbeat.
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// Approve are --approve's patterns and ApproveAll is --yes: the calls
	// they allow run without waiting for a signal.
	Approve    []string `json:"approve,omitempty"`
	ApproveAll bool     `json:"approve_all,omitempty"`
}

// DefaultHeartbeat is Options.Heartbeat's default.
const DefaultHeartbeat = 20 * time.Second

func (o Options) heartbeat() time.Duration {
	if o.Heartbeat <= 0 {
		return DefaultHeartbeat
	}
	return o.Heartbeat
}

// RunInput starts a run.
type RunInput struct {
	// Agent names the agent; "" is the config's default agent.
	Agent  string `json:"agent"`
	Prompt string `json:"prompt"`
	// Session is the id of the session the caller records the run in, if
	// any; the result carries it.
	Session string `json:"session,omitempty"`
	// History, when continuing a session, holds its earlier messages
	// (loop.Input.History).
	History []loop.Message `json:"history,omitempty"`
	Options Options        `json:"options"`
}

// SubagentInput starts a subagent's child workflow.
type SubagentInput struct {
	Spec    AgentSpec       `json:"spec"`
	Prompt  string          `json:"prompt"`
	Depth   int             `json:"depth"`
	Above   []loop.Ancestor `json:"above"`
	Options Options         `json:"options"`
}

// SubagentOutput is a subagent's result and its events (message events
// left out: they are only kept for the top-level agent).
type SubagentOutput struct {
	Result *loop.Result `json:"result"`
	Events []loop.Event `json:"events"`
}

// AgentSpec is what a workflow knows of an agent: a loop.Agent without its
// model and tools, which stay on the workers, plus the timeouts of their
// activities. Its Policy travels whole (its JSON fields inline, as they
// were when AgentSpec listed them one by one, so runs in flight replay):
// a limit added to loop.Policy reaches durable runs without a change here
// (TestSpecPolicy).
type AgentSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	ModelID     string `json:"model_id"`
	loop.Policy
	Tools     []loop.ToolSpec `json:"tools,omitempty"`
	Checked   bool            `json:"checked,omitempty"` // the toolset checks arguments (loop.ArgumentChecker)
	Subagents []*AgentSpec    `json:"subagents,omitempty"`
	// ModelTimeout bounds one model request (the provider's
	// request_timeout); ToolTimeouts one call of each tool (the plugin's
	// limits.timeout). 0 means the package default.
	ModelTimeout time.Duration            `json:"model_timeout,omitempty"`
	ToolTimeouts map[string]time.Duration `json:"tool_timeouts,omitempty"`
	// Heartbeat is the describing worker's heartbeat timeout
	// (Activities.Heartbeat), used when the run's Options set none.
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
}

// Waiting answers QueryWaiting: the call of the workflow that waits for a
// decision (nil when none does), and the child workflow running a
// subagent now, whose own calls may wait ("" when none).
type Waiting struct {
	Call  *WaitingCall `json:"call,omitempty"`
	Child string       `json:"child,omitempty"`
}

// WaitingCall is a call waiting for a decision.
type WaitingCall struct {
	Kind      loop.QuestionKind `json:"kind"`
	Agent     string            `json:"agent"`
	CallID    string            `json:"call_id"`
	Tool      string            `json:"tool"`
	Arguments string            `json:"arguments"`
	Since     time.Time         `json:"since"`
}

// Approval is the payload of SignalApproval: the decision about call
// CallID, which must be the call waiting when the signal arrives (a
// signal naming no call, or another, is dropped: decide). From is who
// sent it, as the sender says ("user@host" from runs approve and deny):
// the decision's By records it, not authenticated.
type Approval struct {
	CallID  string       `json:"call_id,omitempty"`
	Verdict loop.Verdict `json:"verdict"`
	Reason  string       `json:"reason,omitempty"`
	From    string       `json:"from,omitempty"`
}

// ModelInput is one model request of agent Agent: the request itself
// when it is small, else its number, and the activity asks the workflow
// for it (QueryRequest), so that the conversation, which every request
// repeats, is not written into the history again at each step.
type ModelInput struct {
	Agent   string       `json:"agent"`
	Request loop.Request `json:"request"`
	Seq     int          `json:"seq,omitempty"`
}

// InlineRequestBytes is the largest model request (JSON) carried in its
// activity's input; larger ones are fetched by query.
const InlineRequestBytes = 64 << 10

// ModelOutput is the response, or the failure as data for the loop's retry
// policy to classify: Error for a provider error, Failure for any other.
type ModelOutput struct {
	Response loop.Response  `json:"response"`
	Error    *ProviderError `json:"error,omitempty"`
	Failure  string         `json:"failure,omitempty"`
}

// ProviderError is loop.ProviderError as data.
type ProviderError struct {
	Status     int           `json:"status,omitempty"`
	Code       string        `json:"code,omitempty"`
	Message    string        `json:"message"`
	Retryable  bool          `json:"retryable,omitempty"`
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	Err        string        `json:"err,omitempty"`
}

func providerErrorData(pe *loop.ProviderError) *ProviderError {
	d := &ProviderError{Status: pe.Status, Code: pe.Code, Message: pe.Message, Retryable: pe.Retryable, RetryAfter: pe.RetryAfter}
	if pe.Err != nil {
		d.Err = pe.Err.Error()
	}
	return d
}

func (d *ProviderError) error() *loop.ProviderError {
	pe := &loop.ProviderError{Status: d.Status, Code: d.Code, Message: d.Message, Retryable: d.Retryable, RetryAfter: d.RetryAfter}
	if d.Err != "" {
		pe.Err = errors.New(d.Err)
	}
	return pe
}

// ToolInput is one tool call of agent Agent.
type ToolInput struct {
	Agent string        `json:"agent"`
	Call  loop.ToolCall `json:"call"`
}

// ToolOutput is the call's result, or Failure when the plugin broke (the
// loop answers "plugin failure: …").
type ToolOutput struct {
	Result  loop.ToolResult `json:"result"`
	Failure string          `json:"failure,omitempty"`
}

// Page is an answer to QueryEvents: the events from the asked index on (at
// most a bounded number), the index to ask next, and whether the run has
// ended (its run.end is in the events).
type Page struct {
	Events []loop.Event `json:"events"`
	Next   int          `json:"next"`
	// Total is the number of events so far: Next < Total means ask again.
	Total int  `json:"total"`
	Done  bool `json:"done"`
	// Child is the workflow id of the subagent running now, if any: its
	// events (without message events) will follow Next once it ends, and
	// a follower may read them from it meanwhile.
	Child string `json:"child,omitempty"`
}
