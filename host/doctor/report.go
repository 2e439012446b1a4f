package doctor

import (
	"context"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
)

// Report is what `agenthost doctor --json` prints.
type Report struct {
	Config  string   `json:"config"`
	Agents  []string `json:"agents"`
	OK      bool     `json:"ok"`
	Models  []Model  `json:"models"`
	Plugins []Plugin `json:"plugins"`
	// MCPServers are the logins of the url mcp_servers that log in with
	// OAuth.
	MCPServers []MCPServer `json:"mcp_servers"`
}

// Run checks what the agents of cfg use (agent and its subagents only,
// when agent is not nil): the models, concurrently with the plugins' load
// (a host built with opts), and the MCP logins. loaded, when not nil, is
// given the diagnostics and error of the host's load as soon as the load
// ends, so a command prints them while the model checks go on. It returns
// the report.
func Run(ctx context.Context, cfg *config.Config, agent *config.Agent, opts host.Options, loaded func(hcl.Diagnostics, error)) Report {
	sel := Select(cfg, agent)
	rep := Report{OK: true, Config: cfg.File, Agents: []string{}, Models: make([]Model, len(sel.Models)), Plugins: []Plugin{}}
	for _, a := range sel.Agents {
		rep.Agents = append(rep.Agents, a.Name)
	}
	var wg sync.WaitGroup
	for i, m := range sel.Models {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep.Models[i] = CheckModel(ctx, cfg.Provider(m.Provider), m)
		}()
	}
	h, diags, err := host.New(ctx, cfg, opts)
	if loaded != nil {
		loaded(diags, err)
	}
	if ps := CheckPlugins(cfg, h, diags, sel.Plugins(cfg, h, diags)); ps != nil {
		rep.Plugins = ps
	}
	if h != nil {
		h.Close(ctx)
	}
	wg.Wait()
	store, serr := host.MCPLoginStore(opts)
	if serr != nil {
		store = nil
	}
	rep.MCPServers = CheckMCPLogins(cfg, store, time.Now())
	if rep.MCPServers == nil {
		rep.MCPServers = []MCPServer{}
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
	return rep
}

// WriteTable prints the report as a table: a row per check, its hint on
// the next line. esc escapes text that came from a server or a plugin.
func WriteTable(w io.Writer, rep Report, esc func(string) string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHAT\tCHECK\tSTATUS\tTIME\tDETAIL")
	row := func(what string, c Check) {
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
