package temporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agenthost/agenthost/loop"
)

// NewRunID returns a fresh workflow id for a run: "run-" and 16 hex digits.
func NewRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "run-" + hex.EncodeToString(b[:])
}

// Start starts a run as a workflow with id on task queue q.
func Start(ctx context.Context, c client.Client, q, id string, in RunInput) (client.WorkflowRun, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: q}, WorkflowRun, in)
	if err != nil {
		return nil, fmt.Errorf("temporal: start the run: %w", err)
	}
	return run, nil
}

// queryTimeout bounds one query of Follow.
const queryTimeout = 10 * time.Second

// FollowPoll is how often Follow asks a running workflow for new events.
const FollowPoll = 100 * time.Millisecond

// Follow hands the events of workflow id (run runID, "" for the latest) to
// emit, in order, each once, until the run ends, and returns its result.
// When ctx is cancelled (Ctrl-C) the workflow is cancelled, which aborts
// the run (stop reason aborted), and Follow goes on until it has ended.
func Follow(ctx context.Context, c client.Client, id, runID string, emit func(loop.Event)) (*loop.Result, error) {
	bg := context.WithoutCancel(ctx)
	type outcome struct {
		res *loop.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var res loop.Result
		err := c.GetWorkflow(bg, id, runID).Get(bg, &res)
		done <- outcome{&res, err}
	}()
	next := 0
	drain := func() error {
		for {
			// A query waits for a worker; one that died holds it until
			// Temporal gives the run to another.
			qctx, cancel := context.WithTimeout(bg, queryTimeout)
			v, err := c.QueryWorkflow(qctx, id, runID, QueryEvents, next)
			cancel()
			if err != nil {
				return err
			}
			var p Page
			if err := v.Get(&p); err != nil {
				return err
			}
			for _, e := range p.Events {
				emit(e)
			}
			if p.Next <= next || len(p.Events) < pageEvents {
				next = max(next, p.Next)
				return nil
			}
			next = p.Next
		}
	}
	tick := time.NewTicker(FollowPoll)
	defer tick.Stop()
	cancel := ctx.Done()
	for {
		select {
		case <-cancel:
			cancel = nil
			if err := c.CancelWorkflow(bg, id, runID); err != nil {
				return nil, fmt.Errorf("temporal: cancel run %s: %w", id, err)
			}
		case <-tick.C:
			_ = drain() // not ready yet, or a worker restarting: ask again
		case o := <-done:
			if o.err != nil {
				_ = drain()
				return nil, fmt.Errorf("temporal: run %s failed: %w", id, o.err)
			}
			if err := drain(); err != nil {
				return o.res, fmt.Errorf("temporal: run %s ended, but its last events could not be read: %w", id, err)
			}
			return o.res, nil
		}
	}
}
