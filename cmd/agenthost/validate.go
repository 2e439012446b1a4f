package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
)

// newValidateCmd is `agenthost validate`: the config loaded with its
// plugins, and a summary of its agents.
func newValidateCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the config and load its plugins, without a model",
		Long: `Check the config: it is parsed, every plugin loaded and compiled, and a summary of the
agents printed. Exit 2 when something is wrong, with where and what to do.`,
		Example: `  agenthost validate
  agenthost validate -c other/agents.hcl --json`,
	}
	fs := cmd.Flags()
	cfgFlag := configFlag(fs)
	asJSON := jsonFlag(fs, "print the summary as JSON")
	return c.noArgs(cmd, func(ctx context.Context, e *env) int {
		path := configPath(*cfgFlag, e)
		h, code := validateHost(ctx, path, hostOptions(e), e)
		if code != exitOK {
			return code
		}
		defer h.Close(ctx)
		cfg := h.Config
		def := defaultAgent(cfg)
		if *asJSON {
			return validateJSON(path, def, h, e)
		}
		fmt.Fprintf(e.stdout, "%s: ok (%d %s, %d %s, %d %s)\n", path,
			len(cfg.Agents), term.Plural(len(cfg.Agents), "agent", "agents"),
			len(h.Plugins), term.Plural(len(h.Plugins), "plugin", "plugins"),
			len(h.Tools()), term.Plural(len(h.Tools()), "tool", "tools"))
		for _, a := range cfg.Agents {
			budget := "unlimited"
			if a.Budget != nil {
				budget = fmt.Sprint(*a.Budget)
			}
			tools := strings.Join(a.Tools, ", ")
			if tools == "" {
				tools = "none"
			}
			limits := ""
			if a.Tokens != nil {
				limits += fmt.Sprintf(", tokens %d", *a.Tokens)
			}
			if c := cfg.CostMax(a); c > 0 {
				limits += fmt.Sprintf(", cost $%s", strconv.FormatFloat(c, 'f', -1, 64))
			}
			line := fmt.Sprintf("  agent %s: model %s, steps %d, budget %s%s, tools: %s", a.Name, a.Model, cfg.StepsMax(a), budget, limits, tools)
			if len(a.Subagents) > 0 {
				line += ", subagents: " + strings.Join(a.Subagents, ", ")
			}
			fmt.Fprintln(e.stdout, line)
		}
		switch {
		case def != "":
			fmt.Fprintf(e.stdout, "  default agent (run without -a): %s\n", def)
		case len(cfg.Agents) > 1:
			fmt.Fprintln(e.stdout, "  no default agent: run and chat need -a AGENT (or set default = true on one)")
		}
		writeMCPServers(e.stdout, h, e)
		return exitOK
	})
}

// defaultAgent is the agent run picks without -a (config.DefaultAgent);
// "" when there is none.
func defaultAgent(cfg *config.Config) string {
	if a, err := cfg.DefaultAgent(); err == nil {
		return a.Name
	}
	return ""
}

// validateJSON is validate --json: the config's summary.
func validateJSON(path, def string, h *host.Host, e *env) int {
	cfg := h.Config
	type agentJSON struct {
		Name      string   `json:"name"`
		Model     string   `json:"model"`
		StepsMax  int      `json:"steps_max"`
		Budget    *int     `json:"budget"` // null when unlimited
		Tokens    *int     `json:"token_limit"`
		CostMax   *float64 `json:"cost_limit"` // USD; null when none
		Tools     []string `json:"tools"`
		Subagents []string `json:"subagents"`
		Default   bool     `json:"default"`
	}
	out := struct {
		Config       string      `json:"config"`
		OK           bool        `json:"ok"`
		DefaultAgent string      `json:"default_agent"` // "" when run needs -a
		Agents       []agentJSON `json:"agents"`
		Plugins      []string    `json:"plugins"`
		Tools        []string    `json:"tools"`
		MCPServers   []string    `json:"mcp_servers"`
	}{Config: path, OK: true, DefaultAgent: def, Agents: []agentJSON{}, Plugins: []string{}, Tools: []string{}, MCPServers: []string{}}
	for _, a := range cfg.Agents {
		aj := agentJSON{Name: a.Name, Model: a.Model, StepsMax: cfg.StepsMax(a), Budget: a.Budget, Tokens: a.Tokens, Tools: append([]string{}, a.Tools...), Subagents: append([]string{}, a.Subagents...), Default: a.Name == def}
		if c := cfg.CostMax(a); c > 0 {
			aj.CostMax = &c
		}
		out.Agents = append(out.Agents, aj)
	}
	for _, p := range h.Plugins {
		out.Plugins = append(out.Plugins, p.Name())
	}
	for _, t := range h.Tools() {
		out.Tools = append(out.Tools, t.Name)
	}
	for _, s := range cfg.MCPServers {
		out.MCPServers = append(out.MCPServers, s.Name)
	}
	return writeJSON(e, out)
}
