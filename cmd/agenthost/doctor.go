package main

import (
	"context"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/doctor"
)

// newDoctorCmd is `agenthost doctor`: it checks the providers, models and plugins the agents use: see
// package host/doctor. Exit 0 when every check passed, 1 when one failed,
// 2 for a config that does not load.
func newDoctorCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the providers, models and plugins the agents need",
		Long: `Check what the agents (or -a AGENT and its subagents) need before a run: for each model,
its server (dns, tcp, tls), the key, the model, a completion, streaming and a tool call; for
each plugin, that it loads and what it is granted. Exit 1 when a check failed.`,
		Example: "  agenthost doctor\n  agenthost doctor -a main --json",
	}
	fs := cmd.Flags()
	cfgFlag := configFlag(fs)
	agentFlag := agentFlag(fs, "check only what this `agent` (and its subagents) use")
	asJSON := jsonFlag(fs, "print JSON")
	return c.noArgs(cmd, func(ctx context.Context, e *env) int {
		cfg, code := loadConfig(configPath(*cfgFlag, e), e)
		if code != exitOK {
			return code
		}
		var agent *config.Agent
		if *agentFlag != "" {
			if agent = cfg.Agent(*agentFlag); agent == nil {
				return usageErr(e, "no agent %q; agents: %s", *agentFlag, agentNames(cfg))
			}
		}
		rep := doctor.Run(ctx, cfg, agent, hostOptions(e), func(diags hcl.Diagnostics, err error) {
			if len(diags) > 0 {
				writeDiagnostics(e, cfg.Files, diags)
			}
			if err != nil {
				fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
			}
		})
		if *asJSON {
			writeJSON(e, rep)
		} else {
			doctor.WriteTable(e.stdout, rep, func(s string) string { return outText(e, s) })
		}
		if !rep.OK {
			return exitError
		}
		return exitOK
	})
}
