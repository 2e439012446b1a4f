package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/hcl/v2"

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

// cmdDoctor checks the providers, models and plugins the agents use: see
// package host/doctor. Exit 0 when every check passed, 1 when one failed,
// 2 for a config that does not load.
func cmdDoctor(ctx context.Context, args []string, e *env) int {
	fs := newFlags("doctor", e)
	cfgFlag := fs.String("c", "", "config `file`")
	agentFlag := fs.String("a", "", "check only what this `agent` (and its subagents) use")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		return usageErr(e, "doctor takes no arguments (got %q)", pos)
	}
	cfg, code := loadConfig(configPath(*cfgFlag, e), e)
	if code != exitOK {
		return code
	}
	agents := cfg.Agents
	if *agentFlag != "" {
		a := cfg.Agent(*agentFlag)
		if a == nil {
			return usageErr(e, "no agent %q; agents: %s", *agentFlag, agentNames(cfg))
		}
		agents = withSubagents(cfg, a, nil)
	}
	rep := doctorReport{OK: true, Config: cfg.File, Agents: []string{}, Models: []doctor.Model{}, Plugins: []doctor.Plugin{}}
	var models []*config.Model
	var tools []string
	for _, a := range agents {
		rep.Agents = append(rep.Agents, a.Name)
		tools = append(tools, a.Tools...)
		for _, m := range cfg.Models {
			if m.Name == a.Model && !containsModel(models, m) {
				models = append(models, m)
			}
		}
	}

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
	var plugins []string
	for _, p := range cfg.Plugins {
		if *agentFlag == "" || pluginUsed(h, diags, p, tools) {
			plugins = append(plugins, p.Name)
		}
	}
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

func withSubagents(cfg *config.Config, a *config.Agent, seen []*config.Agent) []*config.Agent {
	for _, s := range seen {
		if s == a {
			return seen
		}
	}
	seen = append(seen, a)
	for _, s := range a.Subagents {
		if sa := cfg.Agent(s); sa != nil {
			seen = withSubagents(cfg, sa, seen)
		}
	}
	return seen
}

func containsModel(ms []*config.Model, m *config.Model) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// pluginUsed reports whether one of tools is p's (by its names after
// tool_prefix and rename). When the host did not load, only the tool
// blocks of wasi_cli and Extism plugins are known, and a plugin that
// failed to load counts as used, so that its failure is reported.
func pluginUsed(h *host.Host, diags hcl.Diagnostics, p *config.Plugin, tools []string) bool {
	var names []string
	if h != nil {
		for _, t := range h.Tools() {
			if t.Plugin == p.Name {
				names = append(names, t.Name)
			}
		}
	} else {
		for _, t := range p.Tools {
			names = append(names, p.ToolName(t.Name))
		}
		for _, d := range diags {
			if d.Severity == hcl.DiagError && d.Subject != nil && *d.Subject == p.DefRange {
				return true
			}
		}
	}
	for _, n := range names {
		for _, t := range tools {
			if n == t {
				return true
			}
		}
	}
	return false
}
