package temporal

import (
	"context"

	"go.temporal.io/sdk/workflow"

	"github.com/agenthost/agenthost/internal/textcut"
	"github.com/agenthost/agenthost/loop"
)

// decide is the workflow's loop.Approver. A call the run's --approve or
// --yes allows runs at once (By loop.ByFlag); any other question waits,
// durably, for SignalApproval: the wait is part of the workflow's history,
// so a worker that dies leaves it to the next one, and a decision sent
// meanwhile is delivered when the workflow resumes. The call is answered
// QueryWaiting while it waits. A signal naming another call is dropped
// (the waiting call is the only one: questions come one at a time). The
// wait has no time limit; cancelling the run ends it (aborted).
func (st *state) decide(c context.Context, q loop.Question) loop.Decision {
	ctx := unwrap(c)
	if q.Kind == loop.AskApproval {
		if st.opts.ApproveAll {
			return loop.Decision{Verdict: loop.Allow, By: loop.ByFlag, Reason: "--yes"}
		}
		for _, p := range st.opts.Approve {
			if loop.MatchApprovePattern(p, q.Call.Name) {
				return loop.Decision{Verdict: loop.Allow, By: loop.ByFlag, Reason: "--approve " + p}
			}
		}
	}
	st.waiting = &WaitingCall{Kind: q.Kind, Agent: q.Agent, CallID: q.Call.ID, Tool: q.Call.Name, Arguments: q.Call.Arguments, Since: workflow.Now(ctx)}
	defer func() { st.waiting = nil }()
	ch := workflow.GetSignalChannel(ctx, SignalApproval)
	for {
		var sig Approval
		got := false
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(ch, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, &sig)
			got = true
		})
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		if !got {
			return loop.Decision{Verdict: loop.Deny, By: loop.BySignal, Reason: "aborted"}
		}
		if sig.CallID != "" && sig.CallID != q.Call.ID {
			workflow.GetLogger(ctx).Warn("approval signal for a call that does not wait: dropped", "call_id", sig.CallID, "waiting", q.Call.ID)
			continue
		}
		return loop.Decision{Verdict: sig.Verdict, Reason: textcut.Prefix(sig.Reason, maxReason), By: loop.BySignal}
	}
}

// maxReason is the most of a signal's reason kept, in bytes.
const maxReason = 4 << 10
