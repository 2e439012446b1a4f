package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

func cmdValidate(ctx context.Context, args []string, e *env) int {
	fs := newFlags("validate", e)
	cfgFlag := fs.String("c", "", "config `file` (default $AGENTHOST_CONFIG or ./agents.hcl)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		return usageErr(e, "validate takes no arguments (got %q)", pos)
	}
	path := configPath(*cfgFlag, e)
	h, code := loadHost(ctx, path, hostOptions(e), e)
	if code != exitOK {
		return code
	}
	defer h.Close(ctx)
	cfg := h.Config
	fmt.Fprintf(e.stdout, "%s: ok (%d %s, %d %s, %d %s)\n", path,
		len(cfg.Agents), plural(len(cfg.Agents), "agent", "agents"),
		len(h.Plugins), plural(len(h.Plugins), "plugin", "plugins"),
		len(h.Tools()), plural(len(h.Tools()), "tool", "tools"))
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
		if a.Default {
			line += " (default)"
		}
		fmt.Fprintln(e.stdout, line)
	}
	writeMCPServers(e.stdout, h, e)
	return exitOK
}
