package loop

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestApprove: the calls of tools in Agent.Approve wait for the
// Approver, one after the other in call order, after the calls' other
// checks; an allowed call runs, a denied one gets an error result with the
// reason and does not count toward the budget, "always" holds for the rest
// of the run, and every question emits approval.request and
// approval.decision.
func TestApprove(t *testing.T) {
	m := &fakeModel{script: []reply{
		calls("", tc("1", "read_file", `{}`), tc("2", "write_file", `{"p":1}`), tc("3", "gh__push", `{}`), tc("4", "write_file", `not json`)),
		calls("", tc("5", "gh__push", `{"again":1}`), tc("6", "write_file", `{"p":2}`)),
		calls("", tc("7", "read_file", `{"last":1}`)),
		text("done"),
	}}
	ts := newTools("read_file", "write_file", "gh__push")
	a := testAgent(m, ts, 10)
	a.Approve = []string{"write_file", "gh__*"}
	a.Budget = 6
	r, rec, _ := testRunner()
	ask := &asker{answers: []Verdict{Deny, AllowAlways, Allow}}
	r.Approver = ApproverFunc(func(ctx context.Context, q Question) Decision {
		d := ask.Decide(ctx, q)
		if q.Call.ID == "2" {
			d.Reason = "not that file"
		}
		return d
	})
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopCompleted {
		t.Fatalf("stop %s, want completed", res.StopReason)
	}
	// Call 4 has broken arguments: refused before anyone is asked.
	if diff := cmp.Diff([]string{"main 2 write_file", "main 3 gh__*", "main 6 write_file"}, ask.asked); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1", "3", "5", "6", "7"}, ts.calledSorted()); diff != "" {
		t.Errorf("executed calls (-want +got):\n%s", diff)
	}
	// The denied call did not use the budget of 6: five calls ran, and the
	// run completed instead of stopping at the budget.
	if res.ToolCalls != 5 {
		t.Errorf("ToolCalls = %d, want 5", res.ToolCalls)
	}
	for _, tm := range toolMsgs(res.Messages) {
		if tm.ToolCallID == "2" && (!tm.IsError || !strings.Contains(tm.Content, "the user denied it. Reason: not that file")) {
			t.Errorf("denied call's result = %q (error %v)", tm.Content, tm.IsError)
		}
	}
	reqs, decs := rec.of(EventApprovalRequest), rec.of(EventApprovalDecision)
	if len(reqs) != 3 || len(decs) != 3 {
		t.Fatalf("%d approval.request and %d approval.decision events, want 3 each", len(reqs), len(decs))
	}
	if reqs[0].CallID != "2" || reqs[0].Arguments != `{"p":1}` || !strings.Contains(reqs[0].Message, `"write_file"`) {
		t.Errorf("first approval.request = %+v", reqs[0])
	}
	var got []string
	for _, d := range decs {
		got = append(got, d.CallID+" "+d.Decision+" "+d.By+" "+d.Message)
	}
	if diff := cmp.Diff([]string{"2 deny test not that file", "3 always test ", "6 allow test "}, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	// Each request comes before its decision, and both before the call's
	// tool.start.
	order := types(rec.events)
	i := slices.Index(order, EventApprovalRequest)
	if i < 0 || order[i+1] != EventApprovalDecision {
		t.Errorf("events %v: approval.request not followed by approval.decision", order)
	}
}

// TestApproveWithoutApprover: with nobody to ask, the call is refused and
// the run goes on.
func TestApproveWithoutApprover(t *testing.T) {
	m := &fakeModel{script: []reply{calls("", tc("1", "write_file", `{}`)), text("did without")}}
	ts := newTools("write_file")
	a := testAgent(m, ts, 5)
	a.Approve = []string{"*"}
	r, rec, _ := testRunner()
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopCompleted || len(ts.called()) != 0 {
		t.Fatalf("stop %s, calls %v; want completed without running the call", res.StopReason, ts.called())
	}
	tm := toolMsgs(res.Messages)[0]
	if !tm.IsError || !strings.Contains(tm.Content, "needs a person's approval") {
		t.Errorf("result = %q", tm.Content)
	}
	if d := rec.of(EventApprovalDecision); len(d) != 1 || d[0].By != ByNone || d[0].Decision != "deny" {
		t.Errorf("approval.decision = %+v", d)
	}
}

// TestApproveSubagent: a subagent's calls ask the same Approver, naming
// the subagent; a subagent tool can need approval itself.
func TestApproveSubagent(t *testing.T) {
	sm := &fakeModel{script: []reply{calls("", tc("s1", "write_file", `{}`)), text("sub done")}}
	sts := newTools("write_file")
	sub := testAgent(sm, sts, 5)
	sub.Name, sub.Approve = "helper", []string{"write_file"}
	m := &fakeModel{script: []reply{calls("", tc("1", "helper", `{"prompt":"go"}`)), text("done")}}
	a := testAgent(m, nil, 5)
	a.Subagents, a.Approve = []*Agent{sub}, []string{"helper"}
	r, rec, _ := testRunner()
	ask := &asker{answers: []Verdict{Allow, Allow}}
	r.Approver = ask
	res := runChecked(t, context.Background(), r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopCompleted {
		t.Fatalf("stop %s", res.StopReason)
	}
	if diff := cmp.Diff([]string{"main 1 helper", "helper s1 write_file"}, ask.asked); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
	if len(sts.called()) != 1 {
		t.Errorf("subagent calls %v, want s1", sts.called())
	}
	if d := rec.of(EventApprovalRequest); len(d) != 2 || d[1].Depth != 1 || d[1].Agent != "helper" {
		t.Errorf("approval.request events = %+v", d)
	}
}

// TestApproveAbort: an abort while the question waits aborts the run; the
// call does not run.
func TestApproveAbort(t *testing.T) {
	m := &fakeModel{script: []reply{calls("", tc("1", "write_file", `{}`), tc("2", "write_file", `{"b":1}`)), text("never")}}
	ts := newTools("write_file")
	a := testAgent(m, ts, 5)
	a.Approve = []string{"write_file"}
	r, rec, _ := testRunner()
	ctx, cancel := context.WithCancel(context.Background())
	asked := 0
	r.Approver = ApproverFunc(func(ctx context.Context, q Question) Decision {
		asked++
		cancel()
		<-ctx.Done()
		return Decision{Verdict: Allow, By: "test"}
	})
	res := runChecked(t, ctx, r, rec, a, Input{Prompt: "task"})
	if res.StopReason != StopAborted || len(ts.called()) != 0 || asked != 1 {
		t.Fatalf("stop %s, calls %v, asked %d; want aborted, none run, one question", res.StopReason, ts.called(), asked)
	}
	for _, tm := range toolMsgs(res.Messages) {
		if tm.Content != abortedResult {
			t.Errorf("result of %s = %q, want the aborted answer", tm.ToolCallID, tm.Content)
		}
	}
}

func TestApprovePatternError(t *testing.T) {
	for p, ok := range map[string]bool{"write_file": true, "gh__*": true, "[ab]*": true, "": false, "[": false} {
		if err := ApprovePatternError(p); (err == nil) != ok {
			t.Errorf("ApprovePatternError(%q) = %v", p, err)
		}
	}
	if !MatchApprovePattern("gh__*", "gh__push") || MatchApprovePattern("gh__*", "fs__read") {
		t.Error("MatchApprovePattern")
	}
}
