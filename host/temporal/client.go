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

// MemoAgent is the memo field of a run's workflow naming its agent.
const MemoAgent = "agent"

// Start starts a run as a workflow with id on task queue q.
func Start(ctx context.Context, c client.Client, q, id string, in RunInput) (client.WorkflowRun, error) {
	// The memo names the agent for listings (runs list).
	opts := client.StartWorkflowOptions{ID: id, TaskQueue: q, Memo: map[string]any{MemoAgent: in.Agent}}
	run, err := c.ExecuteWorkflow(ctx, opts, WorkflowRun, in)
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
	top := &follower{c: c, id: id, runID: runID}
	drain := func() error { return top.poll(bg, emit) }
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

// follower reads the events of one workflow: a run, or a subagent's child
// workflow. While a subagent runs, its events are read from its own
// workflow as they happen; once it ends the parent holds them too (without
// message events), and the ones already handed on are skipped.
type follower struct {
	c         client.Client
	id, runID string
	next      int
	skip      int       // events of an ended child already handed on, to skip
	child     *follower // the subagent running now, followed live
	// delivered counts the events of this workflow's sequence (its own and
	// its subagents') handed on, message events of a child left out.
	delivered int
	isChild   bool
}

// poll hands on every event available now, the running child's included.
func (f *follower) poll(ctx context.Context, emit func(loop.Event)) error {
	for {
		// A query waits for a worker; one that died holds it until
		// Temporal gives the run to another.
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		v, err := f.c.QueryWorkflow(qctx, f.id, f.runID, QueryEvents, f.next)
		cancel()
		if err != nil {
			return err
		}
		var p Page
		if err := v.Get(&p); err != nil {
			return err
		}
		if f.child != nil && len(p.Events) > 0 {
			// The workflow appends nothing while a subagent runs: new
			// events start with the ended subagent's.
			f.skip += f.child.delivered
			f.child = nil
		}
		for _, e := range p.Events {
			switch {
			case f.isChild && e.Type == loop.EventMessage:
			case f.skip > 0:
				f.skip--
			default:
				f.delivered++
				emit(e)
			}
		}
		f.next = max(f.next, p.Next)
		if p.Next < p.Total {
			continue // more to read
		}
		if p.Child != "" && (f.child == nil || f.child.id != p.Child) {
			f.child = &follower{c: f.c, id: p.Child, isChild: true}
		}
		if f.child != nil {
			// An error: not started yet, or ended; asked again next time.
			_ = f.child.poll(ctx, func(e loop.Event) {
				f.delivered++
				emit(e)
			})
		}
		return nil
	}
}
