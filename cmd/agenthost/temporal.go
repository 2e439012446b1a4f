//go:build !notemporal

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/temporal"
	"github.com/agenthost/agenthost/internal/callview"
	"github.com/agenthost/agenthost/internal/shquote"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/loop"
)

// The commands that use a Temporal server (docs/scale-out.md): worker,
// runs, and run --temporal. They are the only part of the CLI that links
// the Temporal SDK; building with -tags notemporal leaves them out
// (notemporal.go).

// tflags are the flags naming a Temporal server.
type tflags struct {
	address, namespace, queue *string
}

func temporalFlags(fs *pflag.FlagSet) tflags {
	return tflags{
		address:   fs.String("temporal", "", "run on the Temporal server at `HOST:PORT` (default: the temporal block's address, for worker and runs)"),
		namespace: fs.String("namespace", "", "Temporal `namespace` (default: the temporal block's, else \"default\")"),
		queue:     fs.String("task-queue", "", "Temporal task `queue` (default: the temporal block's, else \"agenthost\")"),
	}
}

// resolve fills the flags left empty from cfg's temporal block and the
// defaults. It returns a usage error when no address is known.
func (f tflags) resolve(cfg *config.Config, cmd string, e *env) (addr, ns, queue string, code int) {
	addr, ns, queue = *f.address, *f.namespace, *f.queue
	if t := cfg.Temporal; t != nil {
		addr = orElse(addr, t.Address)
		ns = orElse(ns, t.Namespace)
		queue = orElse(queue, t.TaskQueue)
	}
	ns = orElse(ns, temporal.DefaultNamespace)
	queue = orElse(queue, temporal.DefaultTaskQueue)
	if addr == "" {
		return "", "", "", usageErr(e, "%s needs a Temporal server: pass --temporal HOST:PORT or set address in a temporal block of %s", cmd, cfg.File)
	}
	if why := config.CheckAddress(addr); why != "" {
		return "", "", "", usageErr(e, "--temporal %q: %s", addr, why)
	}
	return addr, ns, queue, exitOK
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func dialTemporal(ctx context.Context, addr, ns string, e *env) (client.Client, int) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := temporal.Dial(dctx, addr, ns, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: %v; is the server running? (a local one: temporal server start-dev)\n", err)
		return nil, exitError
	}
	return c, exitOK
}

// newWorkerCmd is `agenthost worker`: it loads the config like run does and
// serves the runs of a task queue until interrupted.
func newWorkerCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Serve durable runs of a Temporal server",
		Long: `Serve the durable runs (run --temporal) of a Temporal task queue until interrupted. Every
worker needs the same agents.hcl and plugin files.`,
		Example:           "  agenthost worker --temporal localhost:7233",
		ValidArgsFunction: noFiles,
	}
	fs := cmd.Flags()
	cfgFlag := configFlag(fs)
	tf := temporalFlags(fs)
	concurrency := fs.Int("concurrency", 0, "most model requests and tool calls run at once (`N`; default: the SDK's, 1000); plugin calls also share host.max_parallel_tools")
	heartbeat := fs.Duration("heartbeat", temporal.DefaultHeartbeat, "heartbeat `timeout` of model requests and tool calls: how soon the work of a worker that died moves to another")
	logLevel := logLevelFlag(fs, "", "log `level`: debug, info, warn, error (default info)")
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) > 0 {
			return usageErr(e, "worker takes no arguments, got %q", strings.Join(pos, " "))
		}
		if *heartbeat < time.Second {
			return usageErr(e, "--heartbeat %s: use at least 1s", *heartbeat)
		}
		if *concurrency < 0 {
			return usageErr(e, "--concurrency %d: use 0 for the default or a positive number", *concurrency)
		}
		if *logLevel == "" {
			*logLevel = "info"
		}
		logger, code := newLogger(*logLevel, e, false)
		if code != exitOK {
			return code
		}
		ctx = logger.WithContext(ctx)
		path := configPath(*cfgFlag, e)
		cfg, code := loadConfig(path, e)
		if code != exitOK {
			return code
		}
		addr, ns, queue, code := tf.resolve(cfg, "worker", e)
		if code != exitOK {
			return code
		}
		h, code := loadHost(ctx, path, hostOptions(e), e)
		if code != exitOK {
			return code
		}
		defer h.Close(context.WithoutCancel(ctx))
		c, code := dialTemporal(ctx, addr, ns, e)
		if code != exitOK {
			return code
		}
		defer c.Close()
		w := temporal.NewWorker(c, queue, temporal.HostAgents{H: h}, *concurrency, *heartbeat)
		if err := w.Start(); err != nil {
			fmt.Fprintf(e.stderr, "agenthost: worker: %v\n", err)
			return exitError
		}
		logger.Info().Str("address", addr).Str("namespace", ns).Str("task_queue", queue).Str("config", path).Msg("worker ready")
		<-ctx.Done()
		w.Stop()
		logger.Info().Msg("worker stopped")
		return exitOK
	})
}

