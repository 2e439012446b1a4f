package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/loop"
)

// Workflow code runs package loop's rules unchanged: a loop.Runner whose
// clock, sleep, jitter and subagents are the workflow's (workflow.Now,
// workflow.Sleep, a generator seeded from the run id, child workflows), a
// loop.Model and a loop.Toolset that run activities. It does no I/O and
// reads no clock; the events the loop emits are kept in memory and answered
// to QueryEvents.

// Timeouts of the activities besides those the agent's config sets.
const (
	describeTimeout = time.Minute
	checkTimeout    = 30 * time.Second
	// activityMargin is added to a model request's or tool call's own
	// timeout: the activity's StartToClose timeout must not cut what the
	// provider's or plugin's timeout would report better.
	activityMargin = 30 * time.Second
	// Defaults when a spec carries no timeout.
	defaultModelTimeout = 10 * time.Minute
	defaultToolTimeout  = 30 * time.Second
	// pageEvents and pageBytes (roughly: the texts of the events) bound
	// one QueryEvents answer, which must stay within Temporal's payload
	// limit; an answer holds one event at least.
	pageEvents = 256
	pageBytes  = 1 << 20
)

// infraRetry retries an activity only for what Temporal itself sees fail:
// a worker that died (heartbeat or start-to-close timeout), a panic, or a
// worker whose tool slots stayed taken too long (Activities.slot).
// Model and tool failures come back as data, and the loop's own retry
// policy decides about them.
var infraRetry = &temporal.RetryPolicy{
	InitialInterval:    time.Second,
	BackoffCoefficient: 2,
	MaximumInterval:    10 * time.Second,
	MaximumAttempts:    5,
}

// RunWorkflow is one agent run (WorkflowRun). It returns the run's result;
// only an agent the workers do not know fails it.
func RunWorkflow(ctx workflow.Context, in RunInput) (*loop.Result, error) {
	st := newState(ctx, in.Options)
	if err := st.query(ctx); err != nil {
		return nil, err
	}
	// A local activity: the worker running the workflow task describes the
	// agent from its own config, one round trip less than an activity.
	actx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{ScheduleToCloseTimeout: describeTimeout, RetryPolicy: infraRetry})
	var spec AgentSpec
	if err := workflow.ExecuteLocalActivity(actx, ActivityDescribe, in.Agent).Get(ctx, &spec); err != nil {
		return nil, err
	}
	if st.opts.Heartbeat <= 0 {
		st.opts.Heartbeat = spec.Heartbeat
	}
	res := st.runner().Run(wctx{ctx}, st.agent(&spec), loop.Input{Prompt: in.Prompt, History: in.History, Session: in.Session})
	return res, nil
}

// SubagentWorkflow is one subagent call (WorkflowSubagent), a child of the
// run that made it: the subagent's own counters, the spend of the runs
// above it carried in.
func SubagentWorkflow(ctx workflow.Context, in SubagentInput) (*SubagentOutput, error) {
	st := newState(ctx, in.Options)
	if err := st.query(ctx); err != nil {
		return nil, err
	}
	res := st.runner().RunSubagent(wctx{ctx}, loop.SubagentRun{Agent: st.agent(&in.Spec), Prompt: in.Prompt, Depth: in.Depth, Above: in.Above})
	out := &SubagentOutput{Result: res}
	for _, e := range st.events {
		if e.Type != loop.EventMessage {
			out.Events = append(out.Events, e)
		}
	}
	return out, nil
}

// state is one workflow's run: its events, its agents' specs and its
// deterministic jitter.
type state struct {
	ctx    workflow.Context
	opts   Options
	events []loop.Event
	done   bool
	specs  map[*loop.Agent]*AgentSpec
	rng    *rand.Rand
	subs   int    // child workflows started
	child  string // the child workflow running now, if any
	// pending are the model requests sent by number, until answered.
	pending map[int]loop.Request
	seq     int
	// waiting is the call waiting for a decision now (approve.go).
	waiting *WaitingCall
}

func newState(ctx workflow.Context, opts Options) *state {
	h := fnv.New64a()
	h.Write([]byte(workflow.GetInfo(ctx).WorkflowExecution.RunID))
	seed := h.Sum64()
	return &state{ctx: ctx, opts: opts, specs: map[*loop.Agent]*AgentSpec{}, rng: rand.New(rand.NewPCG(seed, seed>>1|1)),
		pending: map[int]loop.Request{}}
}

func (st *state) query(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryWaiting, func() (Waiting, error) {
		return Waiting{Call: st.waiting, Child: st.child}, nil
	}); err != nil {
		return err
	}
	err := workflow.SetQueryHandler(ctx, QueryRequest, func(seq int) (loop.Request, error) {
		req, ok := st.pending[seq]
		if !ok {
			return loop.Request{}, fmt.Errorf("no pending model request %d", seq)
		}
		return req, nil
	})
	if err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, QueryEvents, func(from int) (Page, error) {
		from = min(max(from, 0), len(st.events))
		to := from
		for size := 0; to < len(st.events) && to-from < pageEvents && (to == from || size < pageBytes); to++ {
			size += eventSize(st.events[to])
		}
		p := Page{Events: st.events[from:to], Next: to, Total: len(st.events), Done: st.done && to == len(st.events)}
		if to == len(st.events) {
			p.Child = st.child
		}
		return p, nil
	})
}

