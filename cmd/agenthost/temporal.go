//go:build !notemporal

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/runs"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/temporal"
	"github.com/agenthost/agenthost/loop"
)

// The commands that use a Temporal server (docs/scale-out.MD): worker,
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
		addr = cmp.Or(addr, t.Address)
		ns = cmp.Or(ns, t.Namespace)
		queue = cmp.Or(queue, t.TaskQueue)
	}
	ns = cmp.Or(ns, temporal.DefaultNamespace)
	queue = cmp.Or(queue, temporal.DefaultTaskQueue)
	if addr == "" {
		return "", "", "", usageErr(e, "%s needs a Temporal server: pass --temporal HOST:PORT or set address in a temporal block of %s", cmd, cfg.File)
	}
	if why := config.CheckAddress(addr); why != "" {
		return "", "", "", usageErr(e, "--temporal %q: %s", addr, why)
	}
	return addr, ns, queue, exitOK
}

// server loads the config at path and resolves the server of cmd from
// the flags and its temporal block (resolve).
func (f tflags) server(path, cmd string, e *env) (cfg *config.Config, addr, ns, queue string, code int) {
	if cfg, code = loadConfig(path, e); code != exitOK {
		return nil, "", "", "", code
	}
	addr, ns, queue, code = f.resolve(cfg, cmd, e)
	return cfg, addr, ns, queue, code
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
		_, addr, ns, queue, code := tf.server(path, "worker", e)
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
	cfg, addr, ns, queue, code := tf.server(path, "run --temporal", e)
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
	out.Schema = hasSchema(cfg)
	res, err := runs.Follow(ctx, c, run, addr, queue, sess.Emit, out)
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
	out.Finish(res)
	return exitCode(res.StopReason)
}

// runsOut is where a runs command writes.
func runsOut(e *env) runs.Out { return runs.Out{W: e.stdout, TTY: e.stdoutTTY} }

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
	do := func(min, max int, f func(context.Context, client.Client, []string, *env) error) func(context.Context, []string, *env) int {
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
			return runsCode(e, f(ctx, cl, pos, e))
		}
	}
	list := func(_ *pflag.FlagSet, asJSON *bool) func(context.Context, []string, *env) int {
		return do(0, 0, func(ctx context.Context, cl client.Client, _ []string, e *env) error {
			return runs.List(ctx, cl, *asJSON, runsOut(e))
		})
	}

	c.listGroup(g, "List the runs, newest first", "  agenthost runs list --temporal localhost:7233 --json", list)

	show := plainCmd("show ID", "Show a run: its status, its result, the call waiting for a decision", "  agenthost runs show RUN-ID")
	showJSON := jsonFlag(show.Flags(), "print JSON")
	c.action(show, do(1, 1, func(ctx context.Context, cl client.Client, pos []string, e *env) error {
		return runs.Show(ctx, cl, pos[0], *showJSON, runsOut(e))
	}))

	cancel := plainCmd("cancel ID", "Cancel a run: it stops with stop_reason aborted", "  agenthost runs cancel RUN-ID")
	c.action(cancel, do(1, 1, func(ctx context.Context, cl client.Client, pos []string, e *env) error {
		return runs.Cancel(ctx, cl, pos[0], runsOut(e))
	}))

	// decide is runs approve and runs deny; CALL, when given, must be the
	// id of the call that waits.
	decide := func(a func() temporal.Approval) func(context.Context, []string, *env) int {
		return do(1, 2, func(ctx context.Context, cl client.Client, pos []string, e *env) error {
			call := ""
			if len(pos) == 2 {
				call = pos[1]
			}
			return runs.Decide(ctx, cl, pos[0], call, a(), e.getenv, runsOut(e), e.stderrTTY)
		})
	}
	approve := plainCmd("approve ID [CALL]", "Approve the call a run waits on", "  agenthost runs approve RUN-ID\n  agenthost runs approve RUN-ID --always")
	always := approve.Flags().Bool("always", false, "allow every later call of the tool in the agent's run too")
	c.action(approve, decide(func() temporal.Approval {
		if *always {
			return temporal.Approval{Verdict: loop.AllowAlways}
		}
		return temporal.Approval{Verdict: loop.Allow}
	}))
	deny := plainCmd("deny ID [CALL]", "Deny the call a run waits on", "  agenthost runs deny RUN-ID --reason 'not on main'")
	reason := deny.Flags().String("reason", "", "the `text` the agent's model reads")
	c.action(deny, decide(func() temporal.Approval {
		return temporal.Approval{Verdict: loop.Deny, Reason: *reason}
	}))

	g.AddCommand(show, cancel, approve, deny)
	return g
}

// runsCode prints the error of a runs command and returns its exit code.
func runsCode(e *env, err error) int {
	var u *runs.UsageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &u):
		return usageErr(e, "%s", u.Msg)
	}
	fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
	return exitError
}
