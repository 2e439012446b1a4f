package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/internal/textcut"
)

// loginUser shows the login URL of an MCP server (on stderr, escaped: it
// comes from the server's authorization server) and opens a browser on
// it: the program $BROWSER names, else the desktop's opener when there
// is a desktop.
type loginUser struct {
	out    io.Writer
	getenv func(string) string
	mu     sync.Mutex
}

// maxLoginURL bounds the URL shown.
const maxLoginURL = 8 << 10

func (u *loginUser) OpenLogin(ctx context.Context, server, authURL string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	fmt.Fprintf(u.out, "MCP server %s wants you to log in; open this URL in a browser (agenthost waits for it):\n  %s\n",
		termtext.Escape(server), termtext.Escape(textcut.Clip(authURL, maxLoginURL)))
	argv := browserCommand(u.getenv)
	if argv == nil {
		return nil
	}
	cmd := exec.Command(argv[0], append(argv[1:], authURL)...)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(u.out, "(could not open a browser: %v)\n", err)
		return nil
	}
	go cmd.Wait()
	return nil
}

// browserCommand is the program that opens a URL: $BROWSER (split at
// spaces), else xdg-open on a Unix desktop ($DISPLAY or
// $WAYLAND_DISPLAY), open on macOS, nil otherwise.
func browserCommand(getenv func(string) string) []string {
	if b := strings.Fields(getenv("BROWSER")); len(b) > 0 {
		return b
	}
	switch runtime.GOOS {
	case "darwin":
		return []string{"open"}
	case "windows":
		return []string{"rundll32", "url.dll,FileProtocolHandler"}
	}
	if getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != "" {
		if p, err := exec.LookPath("xdg-open"); err == nil {
			return []string{p}
		}
	}
	return nil
}

// mcpUsers adds to opts who answers MCP servers: a person at the terminal
// answers their questions (elicitation) and logs in when a server asks
// (also without a terminal when $BROWSER says how to open the login page).
func mcpUsers(opts host.Options, e *env) host.Options {
	if e.stderrTTY || e.getenv("BROWSER") != "" {
		opts.MCPLogin = &loginUser{out: e.stderr, getenv: e.getenv}
	}
	if e.stdinTTY {
		opts.MCPElicit = &termElicitor{e: e}
	}
	return opts
}

// newMCPLoginCmd is `agenthost mcp login NAME`: it logs in to the url
// mcp_server NAME anew and keeps the login (the authorization code grant),
// or checks that its client credentials get a token.
func newMCPLoginCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "login NAME",
		Short:             "Log in to an mcp_server with OAuth",
		Example:           "  agenthost mcp login github",
		ValidArgsFunction: c.completeMCPServers,
	}
	cfgFlag := configFlag(cmd.Flags())
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) != 1 {
			return usageErr(e, "usage: agenthost mcp login [-c FILE] NAME")
		}
		cfg, block, code := oauthBlock(configPath(*cfgFlag, e), pos[0], e)
		if code != exitOK {
			return code
		}
		opts := hostOptions(e)
		opts.MCPLogin = &loginUser{out: e.stderr, getenv: e.getenv}
		kept := block.OAuth.Grant != config.GrantClientCredentials
		where := ""
		if kept {
			// Where the login will be kept is checked before anyone logs in
			// for nothing; a login that then cannot be written is an error
			// too (Login's).
			store, err := host.MCPLoginStore(opts)
			if err == nil {
				where, err = store.Path(block.Name, block.URL), store.Check()
			}
			if err != nil {
				fmt.Fprintf(e.stderr, "agenthost: mcp login %s: the login could not be kept: %v\n", block.Name, err)
				return exitUsage
			}
		}
		s := host.MCPServer(cfg, block.Name, opts, zerolog.Nop())
		defer s.Close()
		got, err := s.Login(ctx)
		if err != nil {
			fmt.Fprintf(e.stderr, "agenthost: %s\n", errText(e, err.Error()))
			return exitError
		}
		switch {
		case !got:
			fmt.Fprintf(e.stderr, "agenthost: MCP server %s asked for no login: it answered without a token\n", block.Name)
		case !kept:
			fmt.Fprintf(e.stderr, "agenthost: MCP server %s: the client credentials got a token (it is kept in memory only, and got again at each start)\n", block.Name)
		default:
			fmt.Fprintf(e.stderr, "agenthost: logged in to MCP server %s; the login is kept in %s\n", block.Name, where)
		}
		return exitOK
	})
}

