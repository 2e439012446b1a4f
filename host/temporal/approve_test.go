package temporal

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/loop"
)

// signalingModel is a scriptModel that, during request n (from 1), calls
// during[n] before it answers: the test environment's signals sent then
// arrive while the workflow waits for the model activity.
type signalingModel struct {
	*scriptModel
	during map[int]func()
	n      int
}

func (m *signalingModel) Stream(ctx context.Context, req loop.Request, f func(string)) (loop.Response, error) {
	m.n++
	if fn := m.during[m.n]; fn != nil {
		fn()
	}
	return m.scriptModel.Stream(ctx, req, f)
}

// TestApprovalSignalOnlyForWaitingCall: an approval signal decides only the
// call that waits when it arrives and that it names. Signals sent during
// the model request that asks for c1 (one naming no call with "always",
// one naming c1 before it exists) are dropped, and c1 waits; while c1
// waits, signals naming no call or c2 (not yet requested) are dropped;
// the decision records who sent it (bounded, escaped); c2 then waits for
// its own signal.
func TestApprovalSignalOnlyForWaitingCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		during []Approval // sent during the first model request
		want   []string   // approval.dropped messages, in order
	}{
		{"always_without_call", []Approval{{Verdict: loop.AllowAlways, From: "eve@far"}},
			[]string{"arrived while no call was waiting"}},
		{"call_not_yet_requested", []Approval{{CallID: "c1", Verdict: loop.AllowAlways}},
			[]string{"arrived while no call was waiting"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sm := &scriptModel{script: []reply{calls(tc1("c1")), calls(tc1("c2")), text("done")}}
			ts := newTools("read")
			a := agent("main", sm, ts, 5)
			a.Approve = []string{"read"}
			env := newTestEnv()
			a.Model = &signalingModel{scriptModel: sm, during: map[int]func(){1: func() {
				for _, s := range tc.during {
					env.SignalWorkflow(SignalApproval, s)
				}
			}}}
			Register(env, testActivities(env, fakeAgents{"main": a}))
			var waited []string
			decideAt := func(d time.Duration, want string, sigs ...Approval) {
				env.RegisterDelayedCallback(func() {
					v, err := env.QueryWorkflow(QueryWaiting)
					var w Waiting
					if err == nil {
						err = v.Get(&w)
					}
					if err != nil || w.Call == nil {
						t.Errorf("at %s: no call waits (%v); want %s waiting", d, err, want)
						return
					}
					waited = append(waited, w.Call.CallID)
					for _, s := range sigs {
						env.SignalWorkflow(SignalApproval, s)
					}
				}, d)
			}
			decideAt(time.Minute, "c1",
				Approval{Verdict: loop.Allow},
				Approval{CallID: "c2", Verdict: loop.AllowAlways},
				Approval{CallID: "c1", Verdict: loop.Allow, From: "alice@box\x1b]0;x\x07\n" + strings.Repeat("y", 300)})
			decideAt(2*time.Minute, "c2", Approval{CallID: "c2", Verdict: loop.Deny, Reason: "no", From: "bob@box"})
			env.ExecuteWorkflow(WorkflowRun, RunInput{Agent: "main", Prompt: "task"})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var res loop.Result
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if strings.Join(waited, " ") != "c1 c2" {
				t.Errorf("calls found waiting: %q; want c1, then c2", waited)
			}
			if len(ts.calls) != 1 || res.StopReason != loop.StopCompleted {
				t.Errorf("stop %s, tool calls %q; want completed with c1 run and c2 denied", res.StopReason, ts.calls)
			}
			events, _ := pages(t, env)
			var dropped, decisions []string
			for _, e := range events {
				switch e.Type {
				case loop.EventApprovalDropped:
					dropped = append(dropped, e.CallID+" "+e.Decision+" by "+e.By+": "+e.Message)
				case loop.EventApprovalDecision:
					decisions = append(decisions, e.CallID+" "+e.Decision+" by "+e.By)
				}
			}
			wantBy := "signal from alice@box\\x1b]0;x\\x07 " + strings.Repeat("y", 128-len("alice@box\x1b]0;x\x07\n"))
			wantDecisions := []string{"c1 allow by " + wantBy, "c2 deny by signal from bob@box"}
			if strings.Join(decisions, "\n") != strings.Join(wantDecisions, "\n") {
				t.Errorf("decisions:\n%s\nwant:\n%s", strings.Join(decisions, "\n"), strings.Join(wantDecisions, "\n"))
			}
			wantDropped := tc.want
			wantDropped = append(wantDropped, "names no call", "names another call than the one waiting (c1)")
			if len(dropped) != len(wantDropped) {
				t.Fatalf("dropped signals:\n%s\nwant %d: %q", strings.Join(dropped, "\n"), len(wantDropped), wantDropped)
			}
			for i, w := range wantDropped {
				if !strings.Contains(dropped[i], w) {
					t.Errorf("dropped signal %d: %s; want %q", i, dropped[i], w)
				}
			}
		})
	}
}

func tc1(id string) loop.ToolCall { return tc(id, "read", `{"id":"`+id+`"}`) }
