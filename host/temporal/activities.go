package temporal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/loop"
)

// Agents is what a worker runs: the agents of its config. *host.Host
// provides it through HostAgents; tests provide fakes.
type Agents interface {
	// Agent returns the agent called name ("" for the default agent), or an
	// error saying which agents there are.
	Agent(name string) (*loop.Agent, error)
	// ModelTimeout bounds one model request of the agent called name, and
	// ToolTimeout one call of the tool called name; 0 for the default.
	ModelTimeout(agent string) time.Duration
	ToolTimeout(tool string) time.Duration
}

// Slotted is an Agents whose tool calls share slots with the rest of the
// process (HostAgents: the host's max_parallel_tools): each tool activity
// takes one before it calls the plugin.
type Slotted interface {
	Slots() *loop.Slots
}

// Activities are a worker's activities, over its agents.
type Activities struct {
	Agents Agents
	// Heartbeat is the heartbeat timeout this worker proposes for the runs
	// it describes; 0 means DefaultHeartbeat.
	Heartbeat time.Duration
	// Request fetches a model request sent by number (ModelInput.Seq) from
	// the workflow that made it: a query (NewWorker sets it).
	Request func(ctx context.Context, workflowID, runID string, seq int) (loop.Request, error)
}

// Describe returns the AgentSpec of the agent called name, subagents
// included. An unknown agent fails the run (no retry).
func (a *Activities) Describe(ctx context.Context, name string) (AgentSpec, error) {
	ag, err := a.Agents.Agent(name)
	if err != nil {
		return AgentSpec{}, temporal.NewNonRetryableApplicationError(err.Error(), "agenthost.unknown_agent", nil)
	}
	return *a.describe(ag), nil
}

func (a *Activities) describe(ag *loop.Agent) *AgentSpec {
	s := &AgentSpec{
		Name: ag.Name, Description: ag.Description, ModelID: ag.ModelID, Policy: ag.Policy,
		ModelTimeout: a.Agents.ModelTimeout(ag.Name), Heartbeat: a.Heartbeat,
	}
	if ag.Tools != nil {
		s.Tools = ag.Tools.Tools()
		_, s.Checked = ag.Tools.(loop.ArgumentChecker)
		for _, t := range s.Tools {
			if d := a.Agents.ToolTimeout(t.Name); d > 0 {
				if s.ToolTimeouts == nil {
					s.ToolTimeouts = map[string]time.Duration{}
				}
				s.ToolTimeouts[t.Name] = d
			}
		}
	}
	for _, sub := range ag.Subagents {
		s.Subagents = append(s.Subagents, a.describe(sub))
	}
	return s
}

// agent finds the agent of an activity, which the worker's config may lack
// (workers with different configs): that fails the activity for good.
func (a *Activities) agent(name string) (*loop.Agent, error) {
	ag, err := a.Agents.Agent(name)
	if err != nil || ag == nil {
		msg := fmt.Sprintf("this worker has no agent %q (every worker needs the same agents.hcl)", name)
		return nil, temporal.NewNonRetryableApplicationError(msg, "agenthost.unknown_agent", err)
	}
	return ag, nil
}

// Model sends one request. A provider's failure is returned as data, for
// the loop to retry or not; only a cancelled activity is an error.
func (a *Activities) Model(ctx context.Context, in ModelInput) (ModelOutput, error) {
	ag, err := a.agent(in.Agent)
	if err != nil {
		return ModelOutput{}, err
	}
	if ag.Model == nil {
		return ModelOutput{Failure: fmt.Sprintf("agent %q has no model", in.Agent)}, nil
	}
	ctx, stop := heartbeat(ctx)
	defer stop()
	req := in.Request
	if in.Seq > 0 {
		if a.Request == nil {
			return ModelOutput{}, temporal.NewNonRetryableApplicationError("this worker cannot fetch model requests from workflows", "agenthost.no_query", nil)
		}
		wf := activity.GetInfo(ctx).WorkflowExecution
		if req, err = a.Request(ctx, wf.ID, wf.RunID, in.Seq); err != nil {
			return ModelOutput{}, fmt.Errorf("fetch model request %d from workflow %s: %w", in.Seq, wf.ID, err)
		}
	}
	resp, err := ag.Model.Stream(ctx, req, nil)
	if err == nil {
		return ModelOutput{Response: resp}, nil
	}
	if ctx.Err() != nil {
		return ModelOutput{}, ctx.Err()
	}
	var pe *loop.ProviderError
	if errors.As(err, &pe) {
		return ModelOutput{Error: providerErrorData(pe)}, nil
	}
	return ModelOutput{Failure: err.Error()}, nil
}