// newMCPLogoutCmd is `agenthost mcp logout NAME`: it removes the login kept
// for the url mcp_server NAME.
func newMCPLogoutCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "logout NAME",
		Short:             "Forget the OAuth tokens of an mcp_server",
		Example:           "  agenthost mcp logout github",
		ValidArgsFunction: c.completeMCPServers,
	}
	cfgFlag := configFlag(cmd.Flags())
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) != 1 {
			return usageErr(e, "usage: agenthost mcp logout [-c FILE] NAME")
		}
		_, block, code := oauthBlock(configPath(*cfgFlag, e), pos[0], e)
		if code != exitOK {
			return code
		}
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
	})
}

// oauthBlock loads the config and finds the url mcp_server name that logs
// in with OAuth.
func oauthBlock(path, name string, e *env) (*config.Config, *config.MCPServer, int) {
	cfg, code := loadConfig(path, e)
	if code != exitOK {
		return nil, nil, code
	}
	var names []string
	for _, s := range cfg.MCPServers {
		if s.Name == name {
			if s.OAuth == nil {
				why := "a command server"
				if s.URL != "" {
					why = "its headers set Authorization"
				}
				return nil, nil, usageErr(e, "mcp_server %q does not log in with OAuth (%s)", name, why)
			}
			return cfg, s, exitOK
		}
		names = append(names, s.Name)
	}
	return nil, nil, usageErr(e, "no mcp_server %q in %s; mcp_servers: %s", name, path, strings.Join(names, ", "))
}

// newMCPCallCmd is `agenthost mcp call NAME TOOL [ARGS]`: it calls one tool of
// the mcp_server NAME, as an agent's call would (the same limits, logins,
// questions and roots), and prints its result. ARGS is a JSON object
// ({} by default).
func newMCPCallCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "call NAME TOOL [ARGS-JSON]",
		Short:             "Call one tool of an mcp_server block by hand",
		Example:           `  agenthost mcp call github search_issues '{"query": "bug"}'`,
		ValidArgsFunction: c.completeMCPServers,
	}
	fs := cmd.Flags()
	cfgFlag := configFlag(fs)
	asJSON := jsonFlag(fs, "print the result as JSON: {\"content\": ..., \"is_error\": ...}")
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) < 2 || len(pos) > 3 {
			return usageErr(e, "usage: agenthost mcp call [-c FILE] [--json] NAME TOOL [ARGS-JSON]")
		}
		arguments := "{}"
		if len(pos) == 3 {
			arguments = pos[2]
			var obj map[string]any
			if json.Unmarshal([]byte(arguments), &obj) != nil {
				return usageErr(e, "mcp call: ARGS must be a JSON object, like '{\"path\": \"README.md\"}'")
			}
		}
		path := configPath(*cfgFlag, e)
		h, code := loadHost(ctx, path, mcpUsers(hostOptions(e), e), e)
		if code != exitOK {
			return code
		}
		defer h.Close(context.WithoutCancel(ctx))
		var block *config.MCPServer
		var names []string
		for _, s := range h.Config.MCPServers {
			if s.Name == pos[0] {
				block = s
			}
			names = append(names, s.Name)
		}
		if block == nil {
			return usageErr(e, "no mcp_server %q in %s; mcp_servers: %s", pos[0], path, strings.Join(names, ", "))
		}
		res, err := h.CallTool(ctx, block.ToolName(pos[1]), arguments, "mcp-call")
		if err != nil {
			fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
			return exitAborted
		}
		if *asJSON {
			json.NewEncoder(e.stdout).Encode(map[string]any{"content": res.Content, "is_error": res.IsError})
		} else {
			fmt.Fprintln(e.stdout, outText(e, res.Content))
		}
		if res.IsError {
			return exitError
		}
		return exitOK
	})
}