// noWorkerHint is how long run --temporal waits for the run's first event
// before it says that no worker seems to serve the task queue.
const noWorkerHint = 5 * time.Second

// temporalRun is what run --temporal was asked.
type temporalRun struct {
	agent, prompt, session string
	json, events           bool
	approve                *approveFlags
}

// runTemporal is `agenthost run --temporal`: the run is a workflow that the
// workers run; this process starts it, records its events in a new session
// as they come, and prints them as a local run would.
func runTemporal(ctx context.Context, path string, tf tflags, req temporalRun, e *env) int {
	cfg, code := loadConfig(path, e)
	if code != exitOK {
		return code
	}
	addr, ns, queue, code := tf.resolve(cfg, "run --temporal", e)
	if code != exitOK {
		return code
	}
	// The agent and the session are chosen, opened and refused by the
	// same host functions, and worded by the same runError, as a local run.
	name, err := host.ResolveAgent(cfg, req.agent)
	if err != nil {
		return runError(e, err, path)
	}
	c, code := dialTemporal(ctx, addr, ns, e)
	if code != exitOK {
		return code
	}
	defer c.Close()
	sess, history, err := host.OpenSession(cfg, name, req.session)
	if err != nil {
		return runError(e, err, path)
	}
	id := temporal.NewRunID()
	in := temporal.RunInput{Agent: name, Prompt: req.prompt, Session: sess.ID, History: history}
	if req.approve != nil {
		in.Options.Approve, in.Options.ApproveAll = req.approve.patterns, req.approve.yes
	}
	run, err := temporal.Start(ctx, c, queue, id, in)
	if err != nil {
		sess.Close()
		fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
		return exitError
	}
	zerolog.Ctx(ctx).Info().Str("run", id).Str("task_queue", queue).Str("session", sess.ID).Msg("run started on Temporal")
	out := newOutput(e, req.json, req.events)
	started := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(started) })
	go func() {
		select {
		case <-started:
		case <-time.After(noWorkerHint):
			fmt.Fprintf(e.stderr, "agenthost: run %s is waiting for a worker on task queue %q (start one: %s)\n", id, queue,
				errText(e, "agenthost worker --temporal "+shquote.Quote(addr)+" --task-queue "+shquote.Quote(queue)))
		}
	}()
	res, err := temporal.Follow(ctx, c, run.GetID(), run.GetRunID(), func(ev loop.Event) {
		once.Do(func() { close(started) })
		sess.Emit(ev)
		if ev.Type == loop.EventApprovalRequest {
			fmt.Fprintf(e.stderr, "agenthost: run %s waits for a decision about %s (call %s):\n%s",
				id, errText(e, ev.Tool), errText(e, ev.CallID), errText(e, decideCommands(id, ev.CallID)))
		}
		// The text of an answer arrives with its message, not streamed.
		if ev.Type == loop.EventMessage && ev.Depth == 0 && ev.Msg != nil && ev.Msg.Role == loop.RoleAssistant {
			out.text(ev.Agent, 0, ev.Msg.Content)
		}
		out.event(ev)
	})
	if cerr := sess.Close(); cerr != nil && res != nil {
		res.Errors = append(res.Errors, cerr.Error())
	}
	if res == nil {
		fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
		return exitError
	}
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
	}
	out.finish(res)
	return exitCode(res.StopReason)
}

