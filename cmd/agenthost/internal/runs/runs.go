// Package runs is what `agenthost runs` does with the durable runs of a
// Temporal server (docs/scale-out.md): it lists them, shows one with the
// call it waits on, cancels one, and sends a decision about a waiting call;
// it writes what it finds for a person or as JSON. The command line parses
// the flags, dials the server and turns the errors into exit codes.
package runs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host/temporal"
	"github.com/agenthost/agenthost/internal/callview"
	"github.com/agenthost/agenthost/internal/shquote"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/loop"
)

// Out is where a command writes: stdout, and whether it is a terminal
// (model text and names are then escaped).
type Out struct {
	W   io.Writer
	TTY bool
}

// text is s for w: escaped on a terminal.
func (o Out) text(s string) string {
	if o.TTY {
		return termtext.Escape(s)
	}
	return s
}

// UsageError is an error of the person's request (exit 2), not of the
// server.
type UsageError struct{ Msg string }

func (u *UsageError) Error() string { return u.Msg }

func usage(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// Info is one run as runs list and show print it.
type Info struct {
	ID      string       `json:"id"`
	Agent   string       `json:"agent"`
	Status  string       `json:"status"`
	Started time.Time    `json:"started"`
	Closed  *time.Time   `json:"closed,omitempty"`
	Result  *loop.Result `json:"result,omitempty"`
	// Waiting is the call waiting for a decision (runs approve / deny),
	// in the run's workflow or a subagent's.
	Waiting *Waiting `json:"waiting,omitempty"`
}

// Waiting is a call waiting for a decision and the workflow it waits
// in (the run's, or a subagent's child workflow).
type Waiting struct {
	temporal.WaitingCall
	Workflow string `json:"workflow"`
}

// maxChildDepth bounds the child workflows followed to find a waiting call.
const maxChildDepth = 16

// findWaiting returns the call waiting for a decision in run id or the
// subagent workflows it is running, or nil.
func findWaiting(ctx context.Context, c client.Client, id string) (*Waiting, error) {
	wf := id
	for range maxChildDepth {
		v, err := c.QueryWorkflow(ctx, wf, "", temporal.QueryWaiting)
		if err != nil {
			return nil, err
		}
		var w temporal.Waiting
		if err := v.Get(&w); err != nil {
			return nil, err
		}
		if w.Call != nil {
			return &Waiting{WaitingCall: *w.Call, Workflow: wf}, nil
		}
		if w.Child == "" {
			return nil, nil
		}
		wf = w.Child
	}
	return nil, nil
}

// Cancel is runs cancel.
func Cancel(ctx context.Context, c client.Client, id string, out Out) error {
	if err := c.CancelWorkflow(ctx, id, ""); err != nil {
		return runErr(id, err)
	}
	fmt.Fprintf(out.W, "cancel requested: run %s stops with stop_reason aborted\n", id)
	return nil
}

// Decide is runs approve and runs deny: it sends the decision to the
// workflow where the call waits. call, when given, must be the waiting
// call's id. errTTY tells whether stderr, where a usage error goes, is a
// terminal.
func Decide(ctx context.Context, c client.Client, id, call string, a temporal.Approval, getenv func(string) string, out Out, errTTY bool) error {
	w, err := findWaiting(ctx, c, id)
	if err != nil {
		return runErr(id, err)
	}
	if w == nil {
		e := Out{TTY: errTTY}
		return usage("run %s has no call waiting for a decision (see %s)", e.text(id), e.text(shquote.Command([]string{"agenthost", "runs", "show"}, id)))
	}
	if call != "" && call != w.CallID {
		return usage("run %s: call %s does not wait; the waiting call is %s (%s)", id, strconv.Quote(call), w.CallID, out.text(w.Tool))
	}
	a.CallID, a.From = w.CallID, sender(getenv)
	if err := c.SignalWorkflow(ctx, w.Workflow, "", temporal.SignalApproval, a); err != nil {
		return runErr(id, err)
	}
	fmt.Fprintf(out.W, "%s: call %s (%s) of agent %s in run %s\n", map[loop.Verdict]string{loop.Allow: "approved", loop.AllowAlways: "approved (always)", loop.Deny: "denied"}[a.Verdict],
		w.CallID, out.text(w.Tool), out.text(w.Agent), id)
	return nil
}

// sender is who sends a decision, for the run's record: "user@host"
// of this process (self-reported: see docs/scale-out.md).
func sender(getenv func(string) string) string {
	name := getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return cmp.Or(name, "unknown") + "@" + cmp.Or(host, "unknown")
}

// memoAgent reads the agent a run's memo names ("" without one).
func memoAgent(m *commonpb.Memo) string {
	var name string
	if p := m.GetFields()[temporal.MemoAgent]; p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &name)
	}
	return name
}

