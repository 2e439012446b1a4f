package temporal

import (
	"context"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/internal/textcut"
	"github.com/agenthost/agenthost/loop"
)

// decide is the workflow's loop.Approver. A call the run's --approve or
// --yes allows runs at once (By loop.ByFlag); any other question waits,
// durably, for SignalApproval: the wait is part of the workflow's history,
// so a worker that dies leaves it to the next one, and a decision sent
// meanwhile is delivered when the workflow resumes. The call is answered
// QueryWaiting while it waits. The wait has no time limit; cancelling the
// run ends it (aborted).
//
// A signal decides only the call that waits, and only when it names it
// (Approval.CallID) and arrived while the call waited. Every other signal
// is dropped, with an approval.dropped event saying why: one naming no
// call or another call, and one that arrived while no call waited (during
// a model request, a tool call, an earlier wait), which Temporal keeps in
// the signal channel until someone reads it. The wait begins by draining
// the channel: what it holds then arrived before this call waited (the
// signals of a workflow task are in the channel before the workflow's code
// runs, so one that arrived with the model's answer is drained too); what
// the wait then receives arrived while the call was waiting, which a
// client can only know from QueryWaiting's answer.
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
	ch := workflow.GetSignalChannel(ctx, SignalApproval)
	for {
		var sig Approval
		if !ch.ReceiveAsync(&sig) {
			break
		}
		st.dropped(ctx, q, sig, "it arrived while no call was waiting for it")
	}
	st.waiting = &WaitingCall{Kind: q.Kind, Agent: q.Agent, CallID: q.Call.ID, Tool: q.Call.Name, Arguments: q.Call.Arguments, Since: workflow.Now(ctx)}
	defer func() { st.waiting = nil }()
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
		switch {
		case sig.CallID == "":
			st.dropped(ctx, q, sig, "it names no call (a signal must name the waiting call: call_id)")
			continue
		case sig.CallID != q.Call.ID:
			st.dropped(ctx, q, sig, "it names another call than the one waiting ("+safeText(q.Call.ID, maxSignalID)+")")
			continue
		}
		return loop.Decision{Verdict: sig.Verdict, Reason: textcut.Prefix(sig.Reason, maxReason), By: signalBy(sig.From)}
	}
}

// dropped records a signal that decides nothing: an approval.dropped event
// among the run's events, in the wait of question q, and a warning in the
// worker's log.
func (st *state) dropped(ctx workflow.Context, q loop.Question, sig Approval, why string) {
	id := safeText(sig.CallID, maxSignalID)
	st.events = append(st.events, loop.Event{Type: loop.EventApprovalDropped, Time: workflow.Now(ctx), Agent: q.Agent, Depth: q.Depth,
		CallID: id, Decision: safeText(string(sig.Verdict), maxSignalID), By: signalBy(sig.From), Message: "approval signal dropped: " + why})
	workflow.GetLogger(ctx).Warn("approval signal dropped", "call_id", id, "waiting", q.Call.ID, "why", why)
}

// signalBy is Decision.By for a signal sent by from ("user@host", as the
// sender said; "" when it said nothing).
func signalBy(from string) string {
	if from = safeText(from, maxSignalFrom); from == "" {
		return loop.BySignal
	}
	return loop.BySignal + " from " + from
}

// safeText is s, a text from whoever could send a signal, made fit for an
// event: on one line, cut at n bytes, control characters escaped.
func safeText(s string, n int) string {
	return termtext.Escape(strings.Join(strings.Fields(textcut.Prefix(s, n)), " "))
}

// Bounds of what a signal carries, in bytes: the reason kept, and the
// sender and call id shown.
const (
	maxReason     = 4 << 10
	maxSignalFrom = 128
	maxSignalID   = 128
)
