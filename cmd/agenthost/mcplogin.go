package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/mcpuse"
)

// mcpUsers adds to opts who answers MCP servers: a person at the terminal
// answers their questions (elicitation) and logs in when a server asks
// (also without a terminal when $BROWSER says how to open the login page).
func mcpUsers(opts host.Options, e *env) host.Options {
	if e.stderrTTY || e.getenv("BROWSER") != "" {
		opts.MCPLogin = &mcpuse.BrowserUser{Out: e.stderr, Getenv: e.getenv}
	}
	if e.stdinTTY {
		opts.MCPElicit = &term.Elicitor{Open: func() *term.Asker { return terminalAsker(e) }, Hold: func() func() {
			if e.con != nil {
				return e.con.HoldSpinner()
			}
			return func() {}
		}}
	}
	return opts
}

// mcpLogin logs in to the url mcp_server block anew and keeps the login
// (the authorization code grant), or checks that its client credentials
// get a token.
func mcpLogin(ctx context.Context, cfg *config.Config, block *config.MCPServer, e *env) int {
	opts := hostOptions(e)
	opts.MCPLogin = &mcpuse.BrowserUser{Out: e.stderr, Getenv: e.getenv}
	got, kept, err := host.MCPLogin(ctx, cfg, block, opts)
	var se *host.MCPLoginStoreError
	if errors.As(err, &se) {
		fmt.Fprintf(e.stderr, "agenthost: mcp login %s: %v\n", block.Name, err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: %s\n", errText(e, err.Error()))
		return exitError
	}
	switch {
	case !got:
		fmt.Fprintf(e.stderr, "agenthost: MCP server %s asked for no login: it answered without a token\n", block.Name)
	case kept == "":
		fmt.Fprintf(e.stderr, "agenthost: MCP server %s: the client credentials got a token (it is kept in memory only, and got again at each start)\n", block.Name)
	default:
		fmt.Fprintf(e.stderr, "agenthost: logged in to MCP server %s; the login is kept in %s\n", block.Name, kept)
	}
	return exitOK
}

// mcpLogout removes the login kept for the url mcp_server block.
func mcpLogout(_ context.Context, _ *config.Config, block *config.MCPServer, e *env) int {
	store, err := host.MCPLoginStore(hostOptions(e))
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
		return exitError
	}
	had, err := store.Remove(block.Name, block.URL)
	if err != nil {
		fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
		return exitError
	}
	if !had {
		fmt.Fprintf(e.stderr, "agenthost: no login kept for MCP server %s\n", block.Name)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "agenthost: logged out of MCP server %s (its login is removed; the authorization server may still hold the grant until it expires)\n", block.Name)
	return exitOK
}

// oauthCmd is `agenthost mcp login NAME` or `mcp logout NAME` (name): it
// runs f (mcpLogin, mcpLogout) on the url mcp_server NAME of the config,
// which must log in with OAuth.
func oauthCmd(c *cli, cfgFlag *string, name, short string, f func(context.Context, *config.Config, *config.MCPServer, *env) int) *cobra.Command {
	cmd := &cobra.Command{Use: name + " NAME", Short: short, Example: "  agenthost mcp " + name + " github", ValidArgsFunction: c.complete().MCPServers}
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) != 1 {
			return usageErr(e, "usage: agenthost mcp %s [-c FILE] NAME", cmd.Name())
		}
		path := configPath(*cfgFlag, e)
		cfg, code := loadConfig(path, e)
		if code != exitOK {
			return code
		}
		block, code := mcpServerBlock(cfg, pos[0], path, e)
		if code != exitOK {
			return code
		}
		if block.OAuth == nil {
			why := "a command server"
			if block.URL != "" {
				why = "its headers set Authorization"
			}
			return usageErr(e, "mcp_server %q does not log in with OAuth (%s)", block.Name, why)
		}
		return f(ctx, cfg, block, e)
	})
}

// mcpServerBlock is the mcp_server name of cfg (read from path).
func mcpServerBlock(cfg *config.Config, name, path string, e *env) (*config.MCPServer, int) {
	var names []string
	for _, s := range cfg.MCPServers {
		if s.Name == name {
			return s, exitOK
		}
		names = append(names, s.Name)
	}
	return nil, usageErr(e, "no mcp_server %q in %s; mcp_servers: %s", name, path, strings.Join(names, ", "))
}

// newMCPCallCmd is `agenthost mcp call NAME TOOL [ARGS]`: it calls one tool of
// the mcp_server NAME, as an agent's call would (the same limits, logins,
// questions and roots), and prints its result. ARGS is a JSON object
// ({} by default).
func newMCPCallCmd(c *cli, cfgFlag *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "call NAME TOOL [ARGS-JSON]",
		Short:             "Call one tool of an mcp_server block by hand",
		Example:           `  agenthost mcp call github search_issues '{"query": "bug"}'`,
		ValidArgsFunction: c.complete().MCPServers,
	}
	asJSON := toolResultJSONFlag(cmd.Flags())
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) < 2 || len(pos) > 3 {
			return usageErr(e, "usage: agenthost mcp call [-c FILE] [--json] NAME TOOL [ARGS-JSON]")
		}
		arguments, ok := toolArguments(pos)
		if !ok {
			return usageErr(e, "mcp call: ARGS must be a JSON object, like '{\"path\": \"README.md\"}'")
		}
		path := configPath(*cfgFlag, e)
		h, code := loadHost(ctx, path, mcpUsers(hostOptions(e), e), e)
		if code != exitOK {
			return code
		}
		defer h.Close(context.WithoutCancel(ctx))
		block, code := mcpServerBlock(h.Config, pos[0], path, e)
		if code != exitOK {
			return code
		}
		res, err := h.CallTool(ctx, block.ToolName(pos[1]), arguments, "mcp-call")
		if err != nil {
			fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
			return exitAborted
		}
		printToolResult(e, res, *asJSON)
		if res.IsError {
			return exitError
		}
		return exitOK
	})
}