// runsUsage is the error of a runs command given the wrong arguments.
const runsUsage = "usage: agenthost runs --temporal HOST:PORT [list | show ID | cancel ID | approve ID [CALL] [--always] | deny ID [CALL] [--reason TEXT]]"

// newRunsCmd is `agenthost runs`: list (also without a command), show,
// cancel, approve and deny. The flags naming the server are the group's.
func newRunsCmd(c *cli) *cobra.Command {
	g := &cobra.Command{
		Use:   "runs",
		Short: "Manage the durable runs of a Temporal server",
		Long: `Manage the durable runs (run --temporal) of a Temporal server: list them, show one, cancel
one, approve or deny the call one waits on. Without a command, runs lists them. The server is
--temporal, else the address of the config's temporal block.`,
		Example:           "  agenthost runs --temporal localhost:7233\n  agenthost runs approve RUN-ID --always",
		ValidArgsFunction: noFiles,
	}
	pf := g.PersistentFlags()
	cfgFlag := configFlag(pf)
	tf := temporalFlags(pf)
	// do runs f, given between min and max arguments, with a client of
	// the server the flags name (or the config's temporal block).
	do := func(min, max int, f func(context.Context, client.Client, []string, *env) int) func(context.Context, []string, *env) int {
		return func(ctx context.Context, pos []string, e *env) int {
			if len(pos) < min || len(pos) > max {
				return usageErr(e, runsUsage)
			}
			cfg := &config.Config{File: configPath(*cfgFlag, e)}
			if *tf.address == "" || *cfgFlag != "" {
				var code int
				if cfg, code = loadConfig(cfg.File, e); code != exitOK {
					return code
				}
			}
			addr, ns, _, code := tf.resolve(cfg, "runs", e)
			if code != exitOK {
				return code
			}
			cl, code := dialTemporal(ctx, addr, ns, e)
			if code != exitOK {
				return code
			}
			defer cl.Close()
			return f(ctx, cl, pos, e)
		}
	}
	list := func(asJSON *bool) func(context.Context, []string, *env) int {
		return do(0, 0, func(ctx context.Context, cl client.Client, _ []string, e *env) int {
			return runsList(ctx, cl, *asJSON, e)
		})
	}

	listCmd := &cobra.Command{
		Use:               "list",
		Short:             "List the runs, newest first",
		Example:           "  agenthost runs list --temporal localhost:7233 --json",
		ValidArgsFunction: noFiles,
	}
	c.action(listCmd, list(jsonFlag(listCmd.Flags(), "print JSON")))

	show := &cobra.Command{
		Use:               "show ID",
		Short:             "Show a run: its status, its result, the call waiting for a decision",
		Example:           "  agenthost runs show RUN-ID",
		ValidArgsFunction: noFiles,
	}
	showJSON := jsonFlag(show.Flags(), "print JSON")
	c.action(show, do(1, 1, func(ctx context.Context, cl client.Client, pos []string, e *env) int {
		return runsShow(ctx, cl, pos[0], *showJSON, e)
	}))

	cancel := &cobra.Command{
		Use:               "cancel ID",
		Short:             "Cancel a run: it stops with stop_reason aborted",
		Example:           "  agenthost runs cancel RUN-ID",
		ValidArgsFunction: noFiles,
	}
	c.action(cancel, do(1, 1, func(ctx context.Context, cl client.Client, pos []string, e *env) int {
		if err := cl.CancelWorkflow(ctx, pos[0], ""); err != nil {
			return runsErr(e, pos[0], err)
		}
		fmt.Fprintf(e.stdout, "cancel requested: run %s stops with stop_reason aborted\n", pos[0])
		return exitOK
	}))

	// decide is runs approve and runs deny; CALL, when given, must be the
	// id of the call that waits.
	decide := func(a func() temporal.Approval) func(context.Context, []string, *env) int {
		return do(1, 2, func(ctx context.Context, cl client.Client, pos []string, e *env) int {
			call := ""
			if len(pos) == 2 {
				call = pos[1]
			}
			return runsDecide(ctx, cl, pos[0], call, a(), e)
		})
	}
	approve := &cobra.Command{
		Use:               "approve ID [CALL]",
		Short:             "Approve the call a run waits on",
		Example:           "  agenthost runs approve RUN-ID\n  agenthost runs approve RUN-ID --always",
		ValidArgsFunction: noFiles,
	}
	always := approve.Flags().Bool("always", false, "allow every later call of the tool in the agent's run too")
	c.action(approve, decide(func() temporal.Approval {
		if *always {
			return temporal.Approval{Verdict: loop.AllowAlways}
		}
		return temporal.Approval{Verdict: loop.Allow}
	}))
	deny := &cobra.Command{
		Use:               "deny ID [CALL]",
		Short:             "Deny the call a run waits on",
		Example:           "  agenthost runs deny RUN-ID --reason 'not on main'",
		ValidArgsFunction: noFiles,
	}
	reason := deny.Flags().String("reason", "", "the `text` the agent's model reads")
	c.action(deny, decide(func() temporal.Approval {
		return temporal.Approval{Verdict: loop.Deny, Reason: *reason}
	}))

	c.listGroup(g, list(jsonFlag(g.Flags(), "print JSON (as runs list --json)")))
	g.AddCommand(listCmd, show, cancel, approve, deny)
	return g
}