// eventSize is about the size of e's JSON form: its texts and a margin.
func eventSize(e loop.Event) int {
	n := 256 + len(e.Arguments) + len(e.Message)
	if e.Msg != nil {
		n += len(e.Msg.Content) + len(e.Msg.Reasoning)
		for _, c := range e.Msg.ToolCalls {
			n += len(c.Arguments)
		}
	}
	if e.Result != nil {
		n += len(e.Result.Output)
	}
	return n
}

// runner is the loop.Runner of the workflow.
func (st *state) runner() *loop.Runner {
	ctx := st.ctx
	return &loop.Runner{
		Sink: loop.SinkFunc(func(e loop.Event) {
			st.events = append(st.events, e)
			if e.Type == loop.EventRunEnd && e.Depth == 0 {
				st.done = true
			}
		}),
		Now:    func() time.Time { return workflow.Now(ctx) },
		Sleep:  func(c context.Context, d time.Duration) error { return workflow.Sleep(unwrap(c), d) },
		Jitter: st.rng.Float64,
		// A response's parallel tool calls run one after the other: the
		// workflow's code may not start goroutines.
		Sequential: true,
		Subagent: func(c context.Context, s loop.SubagentRun) *loop.Result {
			return st.subagent(unwrap(c), s)
		},
		Approver: loop.ApproverFunc(st.decide),
	}
}

// subagent runs s as a child workflow and hands its events to the Sink.
func (st *state) subagent(ctx workflow.Context, s loop.SubagentRun) *loop.Result {
	st.subs++
	id := fmt.Sprintf("%s/sub-%d", workflow.GetInfo(ctx).WorkflowExecution.ID, st.subs)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: id, WaitForCancellation: true})
	var out SubagentOutput
	st.child = id
	err := workflow.ExecuteChildWorkflow(cctx, WorkflowSubagent, SubagentInput{
		Spec: *st.specs[s.Agent], Prompt: s.Prompt, Depth: s.Depth, Above: s.Above, Options: st.opts,
	}).Get(ctx, &out)
	st.child = ""
	for _, e := range out.Events {
		st.events = append(st.events, e)
	}
	if err != nil || out.Result == nil {
		reason := loop.StopError
		if ctx.Err() != nil {
			reason = loop.StopAborted
		}
		msg := "subagent workflow returned no result"
		if err != nil {
			msg = "subagent workflow: " + err.Error()
		}
		return &loop.Result{Agent: s.Agent.Name, StopReason: reason, StepsMax: max(s.Agent.StepsMax, 1), Errors: []string{msg}}
	}
	return out.Result
}

// agent builds the loop.Agent of spec (and its subagents) with a model and
// a toolset that run activities.
func (st *state) agent(spec *AgentSpec) *loop.Agent {
	a := &loop.Agent{
		Name: spec.Name, Description: spec.Description, ModelID: spec.ModelID,
		Model:          &model{st: st, spec: spec},
		ValidateOutput: host.OutputValidator(spec.OutputSchema),
		Policy:         spec.Policy,
	}
	if len(spec.Tools) > 0 {
		ts := &toolset{st: st, spec: spec}
		if spec.Checked {
			a.Tools = &checkedToolset{ts}
		} else {
			a.Tools = ts
		}
	}
	for _, s := range spec.Subagents {
		a.Subagents = append(a.Subagents, st.agent(s))
	}
	st.specs[a] = spec
	return a
}

// historyFull says why the next activity must not be scheduled: the
// history is near Temporal's limit.
func historyFull(ctx workflow.Context) error {
	if n := workflow.GetInfo(ctx).GetCurrentHistorySize(); n > MaxHistoryBytes {
		return fmt.Errorf("the run's workflow history is %d MiB, near Temporal's limit; the run stops here (see docs/scale-out.md, Limits)", n>>20)
	}
	return nil
}

// model is the loop.Model of a workflow: each request is one ActivityModel.
type model struct {
	st   *state
	spec *AgentSpec
}

