package loop

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/prompts"
)

// Prompts are the texts the loop injects into a run (see prompts.Set). A
// blank one is replaced by its default from package prompts.
type Prompts = prompts.Set

// defaultPrompts fill the blank fields of Agent.Prompts.
var defaultPrompts = prompts.Default()

// Agent is an immutable description of one agent, built by the host. Values
// are shared between concurrent runs and must not be mutated.
//
// It is the agent's behaviour (its model, tools, subagents and output
// validator, which live in the process that runs them) around its Policy,
// which is plain data: a durable run ships the Policy to its workflow whole
// (package host/temporal), so a field added there reaches every runtime.
type Agent struct {
	Name        string
	Description string
	// ModelID is the provider-side model id (a model block's name
	// attribute), for logs and errors.
	ModelID string
	Model   Model
	// Tools are the agent's plugin tools (may be nil: no tools).
	Tools Toolset
	// Subagents are offered as tools named by their Name, taking {"prompt": string}.
	Subagents []*Agent
	// ValidateOutput checks the final answer, decoded (numbers as
	// json.Number), against Policy.OutputSchema and returns nil or the
	// errors, to show the model (output.go). The host compiles it from
	// the schema; nil accepts any one JSON value.
	ValidateOutput func(v any) error
	Policy
}

// Policy is what an agent's runs are allowed and told: its prompt, its
// limits, its approval rules and its output schema. It is plain data, every
// field JSON-tagged (TestPolicyJSON fails on a field that does not survive
// the round trip), so that a runtime that rebuilds the agent elsewhere (a
// Temporal workflow) receives it whole. A new limit is a field here, a
// row of the stops table (stops.go) and its check.
type Policy struct {
	// ContextWindow is the model's context size in tokens; 0 disables compaction.
	ContextWindow int    `json:"context_window,omitempty"`
	System        string `json:"system,omitempty"`
	// StepsMax is the step cap, already clamped to host.max_steps; 0 (or
	// less) means defaults.MaxSteps, as a config without steps. 1 makes a
	// text-only agent. Results and events report the cap as StepsMax too.
	StepsMax int `json:"steps_max"`
	// Budget is the tool-call budget; 0 means unlimited.
	Budget int `json:"budget,omitempty"`
	// Tokens is the limit on the run's tokens (prompt + completion of every
	// request, subagents' included); 0 means unlimited.
	Tokens int `json:"tokens,omitempty"`
	// Cost is the limit on the run's cost in USD, subagents' included; 0
	// means unlimited. It needs Price on this agent and its subagents.
	Cost float64 `json:"cost,omitempty"`
	// Price is the price of the agent's model; nil when unknown (the run's
	// cost is then unknown too).
	Price *Price `json:"price,omitempty"`
	// DoomThreshold is the number of identical consecutive calls that make a
	// doom loop; 0 means defaults.DoomThreshold.
	DoomThreshold int `json:"doom_threshold,omitempty"`
	// DoomAction is DoomWarn, DoomStop or DoomAsk; "" means
	// defaults.DoomAction.
	DoomAction DoomAction `json:"doom_action,omitempty"`
	// FinalStepTools is FinalToolsOmit ("" acts as it) or FinalToolsNone.
	FinalStepTools FinalTools  `json:"final_step_tools,omitempty"`
	Retry          RetryPolicy `json:"retry"`
	Prompts        Prompts     `json:"prompts"`
	// MaxDepth is the subagent nesting limit (host.max_depth); the top-level
	// run is depth 0. 0 means defaults.MaxDepth, as a config without
	// max_depth; NoSubagents (any negative value) allows none, which is
	// what max_depth = 0 in agents.hcl becomes.
	MaxDepth int `json:"max_depth"`
	// MaxCallsPerStep is the number of tool calls taken from one response
	// (host.max_calls_per_step); the calls past it get an error result
	// without running. 0 means defaults.MaxCallsPerStep.
	MaxCallsPerStep int `json:"max_calls_per_step,omitempty"`
	// Approve lists the tools whose calls wait for Runner.Approver's
	// decision before they run: names or path.Match patterns ("gh__*").
	// Subagent tools count too.
	Approve []string `json:"approve,omitempty"`
	// OutputSchema, when set, is the JSON Schema the run's final answer
	// must satisfy (output.go), as given to the model; Agent.ValidateOutput
	// checks it. OutputMode is how requests ask for it; "" is
	// OutputJSONSchema.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	OutputMode   OutputMode      `json:"output_mode,omitempty"`
}

// NoSubagents is the Agent.MaxDepth that allows no subagent call.
const NoSubagents = -1