func status(s enumspb.WorkflowExecutionStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

// List is runs list: the runs of the server, newest first, as a table or
// as JSON.
func List(ctx context.Context, c client.Client, asJSON bool, out Out) error {
	var runs []Info
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowType = '" + temporal.WorkflowRun + "'", NextPageToken: token})
		if err != nil {
			return fmt.Errorf("runs list: %w", err)
		}
		for _, x := range resp.Executions {
			ri := Info{ID: x.Execution.WorkflowId, Agent: memoAgent(x.Memo), Status: status(x.Status), Started: x.StartTime.AsTime()}
			if x.CloseTime != nil {
				t := x.CloseTime.AsTime()
				ri.Closed = &t
			}
			runs = append(runs, ri)
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	if asJSON {
		if runs == nil {
			runs = []Info{}
		}
		b, _ := json.MarshalIndent(runs, "", "  ")
		fmt.Fprintf(out.W, "%s\n", b)
		return nil
	}
	tw := tabwriter.NewWriter(out.W, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tSTATUS\tSTARTED")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", out.text(r.ID), out.text(r.Agent), r.Status, r.Started.Local().Format(time.DateTime))
	}
	tw.Flush()
	return nil
}

// Show is runs show: a run's status, its result once it has one, the call
// it waits on while it runs.
func Show(ctx context.Context, c client.Client, id string, asJSON bool, out Out) error {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return runErr(id, err)
	}
	x := d.WorkflowExecutionInfo
	ri := Info{ID: id, Agent: memoAgent(x.Memo), Status: status(x.Status), Started: x.StartTime.AsTime()}
	if x.CloseTime != nil {
		t := x.CloseTime.AsTime()
		ri.Closed = &t
	}
	if x.Status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		var res loop.Result
		if err := c.GetWorkflow(ctx, id, "").Get(ctx, &res); err == nil {
			ri.Result = &res
		}
	}
	if x.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		if w, err := findWaiting(ctx, c, id); err == nil {
			ri.Waiting = w
		}
	}
	if asJSON {
		b, _ := json.MarshalIndent(ri, "", "  ")
		fmt.Fprintf(out.W, "%s\n", b)
		return nil
	}
	WriteInfo(out, ri)
	return nil
}

// WriteInfo prints what runs show knows of a run, for a person: the
// answer and the names are escaped when stdout is a terminal.
func WriteInfo(out Out, ri Info) {
	fmt.Fprintf(out.W, "run %s (agent %s): %s, started %s\n", out.text(ri.ID), out.text(ri.Agent), ri.Status, ri.Started.Local().Format(time.DateTime))
	if w := ri.Waiting; w != nil {
		what := "approval"
		if w.Kind == loop.AskDoomLoop {
			what = "a doom-loop decision"
		}
		// The call is shown as a terminal question shows it (each
		// argument on lines of its own, escaped), the commands quoted.
		fmt.Fprintf(out.W, "waiting since %s for %s: call %s of agent %s: %s, with:\n%s%s",
			w.Since.Local().Format(time.DateTime), what, termtext.Line(w.CallID), termtext.Line(w.Agent), termtext.Line(w.Tool),
			callview.Arguments(w.Arguments, term.ColumnsOf(out.W)), out.text(DecideCommands(ri.ID, w.CallID)))
	}
	if r := ri.Result; r != nil {
		fmt.Fprintf(out.W, "agent %s: %s after %d of %d steps, %s%s (session %s)\n", r.Agent, r.StopReason, r.Steps, r.StepsMax, term.ToolCalls(r.ToolCalls), term.SpendText(r), r.Session)
		if r.Output != "" {
			// The answer is model text: escaped on a terminal, as run prints it.
			fmt.Fprintf(out.W, "\n%s\n", out.text(strings.TrimRight(r.Output, "\n")))
		}
	}
}

// DecideCommands are the commands that approve and deny call of run id,
// each on a line of its own, for a person to paste: quoted, the ids after
// "--" (a call id comes from the model's response: "--always" or
// "c1;touch x" must reach runs approve as one positional argument).
func DecideCommands(id, call string) string {
	return "  " + shquote.Command([]string{"agenthost", "runs", "approve"}, id, call) + "\n" +
		"  " + shquote.Command([]string{"agenthost", "runs", "deny", "--reason", "TEXT"}, id, call) + "\n"
}

// runErr is the error of a request about run id: a usage error when the
// server has no such run.
func runErr(id string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return usage("no run %s on this server (list them with 'agenthost runs list')", strconv.Quote(id))
	}
	return fmt.Errorf("run %s: %w", id, err)
}

// noWorkerHint is how long run --temporal waits for the run's first event
// before it says that no worker seems to serve the task queue.
const noWorkerHint = 5 * time.Second

// Follow is run --temporal once run is started on queue of the server at
// addr: every event of the run goes to emit (its session) and is shown on
// out, as a local run's; a call waiting for a decision is announced on
// stderr with the commands that decide it, and when no event came within
// noWorkerHint, that no worker seems to serve the task queue.
func Follow(ctx context.Context, c client.Client, run client.WorkflowRun, addr, queue string, emit func(loop.Event), out *term.Output) (*loop.Result, error) {
	id, stderr := run.GetID(), Out{W: out.Con.Err(), TTY: out.ErrTTY}
	started := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(started) })
	go func() {
		select {
		case <-started:
		case <-time.After(noWorkerHint):
			fmt.Fprintf(stderr.W, "agenthost: run %s is waiting for a worker on task queue %q (start one: %s)\n", id, queue,
				stderr.text("agenthost worker --temporal "+shquote.Quote(addr)+" --task-queue "+shquote.Quote(queue)))
		}
	}()
	return temporal.Follow(ctx, c, id, run.GetRunID(), func(ev loop.Event) {
		once.Do(func() { close(started) })
		emit(ev)
		if ev.Type == loop.EventApprovalRequest {
			fmt.Fprintf(stderr.W, "agenthost: run %s waits for a decision about %s (call %s):\n%s",
				id, stderr.text(ev.Tool), stderr.text(ev.CallID), stderr.text(DecideCommands(id, ev.CallID)))
		}
		// The text of an answer arrives with its message, not streamed.
		if ev.Type == loop.EventMessage && ev.Depth == 0 && ev.Msg != nil && ev.Msg.Role == loop.RoleAssistant {
			out.Text(ev.Agent, 0, ev.Msg.Content)
		}
		out.Event(ev)
	})
}