func (m *model) Stream(c context.Context, req loop.Request, _ func(string)) (loop.Response, error) {
	ctx := unwrap(c)
	if err := historyFull(ctx); err != nil {
		return loop.Response{}, err
	}
	in := ModelInput{Agent: m.spec.Name, Request: req}
	b, err := json.Marshal(req)
	switch {
	case err != nil || len(b) > MaxRequestBytes:
		return loop.Response{}, fmt.Errorf("the request is %d KiB, more than the %d KiB a durable run sends to a model activity (see docs/scale-out.md, Limits)", len(b)>>10, MaxRequestBytes>>10)
	case len(b) > InlineRequestBytes:
		m.st.seq++
		in = ModelInput{Agent: m.spec.Name, Seq: m.st.seq}
		m.st.pending[in.Seq] = req
		defer delete(m.st.pending, in.Seq)
	}
	actx := m.st.activity(ctx, m.spec.ModelTimeout, defaultModelTimeout)
	var out ModelOutput
	if err := workflow.ExecuteActivity(actx, ActivityModel, in).Get(ctx, &out); err != nil {
		return loop.Response{}, activityError(err)
	}
	switch {
	case out.Error != nil:
		return loop.Response{}, out.Error.error()
	case out.Failure != "":
		return loop.Response{}, errors.New(out.Failure)
	}
	return out.Response, nil
}

// activity is ctx with the options of a model or tool activity: its
// timeout (def when not set) plus activityMargin to start and close, the
// heartbeat, and retries of infrastructure failures only.
func (st *state) activity(ctx workflow.Context, timeout, def time.Duration) workflow.Context {
	if timeout <= 0 {
		timeout = def
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: timeout + activityMargin,
		HeartbeatTimeout:    st.opts.heartbeat(),
		RetryPolicy:         infraRetry,
	})
}

// toolset is the loop.Toolset of a workflow: each call is one ActivityTool.
type toolset struct {
	st   *state
	spec *AgentSpec
}

func (t *toolset) Tools() []loop.ToolSpec { return t.spec.Tools }

func (t *toolset) Call(c context.Context, call loop.ToolCall) (loop.ToolResult, error) {
	ctx := unwrap(c)
	if err := historyFull(ctx); err != nil {
		return loop.ToolResult{}, err
	}
	actx := t.st.activity(ctx, t.spec.ToolTimeouts[call.Name], defaultToolTimeout)
	var out ToolOutput
	if err := workflow.ExecuteActivity(actx, ActivityTool, ToolInput{Agent: t.spec.Name, Call: call}).Get(ctx, &out); err != nil {
		return loop.ToolResult{}, activityError(err)
	}
	if out.Failure != "" {
		return loop.ToolResult{}, errors.New(out.Failure)
	}
	return out.Result, nil
}

// checkedToolset adds loop.ArgumentChecker: the check is a local activity
// on the worker, which has the plugin's schemas. What the worker's check
// made of the call cannot leave the worker: the CheckedCall carries only
// the call, and the tool activity checks it again where it runs
// (Activities.Tool).
type checkedToolset struct{ *toolset }

func (t *checkedToolset) Check(call loop.ToolCall, _ map[string]any) (loop.CheckedCall, string) {
	if msg := t.check(call); msg != "" {
		return loop.CheckedCall{}, msg
	}
	return loop.CheckedCall{ToolCall: call}, ""
}

// CallChecked runs the call as one ActivityTool, like Call.
func (t *checkedToolset) CallChecked(ctx context.Context, call loop.CheckedCall) (loop.ToolResult, error) {
	return t.Call(ctx, call.ToolCall)
}

func (t *checkedToolset) check(call loop.ToolCall) string {
	ctx := workflow.WithLocalActivityOptions(t.st.ctx, workflow.LocalActivityOptions{ScheduleToCloseTimeout: checkTimeout, RetryPolicy: infraRetry})
	var msg string
	if err := workflow.ExecuteLocalActivity(ctx, ActivityCheck, ToolInput{Agent: t.spec.Name, Call: call}).Get(ctx, &msg); err != nil {
		if t.st.ctx.Err() != nil {
			return "" // aborted: the call is answered as such
		}
		return "arguments could not be checked: " + err.Error()
	}
	return msg
}

// activityError is the error the loop sees for an activity that failed in
// Temporal (not in the model or plugin): its cause, without the SDK's
// wrapping.
func activityError(err error) error {
	var ae *temporal.ActivityError
	if errors.As(err, &ae) && ae.Unwrap() != nil {
		return fmt.Errorf("activity failed: %w", ae.Unwrap())
	}
	return err
}

// wctx lets package loop carry a workflow.Context where it takes a
// context.Context: Err reports the workflow's cancellation and Value its
// values. Done is nil (never ready): workflow code does not select on Go
// channels, and the loop only ever asks Err.
type wctx struct{ workflow.Context }

func (c wctx) Done() <-chan struct{} { return nil }

// wctxKey finds the wctx a context derived from one was made from (the loop
// adds values to the contexts of tool calls).
type wctxKey struct{}

func (c wctx) Value(key any) any {
	if key == (wctxKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// unwrap returns the workflow.Context a wctx carries, or the one a context
// derived from a wctx by context.WithValue carries.
func unwrap(c context.Context) workflow.Context {
	if w, ok := c.(wctx); ok {
		return w.Context
	}
	if w, ok := c.Value(wctxKey{}).(wctx); ok {
		return w.Context
	}
	panic("host/temporal: loop called back with a context that is not the workflow's")
}
