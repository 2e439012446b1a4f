package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/doctor"
)

// doctorReport is what `agenthost doctor --json` prints.
type doctorReport struct {
	Config  string          `json:"config"`
	Agents  []string        `json:"agents"`
	OK      bool            `json:"ok"`
	Models  []doctor.Model  `json:"models"`
	Plugins []doctor.Plugin `json:"plugins"`
	// MCPServers are the logins of the url mcp_servers that log in with
	// OAuth.
	MCPServers []doctor.MCPServer `json:"mcp_servers"`
}

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
		Example:           "  agenthost doctor\n  agenthost doctor -a main --json",
		ValidArgsFunction: noFiles,
	}
	fs := cmd.Flags()
	cfgFlag := configFlag(fs)
	agentFlag := agentFlag(fs, "check only what this `agent` (and its subagents) use")
	asJSON := jsonFlag(fs, "print JSON")
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) > 0 {
			return usageErr(e, "doctor takes no arguments (got %q)", pos)
		}
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
		sel := doctor.Select(cfg, agent)
		rep := doctorReport{OK: true, Config: cfg.File, Agents: []string{}, Models: []doctor.Model{}, Plugins: []doctor.Plugin{}}
		for _, a := range sel.Agents {
			rep.Agents = append(rep.Agents, a.Name)
		}
		models := sel.Models

		// The models are checked at once, concurrently with the plugins' load.
		rep.Models = make([]doctor.Model, len(models))
		var wg sync.WaitGroup
		for i, m := range models {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rep.Models[i] = doctor.CheckModel(ctx, cfg.Provider(m.Provider), m)
			}()
		}
		h, diags, err := host.New(ctx, cfg, hostOptions(e))
		if len(diags) > 0 {
			writeDiagnostics(e, cfg.Files, diags)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
		}
		plugins := sel.Plugins(cfg, h, diags)
		if ps := doctor.CheckPlugins(cfg, h, diags, plugins); ps != nil {
			rep.Plugins = ps
		}
		if h != nil {
			h.Close(ctx)
		}
		wg.Wait()
		store, serr := host.MCPLoginStore(hostOptions(e))
		if serr != nil {
			store = nil
		}
		rep.MCPServers = doctor.CheckMCPLogins(cfg, store, time.Now())
		if rep.MCPServers == nil {
			rep.MCPServers = []doctor.MCPServer{}
		}
		for _, s := range rep.MCPServers {
			rep.OK = rep.OK && s.OK()
		}

		rep.OK = rep.OK && err == nil && !diags.HasErrors()
		for _, m := range rep.Models {
			rep.OK = rep.OK && m.OK()
		}
		for _, p := range rep.Plugins {
			rep.OK = rep.OK && p.OK()
		}
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rep)
		} else {
			writeDoctorTable(e.stdout, rep, func(s string) string { return outText(e, s) })
		}
		if !rep.OK {
			return exitError
		}
		return exitOK
	})
}

// writeDoctorTable prints the report as a table: a row per check, its
// hint on the next line. esc escapes text that came from a server or a
// plugin.
func writeDoctorTable(w io.Writer, rep doctorReport, esc func(string) string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHAT\tCHECK\tSTATUS\tTIME\tDETAIL")
	row := func(what string, c doctor.Check) {
		t := ""
		if c.MS > 0 {
			t = fmt.Sprintf("%.0fms", c.MS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", what, c.Name, c.Status, t, esc(c.Detail))
		if c.Hint != "" {
			fmt.Fprintf(tw, "\t\t\t\tfix: %s\n", esc(c.Hint))
		}
	}
	for _, m := range rep.Models {
		what := fmt.Sprintf("model %s (%s)", m.Model, m.BaseURL)
		for _, c := range m.Checks {
			row(what, c)
		}
	}
	for _, p := range rep.Plugins {
		for _, c := range p.Checks {
			row("plugin "+p.Plugin, c)
		}
	}
	for _, s := range rep.MCPServers {
		for _, c := range s.Checks {
			row(fmt.Sprintf("mcp_server %s (%s)", s.Server, s.URL), c)
		}
	}
	tw.Flush()
	if rep.OK {
		fmt.Fprintln(w, "all checks passed")
	} else {
		fmt.Fprintln(w, "some checks failed")
	}
}