// Tool runs one call. Its result is cut to MaxToolResultBytes; a plugin
// failure is returned as data.
func (a *Activities) Tool(ctx context.Context, in ToolInput) (ToolOutput, error) {
	ag, err := a.agent(in.Agent)
	if err != nil {
		return ToolOutput{}, err
	}
	if ag.Tools == nil {
		return ToolOutput{Result: loop.ToolResult{Content: loop.UnknownTool(in.Call.Name, nil), IsError: true}}, nil
	}
	ctx, stop := heartbeat(ctx)
	defer stop()
	if sl, ok := a.Agents.(Slotted); ok && sl.Slots() != nil {
		release, err := a.slot(ctx, sl.Slots(), in.Call.Name)
		if err != nil {
			return ToolOutput{}, err
		}
		defer release()
	}
	// A reuse plugin's instances live as long as one call here: a durable
	// run's calls may land on different workers.
	scope := plugin.NewScope()
	defer scope.Close()
	// Call, not CallChecked: the check the workflow made (ActivityCheck)
	// ran in another activity, possibly on another worker or before a
	// retry, and what it made of the call stays in that process; only the
	// call crosses Temporal. The toolset checks it again here, where it
	// runs: its arguments are decoded and validated once on this worker.
	res, err := ag.Tools.Call(plugin.WithScope(ctx, scope), in.Call)
	if err != nil {
		if ctx.Err() != nil {
			return ToolOutput{}, ctx.Err()
		}
		return ToolOutput{Failure: err.Error()}, nil
	}
	res.Content = capResult(res.Content)
	return ToolOutput{Result: res}, nil
}

// slot takes one of slots for a call of tool. When none is free it waits
// while the activity could still run the call to its own timeout: a slot
// taken later would leave the plugin less time than its limits.timeout
// before the activity's deadline. Past that, the activity fails and
// Temporal retries it (on this worker or another) with infraRetry's
// backoff.
func (a *Activities) slot(ctx context.Context, slots *loop.Slots, tool string) (release func(), err error) {
	if slots.TryAcquire() {
		return slots.Release, nil
	}
	wait := ctx
	if deadline, ok := ctx.Deadline(); ok {
		own := a.Agents.ToolTimeout(tool)
		if own <= 0 {
			own = defaultToolTimeout
		}
		var cancel context.CancelFunc
		wait, cancel = context.WithDeadline(ctx, deadline.Add(-own))
		defer cancel()
	}
	if err := slots.Acquire(wait); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("this worker's %d tool slots (host.max_parallel_tools) stayed taken: the call is tried again", slots.Size())
	}
	return slots.Release, nil
}

// Check checks a call's arguments (loop.ArgumentChecker).
func (a *Activities) Check(ctx context.Context, in ToolInput) (string, error) {
	ag, err := a.agent(in.Agent)
	if err != nil {
		return "", err
	}
	ck, ok := ag.Tools.(loop.ArgumentChecker)
	if !ok {
		return "", nil
	}
	args, msg := loop.ParseArguments(in.Call)
	if msg != "" {
		return msg, nil
	}
	_, msg = ck.Check(in.Call, args)
	return msg, nil
}

// capResult cuts a tool result to MaxToolResultBytes, on a UTF-8 boundary,
// and says so to the model.
func capResult(s string) string {
	if len(s) <= MaxToolResultBytes {
		return s
	}
	cut := MaxToolResultBytes
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[agenthost] output cut: %d of %d bytes kept (a durable run keeps at most %d KiB of a tool result)", cut, len(s), MaxToolResultBytes>>10)
}

// heartbeat records heartbeats for the activity of ctx until stop is
// called, so that a worker that dies is noticed within the heartbeat
// timeout rather than the activity's whole timeout.
func heartbeat(ctx context.Context) (context.Context, func()) {
	info := activity.GetInfo(ctx)
	if info.HeartbeatTimeout <= 0 {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(max(info.HeartbeatTimeout/3, 100*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return ctx, cancel
}