// runInfo is one run as runs list and show print it.
type runInfo struct {
	ID      string       `json:"id"`
	Agent   string       `json:"agent"`
	Status  string       `json:"status"`
	Started time.Time    `json:"started"`
	Closed  *time.Time   `json:"closed,omitempty"`
	Result  *loop.Result `json:"result,omitempty"`
	// Waiting is the call waiting for a decision (runs approve / deny),
	// in the run's workflow or a subagent's.
	Waiting *waitingCall `json:"waiting,omitempty"`
}

// waitingCall is a call waiting for a decision and the workflow it waits
// in (the run's, or a subagent's child workflow).
type waitingCall struct {
	temporal.WaitingCall
	Workflow string `json:"workflow"`
}

// maxChildDepth bounds the child workflows followed to find a waiting call.
const maxChildDepth = 16

// findWaiting returns the call waiting for a decision in run id or the
// subagent workflows it is running, or nil.
func findWaiting(ctx context.Context, c client.Client, id string) (*waitingCall, error) {
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
			return &waitingCall{WaitingCall: *w.Call, Workflow: wf}, nil
		}
		if w.Child == "" {
			return nil, nil
		}
		wf = w.Child
	}
	return nil, nil
}

// runsDecide is runs approve and runs deny: it sends the decision to the
// workflow where the call waits. CALL, when given, must be the waiting
// call's id.
func runsDecide(ctx context.Context, c client.Client, id, call string, a temporal.Approval, e *env) int {
	w, err := findWaiting(ctx, c, id)
	if err != nil {
		return runsErr(e, id, err)
	}
	if w == nil {
		return usageErr(e, "run %s has no call waiting for a decision (see %s)", errText(e, id), errText(e, shquote.Command([]string{"agenthost", "runs", "show"}, id)))
	}
	if call != "" && call != w.CallID {
		return usageErr(e, "run %s: call %s does not wait; the waiting call is %s (%s)", id, strconv.Quote(call), w.CallID, outText(e, w.Tool))
	}
	a.CallID, a.From = w.CallID, signalSender(e)
	if err := c.SignalWorkflow(ctx, w.Workflow, "", temporal.SignalApproval, a); err != nil {
		return runsErr(e, id, err)
	}
	fmt.Fprintf(e.stdout, "%s: call %s (%s) of agent %s in run %s\n", map[loop.Verdict]string{loop.Allow: "approved", loop.AllowAlways: "approved (always)", loop.Deny: "denied"}[a.Verdict],
		w.CallID, outText(e, w.Tool), outText(e, w.Agent), id)
	return exitOK
}

