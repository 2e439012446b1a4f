package temporal

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/loop"
)

// Register registers the workflows and activities of agenthost on r (a
// worker, or a test environment).
func Register(r worker.Registry, acts *Activities) {
	r.RegisterWorkflowWithOptions(RunWorkflow, workflow.RegisterOptions{Name: WorkflowRun})
	r.RegisterWorkflowWithOptions(SubagentWorkflow, workflow.RegisterOptions{Name: WorkflowSubagent})
	r.RegisterActivityWithOptions(acts.Describe, activity.RegisterOptions{Name: ActivityDescribe})
	r.RegisterActivityWithOptions(acts.Model, activity.RegisterOptions{Name: ActivityModel})
	r.RegisterActivityWithOptions(acts.Tool, activity.RegisterOptions{Name: ActivityTool})
	r.RegisterActivityWithOptions(acts.Check, activity.RegisterOptions{Name: ActivityCheck})
}

// Dial connects to the Temporal frontend at addr (HOST:PORT) in namespace
// ns. logger receives the SDK's own logs (nil discards them).
func Dial(ctx context.Context, addr, ns string, logger *slog.Logger) (client.Client, error) {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: addr, Namespace: ns, Logger: log.NewStructuredLogger(logger)})
	if err != nil {
		return nil, fmt.Errorf("temporal: connect to %s (namespace %s): %w", addr, ns, err)
	}
	return c, nil
}

// NewWorker returns a worker on task queue q running agents' runs, at most
// concurrency activities at a time (0: the SDK's default), proposing
// heartbeat as the heartbeat timeout of the runs it starts (0: the default).
func NewWorker(c client.Client, q string, agents Agents, concurrency int, heartbeat time.Duration) worker.Worker {
	opts := worker.Options{}
	if concurrency > 0 {
		opts.MaxConcurrentActivityExecutionSize = concurrency
		opts.MaxConcurrentLocalActivityExecutionSize = concurrency
		opts.MaxConcurrentWorkflowTaskExecutionSize = max(concurrency, 2)
	}
	w := worker.New(c, q, opts)
	Register(w, &Activities{Agents: agents, Heartbeat: heartbeat, Request: QueryRequestFunc(c)})
	return w
}

// QueryRequestFunc fetches pending model requests with queries through c
// (Activities.Request).
func QueryRequestFunc(c client.Client) func(ctx context.Context, workflowID, runID string, seq int) (loop.Request, error) {
	return func(ctx context.Context, workflowID, runID string, seq int) (loop.Request, error) {
		var req loop.Request
		v, err := c.QueryWorkflow(ctx, workflowID, runID, QueryRequest, seq)
		if err == nil {
			err = v.Get(&req)
		}
		return req, err
	}
}

// HostAgents are the agents of a host, for a worker.
type HostAgents struct{ H *host.Host }

func (h HostAgents) Agent(name string) (*loop.Agent, error) {
	if name == "" {
		ca, err := h.H.Config.DefaultAgent()
		if err != nil {
			return nil, err
		}
		name = ca.Name
	}
	if a := h.H.Agent(name); a != nil {
		return a, nil
	}
	return nil, fmt.Errorf("no agent %q in %s", name, h.H.Config.File)
}

func (h HostAgents) ModelTimeout(agent string) time.Duration { return h.H.ModelTimeout(agent) }
func (h HostAgents) Slots() *loop.Slots                      { return h.H.Slots() }
func (h HostAgents) ToolTimeout(tool string) time.Duration   { return h.H.ToolTimeout(tool) }