// stepsMax is a's step cap: StepsMax, or the default for 0.
func (a *Agent) stepsMax() int {
	if a.StepsMax <= 0 {
		return defaults.MaxSteps
	}
	return a.StepsMax
}

// maxDepth is a's subagent nesting limit: MaxDepth, the default for 0, or
// 0 for NoSubagents.
func (a *Agent) maxDepth() int {
	switch {
	case a.MaxDepth == 0:
		return defaults.MaxDepth
	case a.MaxDepth < 0:
		return 0
	}
	return a.MaxDepth
}

// Input starts a run.
type Input struct {
	// Prompt is the user's task.
	Prompt string
	// History, when continuing a session, holds earlier messages (without
	// the system message, which the loop adds from the agent).
	History []Message
	// Session is the id of the session the run is recorded in, if any. The
	// run's Result carries it (run.end included); subagents' results do not.
	Session string
}

// Result is the outcome of a run. Its JSON form is the --json contract.
type Result struct {
	// Session is Input.Session.
	Session    string     `json:"session,omitempty"`
	Agent      string     `json:"agent"`
	StopReason StopReason `json:"stop_reason"`
	// Steps is the number of steps run; StepsMax is the step cap
	// (Agent.StepsMax, at least 1).
	Steps    int `json:"steps"`
	StepsMax int `json:"steps_max"`
	// ToolCalls counts executed tool calls (subagent calls count one).
	ToolCalls int `json:"tool_calls"`
	// Budget is the tool-call budget; nil when unlimited.
	Budget *int   `json:"budget"`
	Output string `json:"output"`
	// OutputJSON is Output parsed, when the agent has an Output schema and
	// the output satisfies it (compact JSON); nil otherwise.
	OutputJSON json.RawMessage `json:"output_json,omitempty"`
	Usage      Usage           `json:"usage"`
	// Cost is the run's cost in USD, subagents included; nil when a request
	// of the run was made by an agent without a price.
	Cost   *float64 `json:"cost"`
	Errors []string `json:"errors"`
	// Err is the error of the model request that stopped the run
	// (provider_error or error), for a front end to explain it: a
	// *ProviderError says why (its status, its cause). It is not part of
	// the JSON form, where Errors holds its text, and nil otherwise.
	Err error `json:"-"`
	// Messages is the history as the next request would see it: the system
	// message (when Agent.System is set), Input.History, then this run's
	// messages, with older ones replaced by a summary if compaction ran.
	Messages []Message `json:"-"`
}

// Runner runs agents. The zero value is usable: no events, real sleeping,
// doom-loop "ask" acting as "stop" and calls that need approval denied.
//
// Its function fields and Sequential are the loop's only contact with time,
// randomness and concurrency, so the same rules can run in another
// runtime: a durable workflow (package host/temporal) sets Now, Sleep,
// Jitter and Subagent to deterministic versions and Sequential, and the
// loop's own code then reads no clock, draws no random number and starts
// no goroutine. Nil fields take the in-process defaults at the cost of one
// nil check.
type Runner struct {
	// Sink receives events; nil discards them.
	Sink Sink
	// Sleep waits between retries; nil uses a real timer honouring ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// Approver decides the calls of Agent.Approve tools and, under
	// DoomAsk, doom loops (approve.go); nil denies the former and makes
	// the latter stop, as when nobody can be asked.
	Approver Approver
	// Jitter returns a random factor in [0,1) for backoff jitter; nil uses
	// math/rand/v2.
	Jitter func() float64
	// OnText, when not nil, receives the assistant text fragments of step
	// requests as they stream in (the loop hands it to Model.Stream; never
	// for compaction requests), with the agent's name and depth.
	OnText func(agent string, depth int, text string)
	// Now is the clock of event times and durations; nil uses time.Now.
	Now func() time.Time
	// Subagent, when set, runs a subagent call elsewhere (a child workflow)
	// instead of as a nested run in this process: it must run s.Agent with
	// RunSubagent (so the same rules and counters apply), deliver the
	// child's events to this Runner's Sink, and return its result. The
	// parent then charges the child's usage and cost to itself and the runs
	// above it in one go.
	Subagent func(ctx context.Context, s SubagentRun) *Result
	// Sequential runs the parallel tool calls of a response one after the
	// other, in call order, on the loop's goroutine; by default they run
	// concurrently, as many at once as the slots allow. A workflow sets it:
	// its code may not start goroutines.
	Sequential bool
	// Slots bound the Toolset calls that run at once, in each run of this
	// Runner and across all of them (and whatever else takes the same
	// slots): a call starts only once it holds a slot. Nil gives each run
	// slots of its own, defaults.MaxParallelTools of them. A subagent call
	// holds no slot: its run's calls take their own.
	Slots *Slots
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