// signalSender is who sends a decision, for the run's record: "user@host"
// of this process (self-reported: see docs/scale-out.md).
func signalSender(e *env) string {
	name := e.getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return orElse(name, "unknown") + "@" + orElse(host, "unknown")
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

func runsList(ctx context.Context, c client.Client, asJSON bool, e *env) int {
	var runs []runInfo
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowType = '" + temporal.WorkflowRun + "'", NextPageToken: token})
		if err != nil {
			fmt.Fprintf(e.stderr, "agenthost: runs list: %v\n", err)
			return exitError
		}
		for _, x := range resp.Executions {
			ri := runInfo{ID: x.Execution.WorkflowId, Agent: memoAgent(x.Memo), Status: status(x.Status), Started: x.StartTime.AsTime()}
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
			runs = []runInfo{}
		}
		b, _ := json.MarshalIndent(runs, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tSTATUS\tSTARTED")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", outText(e, r.ID), outText(e, r.Agent), r.Status, r.Started.Local().Format(time.DateTime))
	}
	tw.Flush()
	return exitOK
}

func runsShow(ctx context.Context, c client.Client, id string, asJSON bool, e *env) int {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return runsErr(e, id, err)
	}
	x := d.WorkflowExecutionInfo
	ri := runInfo{ID: id, Agent: memoAgent(x.Memo), Status: status(x.Status), Started: x.StartTime.AsTime()}
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
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	writeRunInfo(e, ri)
	return exitOK
}

// writeRunInfo prints what runs show knows of a run, for a person: the
// answer and the names are escaped when stdout is a terminal.
func writeRunInfo(e *env, ri runInfo) {
	fmt.Fprintf(e.stdout, "run %s (agent %s): %s, started %s\n", outText(e, ri.ID), outText(e, ri.Agent), ri.Status, ri.Started.Local().Format(time.DateTime))
	if w := ri.Waiting; w != nil {
		what := "approval"
		if w.Kind == loop.AskDoomLoop {
			what = "a doom-loop decision"
		}
		// The call is shown as a terminal question shows it (each
		// argument on lines of its own, escaped), the commands quoted.
		fmt.Fprintf(e.stdout, "waiting since %s for %s: call %s of agent %s: %s, with:\n%s%s",
			w.Since.Local().Format(time.DateTime), what, termtext.Line(w.CallID), termtext.Line(w.Agent), termtext.Line(w.Tool),
			callview.Arguments(w.Arguments, term.ColumnsOf(e.stdout)), outText(e, decideCommands(ri.ID, w.CallID)))
	}
	if r := ri.Result; r != nil {
		fmt.Fprintf(e.stdout, "agent %s: %s after %d of %d steps, %s%s (session %s)\n", r.Agent, r.StopReason, r.Steps, r.StepsMax, toolCalls(r.ToolCalls), spendText(r), r.Session)
		if r.Output != "" {
			// The answer is model text: escaped on a terminal, as run prints it.
			fmt.Fprintf(e.stdout, "\n%s\n", outText(e, strings.TrimRight(r.Output, "\n")))
		}
	}
}

// decideCommands are the commands that approve and deny call of run id,
// each on a line of its own, for a person to paste: quoted, the ids after
// "--" (a call id comes from the model's response: "--always" or
// "c1;touch x" must reach runs approve as one positional argument).
func decideCommands(id, call string) string {
	return "  " + shquote.Command([]string{"agenthost", "runs", "approve"}, id, call) + "\n" +
		"  " + shquote.Command([]string{"agenthost", "runs", "deny", "--reason", "TEXT"}, id, call) + "\n"
}

func runsErr(e *env, id string, err error) int {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return usageErr(e, "no run %s on this server (list them with 'agenthost runs list')", strconv.Quote(id))
	}
	fmt.Fprintf(e.stderr, "agenthost: run %s: %v\n", id, err)
	return exitError
}
