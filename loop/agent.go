package loop

import (
	"context"
	"time"

	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/prompts"
)

// StopReason says why a run ended.
type StopReason string

const (
	StopCompleted     StopReason = "completed"
	StopMaxSteps      StopReason = "max_steps"
	StopBudget        StopReason = "budget"
	StopDoomLoop      StopReason = "doom_loop"
	StopTokenLimit    StopReason = "token_limit"
	StopCostLimit     StopReason = "cost_limit"
	StopAborted       StopReason = "aborted"
	StopProviderError StopReason = "provider_error"
	StopError         StopReason = "error"
)

// Prompts are the texts the loop injects into a run (see prompts.Set). A
// blank one is replaced by its default from package prompts.
type Prompts = prompts.Set

// defaultPrompts fill the blank fields of Agent.Prompts.
var defaultPrompts = prompts.Default()

// Agent is an immutable description of one agent, built by the host. Values
// are shared between concurrent runs and must not be mutated.
type Agent struct {
	Name        string
	Description string
	// ModelID is the provider-side model id (a model block's name
	// attribute), for logs and errors.
	ModelID string
	Model   Model
	// ContextWindow is the model's context size in tokens; 0 disables compaction.
	ContextWindow int
	System        string
	// StepsMax is the step cap, already clamped to host.max_steps; 0 (or
	// less) means defaults.MaxSteps, as a config without steps. 1 makes a
	// text-only agent. Results and events report the cap as StepsMax too.
	StepsMax int
	// Budget is the tool-call budget; 0 means unlimited.
	Budget int
	// Tokens is the limit on the run's tokens (prompt + completion of every
	// request, subagents' included); 0 means unlimited.
	Tokens int
	// Cost is the limit on the run's cost in USD, subagents' included; 0
	// means unlimited. It needs Price on this agent and its subagents.
	Cost float64
	// Price is the price of the agent's model; nil when unknown (the run's
	// cost is then unknown too).
	Price *Price
	// Tools are the agent's plugin tools (may be nil: no tools).
	Tools Toolset
	// Subagents are offered as tools named by their Name, taking {"prompt": string}.
	Subagents []*Agent
	// DoomThreshold is the number of identical consecutive calls that make a
	// doom loop; 0 means defaults.DoomThreshold.
	DoomThreshold int
	// DoomAction is DoomWarn, DoomStop or DoomAsk; "" means
	// defaults.DoomAction.
	DoomAction DoomAction
	// FinalStepTools is FinalToolsOmit ("" acts as it) or FinalToolsNone.
	FinalStepTools FinalTools
	Retry          RetryPolicy
	Prompts        Prompts
	// MaxDepth is the subagent nesting limit (host.max_depth); the top-level
	// run is depth 0. 0 means defaults.MaxDepth, as a config without
	// max_depth; NoSubagents (any negative value) allows none, which is
	// what max_depth = 0 in agents.hcl becomes.
	MaxDepth int
	// MaxCallsPerStep is the number of tool calls taken from one response
	// (host.max_calls_per_step); the calls past it get an error result
	// without running. 0 means defaults.MaxCallsPerStep.
	MaxCallsPerStep int
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
	Usage  Usage  `json:"usage"`
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

// Runner runs agents. The zero value is usable: no events, real sleeping, and
// doom-loop "ask" acting as "stop".
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
	// Asker answers doom-loop questions; nil means no terminal.
	Asker Asker
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
